#!/usr/bin/env python3
"""The mutation suite: plant one catalogued bug at a time and run the checks a user's CI runs.

Each mutant of tools/mutants.json is (file, original snippet, replacement, description, folder,
fast). The snippet must occur exactly once in the file; otherwise the mutant is STALE and the run
fails, naming it (a refactor moved the code: update the catalogue).

Mutants never touch the source tree or the build tree. The mutated file is written to an overlay
folder; every object file of the existing build whose dependencies include it (the file itself or,
for a header, every includer) is recompiled with the build's own command (`ninja -t commands`) and
the overlay first on the include path; the libraries and programs that contain those objects are
relinked into the overlay; the checks then run with the overlay programs substituted for the
build's. So a mutant costs a few compiles and links, and the build directory stays as it was.
A program whose companions (the files beside it: gscheck's worker, Python host and helpers)
hold the mutant runs as a copy in a mirrored folder. Python files are planted through the header
CMake generates from them, the build tree's copies of them, or their path on a check's command
line. Only commands that run the mutant (name a program or file holding it) are run.

Checks run in the catalogue's kill-fast order for the mutant's folder and stop at the first that
fails (the mutant is KILLED by it). A mutant no check kills SURVIVES and fails the run, unless the
catalogue records it as equivalent with a reason. A check that kills a mutant is run once on the
unmutated build too (the baseline); if it fails there the run stops: a check that fails anyway
proves nothing.

Usage: tools/mutate.py --build DIR [--source DIR] [--catalogue FILE] [--fast|--memory] [--only ID,...]
                       [--json FILE] [--jobs N] [--lock FILE] [--work DIR] [--list] [--verify]
Exit status: 0 every non-equivalent mutant killed; 1 a survivor, a stale mutant, a mutant that
does not compile or a failing baseline; 2 bad command line or catalogue; 77 not a Ninja build.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class CatalogueError(Exception):
    pass


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# Catalogue


def load_catalogue(path: Path, source: Path) -> dict:
    try:
        cat = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CatalogueError(f"{path}: {e}") from e
    for key in ("checks", "folders", "mutants"):
        if key not in cat:
            raise CatalogueError(f"{path}: no '{key}'")
    comp = cat.get("companions", {})
    if not isinstance(comp, dict) or not all(
            isinstance(v, list) and all(isinstance(n, str) and "/" not in n for n in v)
            for v in comp.values()):
        raise CatalogueError(f"{path}: 'companions' maps a program to the names beside it")
    seen = set()
    for m in cat["mutants"]:
        for key in ("id", "file", "original", "replacement", "description", "folder", "fast"):
            if key not in m:
                raise CatalogueError(f"{path}: mutant {m.get('id', '?')} has no '{key}'")
        if m["id"] in seen:
            raise CatalogueError(f"{path}: mutant id {m['id']} twice")
        seen.add(m["id"])
        if m["folder"] not in cat["folders"]:
            raise CatalogueError(f"{path}: mutant {m['id']}: unknown folder {m['folder']}")
        for c in m.get("checks", cat["folders"][m["folder"]]["checks"]):
            if c not in cat["checks"]:
                raise CatalogueError(f"{path}: mutant {m['id']}: unknown check {c}")
        if m["original"] == m["replacement"]:
            raise CatalogueError(f"{path}: mutant {m['id']}: replacement equals the original")
    return cat


def mutated_text(m: dict, source: Path) -> str:
    """The file's text with the mutant applied; CatalogueError (stale) unless the snippet occurs
    exactly once."""
    f = source / m["file"]
    try:
        text = f.read_text(encoding="utf-8")
    except OSError as e:
        raise CatalogueError(f"STALE mutant {m['id']}: cannot read {m['file']}: {e}") from e
    n = text.count(m["original"])
    if n != 1:
        raise CatalogueError(
            f"STALE mutant {m['id']}: its snippet occurs {n} times in {m['file']} (must be exactly "
            f"once); update tools/mutants.json. Snippet: {m['original']!r}")
    return text.replace(m["original"], m["replacement"])


# ---------------------------------------------------------------------------------------------
# The build graph, from ninja


class Build:
    def __init__(self, build: Path, jobs: int, lock: Path | None):
        self.dir = build.resolve()
        self.jobs = jobs
        self.lock = lock
        self._final = {}
        self._inputs = {}
        self._deps = None
        self._lock_depth = 0
        self._lock_file = None
        self.lock_wait_seconds = 0.0

    def ninja(self, *args: str) -> str:
        r = subprocess.run(["ninja", "-C", str(self.dir), *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise CatalogueError(f"ninja {' '.join(args)} failed: {r.stderr.strip()[-400:]}")
        return r.stdout

    def final_command(self, output: str) -> str:
        if output not in self._final:
            out = self.ninja("-t", "commands", "-s", output).strip().splitlines()
            self._final[output] = out[-1] if out else ""
        return self._final[output]

    def inputs(self, output: str) -> list[str]:
        """Explicit and implicit inputs of one build edge (not order-only ones)."""
        if output not in self._inputs:
            text = self.ninja("-t", "query", output)
            ins, section = [], None
            for line in text.splitlines():
                s = line.strip()
                if s.startswith("input:"):
                    section = "in"
                    continue
                if s.startswith("outputs:"):
                    section = "out"
                    continue
                if section == "in" and s and not s.startswith("||"):
                    ins.append(s[2:] if s.startswith("| ") else s)
            self._inputs[output] = ins
        return self._inputs[output]

    def is_output(self, rel: str) -> bool:
        if rel not in self._inputs:
            r = subprocess.run(["ninja", "-C", str(self.dir), "-t", "query", rel],
                               capture_output=True, text=True)
            if r.returncode != 0:
                return False
            self.inputs(rel)
        return True

    def deps(self) -> dict[str, set[str]]:
        """object -> every file its compile read (source and headers), as absolute paths."""
        if self._deps is None:
            self._deps = {}
            cur = None
            for line in self.ninja("-t", "deps").splitlines():
                if not line.strip():
                    cur = None
                elif not line.startswith(" "):
                    cur = line.split(":", 1)[0]
                    self._deps[cur] = set()
                elif cur is not None:
                    p = line.strip()
                    self._deps[cur].add(str((self.dir / p).resolve()) if not p.startswith("/")
                                        else os.path.normpath(p))
        return self._deps

    def embeds(self, rel_file: str) -> list[str]:
        """Generated headers (read by some compile) that hold rel_file's text: CMake's
        `// Generated from <rel_file>.` files, such as host.py inside the Python host plugin."""
        want = f"// Generated from {rel_file}."
        found = set()
        for d in self.deps().values():
            for p in d:
                if p.startswith(str(self.dir) + "/") and p.endswith(".h") and p not in found:
                    with contextlib.suppress(OSError), open(p, encoding="utf-8") as f:
                        if f.readline().rstrip("\n") == want:
                            found.add(p)
        return sorted(found)

    def copies(self, source_file: Path) -> list[str]:
        """Files of the build tree (relative) that are byte copies of a source file
        (configure_file COPYONLY: the Python helpers beside the host plugin)."""
        data = source_file.read_bytes()
        out = []
        for root, dirs, files in os.walk(self.dir):
            dirs[:] = [d for d in dirs if d not in ("CMakeFiles", "mutation", "_deps", ".git")]
            if source_file.name in files:
                p = Path(root) / source_file.name
                with contextlib.suppress(OSError):
                    if p.read_bytes() == data:
                        out.append(str(p.relative_to(self.dir)))
        return sorted(out)

    def closure(self, output: str) -> set[str]:
        """Every object and library an output is made from."""
        seen, todo = set(), [output]
        while todo:
            o = todo.pop()
            for i in self.inputs(o):
                if i not in seen and (i.endswith(".o") or i.endswith(".a")) and not i.startswith("/"):
                    seen.add(i)
                    if i.endswith(".a"):
                        todo.append(i)
        return seen

    @contextlib.contextmanager
    def locked(self):
        """The shared build lock (reentrant: a batch holds it across several mutants)."""
        if not self.lock:
            yield
            return
        if self._lock_depth == 0:
            t0 = time.monotonic()
            self._lock_file = open(self.lock, "a")
            fcntl.flock(self._lock_file, fcntl.LOCK_EX)
            self.lock_wait_seconds += time.monotonic() - t0
        self._lock_depth += 1
        try:
            yield
        finally:
            self._lock_depth -= 1
            if self._lock_depth == 0:
                fcntl.flock(self._lock_file, fcntl.LOCK_UN)
                self._lock_file.close()
                self._lock_file = None


def run_shell(argv_groups: list[list[str]], cwd: Path) -> tuple[int, str]:
    out = []
    for argv in argv_groups:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        out.append(r.stdout + r.stderr)
        if r.returncode != 0:
            return r.returncode, "".join(out)
    return 0, "".join(out)


LAUNCHERS = {"ccache", "sccache", "distcc", "icecc"}


def subcommands(cmd: str) -> list[list[str]]:
    """A ninja command line split at '&&' into argument lists; ':' no-ops and the post-build
    steps (gtest test discovery: `cd DIR && cmake -D ...`) left out."""
    groups, cur = [], []
    for tok in shlex.split(cmd):
        if tok == "&&":
            groups.append(cur)
            cur = []
        else:
            cur.append(tok)
    groups.append(cur)
    keep = []
    for g in groups:
        if not g or g == [":"]:
            continue
        if g[0] == "cd":
            break  # the post-build part begins here
        keep.append(g)
    return keep


class Overlay:
    """The build outputs one mutant changes, rebuilt under work/."""

    def __init__(self, build: Build, work: Path, source: Path, rel_file: str, text: str,
                 companions: dict[str, list[str]] | None = None):
        self.build = build
        self.work = work
        self.source = source
        self.src_dir = work / "src"
        self.out_dir = work / "out"
        shutil.rmtree(work, ignore_errors=True)
        (self.src_dir / rel_file).parent.mkdir(parents=True, exist_ok=True)
        (self.src_dir / rel_file).write_text(text, encoding="utf-8")
        self.rel_file = rel_file
        self.abs_file = str((source / rel_file).resolve())
        self.text = text
        self.companions = companions or {}
        deps = build.deps()
        self.dirty_objects = {o for o, d in deps.items() if self.abs_file in d}
        # A Python file reaches a check three ways: inside a generated header (host.py, compiled
        # into the Python host plugin: the header is rewritten and its includers recompiled), as
        # a copy in the build tree (the helpers beside the plugin: the copy is replaced in the
        # mirrored folder), or by its source path on a check's command line (a backend module).
        self.copies: set[str] = set()
        if rel_file.endswith(".py"):
            original = (source / rel_file).read_text(encoding="utf-8")
            for header in build.embeds(rel_file):
                h = Path(header).read_text(encoding="utf-8")
                if h.count(original) != 1:
                    raise CatalogueError(f"{header} does not hold {rel_file} verbatim once")
                (self.src_dir / Path(header).name).write_text(h.replace(original, text),
                                                             encoding="utf-8")
                self.dirty_objects |= {o for o, d in deps.items() if header in d}
            self.copies = set(build.copies(source / rel_file))
        self.rebuilt: dict[str, Path] = {}  # build output (relative) -> overlay path
        self.mirrored: dict[tuple, bool] = {}  # (build folder, names) -> holds the mutant
        self.build_seconds = 0.0

    def _out(self, rel: str) -> Path:
        p = self.out_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def _compile(self, obj: str) -> tuple[str, int, str]:
        argv_groups = subcommands(self.build.final_command(obj))
        fixed = []
        for argv in argv_groups:
            # A compiler launcher (CMAKE_<LANG>_COMPILER_LAUNCHER=ccache) is dropped: the mutated
            # source's folder goes first on the compiler's own include path.
            c = 1 if len(argv) > 1 and os.path.basename(argv[0]) in LAUNCHERS else 0
            a, i = [argv[c], "-I" + str(self.src_dir)], c + 1
            while i < len(argv):
                t = argv[i]
                if t in ("-MD", "-MMD"):
                    i += 1
                    continue
                if t in ("-MT", "-MF"):
                    i += 2
                    continue
                if t == "-o":
                    a += ["-o", str(self._out(obj))]
                    i += 2
                    continue
                if os.path.normpath(str(self.build.dir / t) if not t.startswith("/") else t) == \
                        self.abs_file:
                    a.append(str(self.src_dir / self.rel_file))
                    i += 1
                    continue
                a.append(t)
                i += 1
            fixed.append(a)
        rc, out = run_shell(fixed, self.build.dir)
        return obj, rc, out

    def _substitute(self, argv: list[str], output: str) -> list[str]:
        res = []
        for t in argv:
            if t == output:
                res.append(str(self._out(output)))
            elif t in self.rebuilt:
                res.append(str(self.rebuilt[t]))
            else:
                res.append(t)
        return res

    def program(self, output: str) -> Path | None:
        """The overlay copy of a build output (relative to the build dir), rebuilt when the
        mutant changes it; None when the mutant is not part of it."""
        if output in self.rebuilt:
            return self.rebuilt[output]
        closure = self.build.closure(output)
        objs = sorted(closure & self.dirty_objects)
        if not objs:
            return None
        with self.build.locked():
            t0 = time.monotonic()
            todo = [o for o in objs if o not in self.rebuilt]
            with concurrent.futures.ThreadPoolExecutor(max_workers=self.build.jobs) as pool:
                for obj, rc, out in pool.map(self._compile, todo):
                    if rc != 0:
                        raise BuildFailed(f"compiling {obj} with the mutant failed:\n{out[-3000:]}")
                    self.rebuilt[obj] = self._out(obj)
            # A static library holds only its own objects: relink those with a changed one.
            for lib in sorted(i for i in closure if i.endswith(".a")):
                if lib not in self.rebuilt and set(self.build.inputs(lib)) & self.dirty_objects:
                    self._link(lib)
            self._link(output)
            self.build_seconds += time.monotonic() - t0
        return self.rebuilt[output]

    def _mirror(self, rel_dir: str, names: tuple[str, ...] | None = None) -> bool:
        """Makes out/rel_dir a copy of the build's folder (only `names` in it, when given):
        rebuilt programs and mutated copies where the mutant changes them, copies of the other
        programs and links to the other files. True when it holds the mutant (else it is left
        unfilled: the build's own serves)."""
        key = (rel_dir, names)
        if key in self.mirrored:
            return self.mirrored[key]
        self.mirrored[key] = False
        src = self.build.dir / rel_dir
        dst = self.out_dir / rel_dir
        dst.mkdir(parents=True, exist_ok=True)
        holds, rest = False, []
        entries = [src / n for n in names] if names is not None else sorted(src.iterdir())
        for entry in entries:
            rel = str(Path(rel_dir) / entry.name)
            if not entry.exists() or entry.name in ("CMakeFiles", "mutation") or \
                    entry.suffix in (".o", ".a", ".cmake"):
                continue
            if entry.is_dir() and not entry.is_symlink():
                if self._mirror(rel):
                    holds = True
                else:
                    shutil.rmtree(dst / entry.name, ignore_errors=True)
                    rest.append(entry)  # linked whole when this folder holds the mutant
            elif rel in self.copies:
                (dst / entry.name).write_text(self.text, encoding="utf-8")
                holds = True
            elif self._is_program(entry) and self.build.is_output(rel) and self.program(rel):
                holds = True
            else:
                rest.append(entry)
        if holds:
            for entry in rest:
                target = dst / entry.name
                if target.exists() or target.is_symlink():
                    continue
                if self._is_program(entry) and not entry.is_dir():
                    # A copy, not a link: gscheck resolves a plugin's path and finds its own
                    # companions from /proc/self/exe, both of which lead a link back here.
                    shutil.copy2(entry, target)
                else:
                    target.symlink_to(entry)
        self.mirrored[key] = holds
        return holds

    @staticmethod
    def _is_program(p: Path) -> bool:
        return p.is_file() and (p.suffix == ".so" or (p.suffix == "" and os.access(p, os.X_OK)))

    def runnable(self, output: str) -> Path | None:
        """The path a check runs for a build output (relative): in the overlay when the program
        or one of its companions (the catalogue's `companions`: files it finds beside itself)
        holds the mutant, else None (the build's own is right)."""
        own = self.program(output) if self._is_program(self.build.dir / output) else None
        names = self.companions.get(output)
        if not names:
            return own
        # The program itself is among the names: copied when only a companion was rebuilt.
        if not self._mirror(str(Path(output).parent), tuple([Path(output).name, *names])):
            return own
        return self.out_dir / output

    def source_path(self, token: str) -> str | None:
        """token with the mutated source file's path replaced by the overlay's copy, whose
        folder mirrors the source folder (a module imports its siblings); None if absent."""
        if self.abs_file not in token:
            return None
        copy = self.src_dir / self.rel_file
        for sibling in Path(self.abs_file).parent.iterdir():
            link = copy.parent / sibling.name
            if sibling.name != copy.name and not link.exists() and not link.is_symlink():
                link.symlink_to(sibling)
        return token.replace(self.abs_file, str(copy))

    def _link(self, output: str) -> None:
        groups = [self._substitute(g, output) for g in subcommands(self.build.final_command(output))]
        rc, out = run_shell(groups, self.build.dir)
        if rc != 0:
            raise BuildFailed(f"linking {output} with the mutant failed:\n{out[-3000:]}")
        self.rebuilt[output] = self._out(output)


class BuildFailed(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Checks


class Checks:
    def __init__(self, cat: dict, build: Build, source: Path, work: Path, seed: int):
        self.cat = cat
        self.build = build
        self.source = source
        self.work = work
        self.seed = seed
        self._ctests = None

    def ctests(self) -> list[dict]:
        if self._ctests is None:
            r = subprocess.run(["ctest", "--show-only=json-v1"], cwd=self.build.dir,
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise CatalogueError(f"ctest --show-only failed in {self.build.dir}: {r.stderr}")
            self._ctests = json.loads(r.stdout)["tests"]
        return self._ctests

    def _rel(self, path: str) -> str | None:
        try:
            return str(Path(path).resolve().relative_to(self.build.dir))
        except ValueError:
            return None

    def _programs(self, argv: list[str], overlay: Overlay | None) -> tuple[list[str], bool]:
        """argv with every build output the mutant changes (itself or a companion beside it)
        replaced by its overlay copy, and the mutated source file by its overlay copy; and
        whether any was (the command runs the mutant)."""
        out, planted = [], False
        for t in argv:
            if overlay is None:
                out.append(t)
                continue
            if (moved := overlay.source_path(t)) is not None:
                out.append(moved)
                planted = True
                continue
            # "plugin:/path/lib.so" and "python:/path/module.py" name a program or file too.
            prefix, path = ("", t) if t.startswith("/") else (t.split(":", 1)[0] + ":", t.split(":", 1)[-1])
            rel = self._rel(path) if path.startswith("/") else None
            p = overlay.runnable(rel) if rel and self.build.is_output(rel) else None
            out.append(prefix + str(p) if p else t)
            planted = planted or p is not None
        return out, planted

    def commands(self, name: str, overlay: Overlay | None) -> list[dict]:
        """The processes of one check: argv, cwd, env, timeout."""
        spec = self.cat["checks"][name]
        kind = spec["kind"]
        bd, src = str(self.build.dir), str(self.source)
        scratch = self.work / "scratch" / name
        subst = {"{build}": bd, "{source}": src, "{scratch}": str(scratch), "{seed}": str(self.seed)}

        def expand(s: str) -> str:
            for k, v in subst.items():
                s = s.replace(k, v)
            return s

        timeout = spec.get("timeout", 900)

        def environment(pairs: dict[str, str]) -> tuple[dict[str, str], bool]:
            # Environment values may name programs too (GSCHECK_WORKER: the plugin worker).
            env, planted = {}, False
            for k, v in pairs.items():
                (env[k],), p = self._programs([v], overlay)
                planted = planted or p
            return env, planted

        spec_env, env_planted = environment({k: expand(v) for k, v in spec.get("env", {}).items()})
        if kind == "command":
            argv, planted = self._programs([expand(a) for a in spec["argv"]], overlay)
            return [{"argv": argv, "cwd": src, "env": spec_env, "timeout": timeout,
                     "scratch": scratch, "planted": planted or env_planted}]
        if kind == "ctest":
            rx = re.compile(spec["regex"])
            excluded = set(spec.get("exclude_labels", []))
            cmds = []
            for t in self.ctests():
                if not rx.search(t["name"]) or "command" not in t:
                    continue
                props = {p["name"]: p["value"] for p in t.get("properties", [])}
                if excluded & set(props.get("LABELS", [])):
                    continue
                if "DISABLED" in props and props["DISABLED"]:
                    continue
                test_env, test_planted = environment(
                    dict(e.split("=", 1) for e in props.get("ENVIRONMENT", [])))
                argv, planted = self._programs(t["command"], overlay)
                cmds.append({"argv": argv, "planted": planted or env_planted or test_planted,
                             "env": dict(spec_env, **test_env),
                             "cwd": props.get("WORKING_DIRECTORY", bd),
                             "timeout": min(timeout, float(props.get("TIMEOUT", timeout))),
                             "scratch": scratch, "skip_rc": props.get("SKIP_RETURN_CODE"),
                             "test": t["name"]})
            if not cmds:
                raise CatalogueError(f"check {name}: no ctest matches /{spec['regex']}/")
            # gtest_discover_tests registers one ctest per test: run each binary once instead.
            merged, seen = [], {}
            for c in cmds:
                argv = c["argv"]
                if len(argv) >= 2 and argv[1].startswith("--gtest_filter=") and \
                        "--gtest_also_run_disabled_tests" in argv:
                    key = argv[0]
                    if key in seen:
                        seen[key]["filters"].append(argv[1].split("=", 1)[1])
                        seen[key]["planted"] = seen[key]["planted"] or c["planted"]
                        continue
                    c = dict(c, filters=[argv[1].split("=", 1)[1]])
                    seen[key] = c
                merged.append(c)
            for c in merged:
                if "filters" in c:
                    c["argv"] = [c["argv"][0], "--gtest_filter=" + ":".join(c.pop("filters"))]
            return merged
        raise CatalogueError(f"check {name}: unknown kind {kind}")

    def run(self, name: str, overlay: Overlay | None) -> dict:
        t0 = time.monotonic()
        result = {"check": name, "rc": 0, "seconds": 0.0, "verdict": "passed"}
        cmds = self.commands(name, overlay)
        if overlay is not None:
            # Only commands that run the mutant prove anything: the rest would grade the
            # unmutated build (a kill there is a flake, a pass no survival).
            cmds = [c for c in cmds if c["planted"]]
            result["planted"] = len(cmds)
            if not cmds:
                result["verdict"] = "not_planted"
        for c in cmds:
            shutil.rmtree(c["scratch"], ignore_errors=True)
            c["scratch"].mkdir(parents=True, exist_ok=True)
            env = dict(os.environ, **c["env"])
            try:
                r = subprocess.run(c["argv"], cwd=c["cwd"], env=env, capture_output=True,
                                   text=True, errors="replace", timeout=c["timeout"])
                rc, out = r.returncode, r.stdout + r.stderr
            except subprocess.TimeoutExpired as e:
                rc = 124
                out = ((e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes)
                       else (e.stdout or "")) + f"\n[timed out after {c['timeout']} s]"
            if c.get("skip_rc") is not None and rc == int(c["skip_rc"]) or \
                    (self.cat["checks"][name].get("skip_rc") == rc):
                result.update(verdict="skipped", rc=rc, tail=out[-1500:])
                continue
            result["ran"] = result.get("ran", 0) + 1
            if rc != 0:
                result.update(verdict="failed", rc=rc, tail=out[-2500:],
                              command=shlex.join(c["argv"]), test=c.get("test"))
                break
        result["seconds"] = round(time.monotonic() - t0, 2)
        return result


# ---------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, help="an up-to-date Ninja build dir (required to run)")
    ap.add_argument("--source", type=Path, default=ROOT)
    ap.add_argument("--catalogue", type=Path, default=None)
    ap.add_argument("--fast", action="store_true", help="only the mutants marked fast")
    ap.add_argument("--memory", action="store_true",
                    help="only the mutants marked memory (errors whose value is discarded: meant "
                         "for a sanitizer build, scripts/mutation.sh --preset sanitize --memory)")
    ap.add_argument("--only", default="", help="comma-separated mutant ids")
    ap.add_argument("--json", type=Path, default=None, help="write the kill table here")
    ap.add_argument("--jobs", type=int, default=2, help="parallel compiles per mutant")
    ap.add_argument("--lock", type=Path, default=None,
                    help="flock this file while compiling and linking (shared machines)")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default BUILD/mutation)")
    ap.add_argument("--seed", type=int, default=20261201, help="sweep seed of the run checks")
    ap.add_argument("--batch", type=int, default=8,
                    help="mutants whose programs are built under one hold of --lock (default 8)")
    ap.add_argument("--prebuild", type=int, default=2,
                    help="checks per mutant whose programs the batch builds up front (default 2)")
    ap.add_argument("--list", action="store_true", help="print the catalogue and exit")
    ap.add_argument("--markdown", type=Path, default=None, metavar="TABLE_JSON",
                    help="print a kill table written by --json as Markdown and exit")
    ap.add_argument("--verify", action="store_true",
                    help="only check that every mutant applies (no build, no checks)")
    ap.add_argument("--no-baseline", action="store_true",
                    help="do not rerun a killing check on the unmutated build")
    args = ap.parse_args(argv)

    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text(encoding="utf-8"))))
        return 0
    source = args.source.resolve()
    cat_path = args.catalogue or source / "tools" / "mutants.json"
    try:
        cat = load_catalogue(cat_path, source)
    except CatalogueError as e:
        print(f"mutate: {e}", file=sys.stderr)
        return 2
    mutants = cat["mutants"]
    if args.fast:
        mutants = [m for m in mutants if m["fast"]]
    if args.memory:
        mutants = [m for m in mutants if m.get("memory")]
        # A sanitizer's report stops the check with a status of its own (as the sanitizer pass).
        os.environ.setdefault("ASAN_OPTIONS", "exitcode=66:halt_on_error=1:detect_leaks=1:"
                              "allow_user_segv_handler=1")
        os.environ.setdefault("UBSAN_OPTIONS", "exitcode=66:halt_on_error=1:print_stacktrace=1")
    if args.only:
        want = set(args.only.split(","))
        unknown = want - {m["id"] for m in cat["mutants"]}
        if unknown:
            print(f"mutate: unknown mutant ids: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        mutants = [m for m in cat["mutants"] if m["id"] in want]
    if args.list:
        for m in mutants:
            print(f"{m['id']:28} {m['folder']:9} {'fast' if m['fast'] else '    '} "
                  f"{m['file']}: {m['description']}")
        return 0

    stale = []
    for m in mutants:
        try:
            mutated_text(m, source)
        except CatalogueError as e:
            stale.append(str(e))
    if stale:
        for s in stale:
            print(f"mutate: {s}", file=sys.stderr)
    if args.verify:
        print(f"mutate: {len(mutants) - len(stale)} of {len(mutants)} mutants apply")
        return 1 if stale else 0

    if not args.build:
        print("mutate: --build DIR is required", file=sys.stderr)
        return 2
    build = Build(args.build, args.jobs, args.lock)
    if not (build.dir / "build.ninja").is_file():
        print(f"SKIPPED: {build.dir} is not a Ninja build directory (the mutation suite reuses "
              "Ninja's build graph)")
        return 77
    work = (args.work or build.dir / "mutation").resolve()
    checks = Checks(cat, build, source, work, args.seed)
    t_start = time.monotonic()
    table = {"catalogue": str(cat_path), "build": str(build.dir), "seed": args.seed,
             "fast_only": args.fast, "mutants": [], "baseline": []}

    # A check proves something only if it passes without a mutant: each check that fails on a
    # mutant is first run once on the unmutated build (the baseline); failing there stops the run.
    baseline = {}

    def baseline_ok(c: str) -> bool:
        if c not in baseline or args.no_baseline:
            r = checks.run(c, None) if not args.no_baseline else {"verdict": "passed"}
            baseline[c] = r
            if not args.no_baseline:
                table["baseline"].append(r)
                log(f"baseline {c}: {r['verdict']} ({r['seconds']} s)")
        return baseline[c]["verdict"] != "failed"

    def prepare(m: dict):
        """The mutant's overlay with the programs of its first --prebuild checks built (under the
        batch's hold of the lock)."""
        entry = {k: m[k] for k in ("id", "folder", "file", "description", "fast")}
        if "equivalent" in m:
            entry["equivalent"] = m["equivalent"]
        try:
            text = mutated_text(m, source)
        except CatalogueError as e:
            entry.update(status="stale", error=str(e))
            return entry, None, None
        try:
            overlay = Overlay(build, work / "overlay" / m["id"], source, m["file"], text,
                              cat.get("companions"))
        except CatalogueError as e:
            entry.update(status="error", error=str(e))
            return entry, None, None
        err = None
        try:
            if not overlay.dirty_objects and not m["file"].endswith(".py"):
                raise BuildFailed(f"no object file of {build.dir} is compiled from {m['file']} "
                                  "(is it in this build?)")
            # Most mutants die in the first checks: later checks' programs are built on use.
            for c in m.get("checks", cat["folders"][m["folder"]]["checks"])[:args.prebuild]:
                checks.commands(c, overlay)
        except (BuildFailed, CatalogueError) as e:
            err = e
        return entry, overlay, err

    order = list(mutants)
    for start in range(0, len(order), max(1, args.batch)):
        chunk = order[start:start + max(1, args.batch)]
        with build.locked():  # one hold of the shared lock builds the whole chunk
            prepared = [prepare(m) for m in chunk]
        for m, (entry, overlay, err) in zip(chunk, prepared):
            if overlay is None:
                table["mutants"].append(entry)
                log(f"{m['id']}: {entry['status'].upper()}: {entry['error'][:1500]}")
                continue
            entry["checks"] = []
            status, killer, detect = "survived", None, 0.0
            try:
                if err:
                    raise err
                touched = False
                for c in m.get("checks", cat["folders"][m["folder"]]["checks"]):
                    built = overlay.build_seconds
                    r = checks.run(c, overlay)
                    # Programs rebuilt on first use: build time, not detection time.
                    r["seconds"] = round(max(0.0, r["seconds"] - (overlay.build_seconds - built)), 2)
                    entry["checks"].append(r)
                    touched = touched or r.get("ran", 0) > 0  # planted, and not skipped
                    if r["verdict"] == "failed":
                        if not baseline_ok(c):
                            b = baseline[c]
                            print(f"mutate: check {c} fails without any mutant:\n"
                                  f"{b.get('command')}\n{b.get('tail', '')}", file=sys.stderr)
                            write_table(args.json, table, t_start)
                            return 1
                        status, killer = "killed", c
                        break
                detect = sum(r["seconds"] for r in entry["checks"])
                if not touched and any(r["verdict"] == "skipped" for r in entry["checks"]):
                    # Its checks could not run here (their exit 77: no venv, no PyPI): neither
                    # killed nor survived; said, not failed.
                    status = "skipped"
                elif not touched:
                    raise BuildFailed(f"no check runs {m['file']}: none of its programs (or "
                                      "their companions, or its source path) holds the mutant")
            except BuildFailed as e:
                status = "build_failed"
                entry["error"] = str(e)
            except CatalogueError as e:
                status = "error"
                entry["error"] = str(e)
            if status == "survived" and "equivalent" in m:
                status = "equivalent"
            entry.update(status=status, killed_by=killer, detect_seconds=round(detect, 2),
                         build_seconds=round(overlay.build_seconds, 2))
            table["mutants"].append(entry)
            log(f"{m['id']}: {status.upper()}" +
                (f" by {killer} in {detect:.1f} s" if killer else "") +
                f" (build {overlay.build_seconds:.1f} s)" +
                (f"\n  {entry['error'][:1500]}" if "error" in entry else ""))
            shutil.rmtree(overlay.work, ignore_errors=True)
            write_table(args.json, table, t_start)  # a partial table survives an interruption

    table["lock_wait_seconds"] = round(build.lock_wait_seconds, 1)
    summary = write_table(args.json, table, t_start)
    for folder, s in summary.items():
        log(f"{folder:10} {s['killed']}/{s['mutants'] - s['equivalent']} killed"
            f" ({s['equivalent']} equivalent), median detect {s['median_detect_seconds']} s,"
            f" max {s['max_detect_seconds']} s")
    bad = [e for e in table["mutants"] if e["status"] not in ("killed", "equivalent", "skipped")]
    for e in table["mutants"]:
        if e["status"] == "skipped":
            print(f"mutate: {e['id']} SKIPPED: its checks could not run here", file=sys.stderr)
    for e in bad:
        print(f"mutate: {e['id']} {e['status'].upper()}: {e['description']}", file=sys.stderr)
    return 1 if bad or stale else 0


def markdown(table: dict) -> str:
    """The kill table as Markdown: per folder, then per mutant."""
    out = ["| folder | mutants | killed | equivalent | not killed | median / max time to detect (s) |",
           "|---|---|---|---|---|---|"]
    for folder, s in table["summary"].items():
        out.append(f"| {folder} | {s['mutants']} | {s['killed']} | {s['equivalent']} | {s['other']} "
                   f"| {s['median_detect_seconds']} / {s['max_detect_seconds']} |")
    out += ["", "| mutant | folder | bug | result | killed by | detect (s) | build (s) |",
            "|---|---|---|---|---|---|---|"]
    for e in table["mutants"]:
        out.append(f"| `{e['id']}` | {e['folder']} | {e['description']} | {e['status']} | "
                   f"{e.get('killed_by') or '-'} | {e.get('detect_seconds', '-')} | "
                   f"{e.get('build_seconds', '-')} |")
    return "\n".join(out)


def write_table(path: Path | None, table: dict, t_start: float) -> dict:
    summary = {}
    for e in table["mutants"]:
        s = summary.setdefault(e["folder"], {"mutants": 0, "killed": 0, "equivalent": 0,
                                             "other": 0, "_t": []})
        s["mutants"] += 1
        if e["status"] == "killed":
            s["killed"] += 1
            s["_t"].append(e["detect_seconds"])
        elif e["status"] == "equivalent":
            s["equivalent"] += 1
        else:
            s["other"] += 1
    for s in summary.values():
        t = sorted(s.pop("_t"))
        s["median_detect_seconds"] = t[len(t) // 2] if t else None
        s["max_detect_seconds"] = t[-1] if t else None
    table["summary"] = summary
    table["wall_seconds"] = round(time.monotonic() - t_start, 1)
    table["build_seconds"] = round(sum(e.get("build_seconds", 0) for e in table["mutants"]), 1)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return summary


if __name__ == "__main__":
    sys.exit(main())
