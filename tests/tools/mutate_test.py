"""Unit tests of tools/mutate.py that need no build: catalogue checks, stale snippets, the
ninja command splitting and the kill-table summary (the end-to-end run is ctest mutation.fast)."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import mutate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def catalogue(mutants, folders=None):
    return {"checks": {"unit": {"kind": "command", "argv": ["true"]}},
            "folders": folders or {"f": {"checks": ["unit"]}}, "mutants": mutants}


def mutant(**kw):
    m = {"id": "m1", "file": "a.cc", "original": "x < n", "replacement": "x <= n",
         "description": "off by one", "folder": "f", "fast": False}
    m.update(kw)
    return m


class CatalogueTest(unittest.TestCase):
    def write(self, tmp, cat):
        p = Path(tmp) / "cat.json"
        p.write_text(json.dumps(cat))
        return p

    def test_the_real_catalogue_loads_and_applies(self):
        cat = mutate.load_catalogue(ROOT / "tools" / "mutants.json", ROOT)
        self.assertGreaterEqual(len(cat["mutants"]), 40)
        for m in cat["mutants"]:
            mutate.mutated_text(m, ROOT)  # raises when stale
        # The sanitizer build's share (mutation.sanitize): errors whose value is discarded.
        self.assertGreaterEqual(sum(bool(m.get("memory")) for m in cat["mutants"]), 2)
        folders = {m["folder"] for m in cat["mutants"]}
        self.assertTrue({"cuda", "reference", "compare", "backends", "plugins"} <= folders)
        for m in cat["mutants"]:
            if "equivalent" in m:
                self.assertGreater(len(m["equivalent"]), 40, m["id"])  # a written reason

    def test_malformed_catalogues_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            for bad in (catalogue([mutant(), mutant()]),                 # duplicate id
                        catalogue([mutant(folder="nowhere")]),           # unknown folder
                        catalogue([mutant(checks=["nothing"])]),          # unknown check
                        catalogue([mutant(replacement="x < n")]),         # no change
                        dict(catalogue([mutant()]), companions={"p": "q"}),  # not a list
                        {"checks": {}, "mutants": []}):                   # no folders
                with self.assertRaises(mutate.CatalogueError):
                    mutate.load_catalogue(self.write(tmp, bad), Path(tmp))
            m = dict(mutant())
            del m["description"]
            with self.assertRaises(mutate.CatalogueError):
                mutate.load_catalogue(self.write(tmp, catalogue([m])), Path(tmp))

    def test_snippet_must_occur_exactly_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp)
            (src / "a.cc").write_text("if (x < n) f();\n")
            self.assertEqual(mutate.mutated_text(mutant(), src), "if (x <= n) f();\n")
            (src / "a.cc").write_text("if (x < n && x < n) f();\n")
            with self.assertRaisesRegex(mutate.CatalogueError, "STALE.*2 times"):
                mutate.mutated_text(mutant(), src)
            (src / "a.cc").write_text("if (i < n) f();\n")
            with self.assertRaisesRegex(mutate.CatalogueError, "STALE.*0 times"):
                mutate.mutated_text(mutant(), src)
            with self.assertRaisesRegex(mutate.CatalogueError, "STALE.*cannot read"):
                mutate.mutated_text(mutant(file="gone.cc"), src)


class CommandsTest(unittest.TestCase):
    def test_link_commands_drop_the_post_build_steps(self):
        cmd = (": && /usr/bin/c++ -O2 a.o -o tests/t lib.a && cd /b/tests && /usr/bin/cmake "
               "-D TEST_TARGET=t -P x.cmake && :")
        self.assertEqual(mutate.subcommands(cmd), [["/usr/bin/c++", "-O2", "a.o", "-o", "tests/t",
                                                    "lib.a"]])

    def test_archive_commands_keep_every_step(self):
        cmd = ": && /usr/bin/cmake -E rm -f l.a && /usr/bin/ar qc l.a a.o && /usr/bin/ranlib l.a && :"
        self.assertEqual([g[0] for g in mutate.subcommands(cmd)],
                         ["/usr/bin/cmake", "/usr/bin/ar", "/usr/bin/ranlib"])


class FakeBuild:
    """The parts of mutate.Build an Overlay reads, over a folder laid out like a build."""

    def __init__(self, root: Path, outputs=(), deps=None, embeds=(), copies=()):
        self.dir = root
        self.jobs = 1
        self.outputs = set(outputs)
        self._deps = deps or {}
        self._embeds = list(embeds)
        self._copies = list(copies)

    def deps(self):
        return self._deps

    def embeds(self, rel_file):
        return self._embeds

    def copies(self, source_file):
        return self._copies

    def is_output(self, rel):
        return rel in self.outputs

    def closure(self, output):
        return set()

    def locked(self):
        return mutate.contextlib.nullcontext()


def layout(tmp: Path):
    """A build with gscheck and its companions in tools/, and a source tree with a module."""
    build, source = tmp / "build", tmp / "source"
    for rel in ("tools/gscheck", "tools/gscheck-worker"):
        (build / rel).parent.mkdir(parents=True, exist_ok=True)
        (build / rel).write_text("#!/bin/sh\n")
        (build / rel).chmod(0o755)
    (build / "tools/python").mkdir()
    (build / "tools/python/helper.py").write_text("def ok():\n    return True\n")
    (source / "plugins/x").mkdir(parents=True)
    (source / "plugins/x/helper.py").write_text("def ok():\n    return True\n")
    (source / "plugins/x/mod.py").write_text("import sibling\n")
    (source / "plugins/x/sibling.py").write_text("")
    return build, source


COMPANIONS = {"tools/gscheck": ["gscheck-worker", "python"]}


class OverlayTest(unittest.TestCase):
    def test_a_python_helper_copied_into_the_build_runs_through_gscheck_beside_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            build, source = layout(Path(tmp))
            fb = FakeBuild(build, outputs={"tools/gscheck", "tools/gscheck-worker"},
                           copies=["tools/python/helper.py"])
            o = mutate.Overlay(fb, Path(tmp) / "work", source, "plugins/x/helper.py",
                               "def ok():\n    return False\n", COMPANIONS)
            p = o.runnable("tools/gscheck")
            self.assertEqual(p, Path(tmp) / "work/out/tools/gscheck")
            # gscheck finds its companions from /proc/self/exe: a copy, not a link.
            self.assertFalse(p.is_symlink())
            self.assertIn("False", (p.parent / "python/helper.py").read_text())
            # So is the worker beside it: gscheck resolves a plugin's path before loading it.
            self.assertFalse((p.parent / "gscheck-worker").is_symlink())

    def test_a_rebuilt_companion_keeps_the_folders_beside_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            build, source = layout(Path(tmp))
            fb = FakeBuild(build, outputs={"tools/gscheck", "tools/gscheck-worker"})
            o = mutate.Overlay(fb, Path(tmp) / "work", source, "plugins/x/helper.py", "x = 1\n",
                               COMPANIONS)
            worker = o.out_dir / "tools/gscheck-worker"
            worker.parent.mkdir(parents=True)
            worker.write_text("mutated")
            o.rebuilt["tools/gscheck-worker"] = worker  # as program() leaves a rebuilt one
            p = o.runnable("tools/gscheck")
            self.assertEqual(p.parent, worker.parent)
            self.assertEqual(worker.read_text(), "mutated")
            # python/ holds nothing of the mutant: the build's, linked whole, still importable.
            self.assertTrue((p.parent / "python").is_symlink())
            self.assertIn("True", (p.parent / "python/helper.py").read_text())

    def test_a_program_without_companions_runs_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            build, source = layout(Path(tmp))
            fb = FakeBuild(build, outputs={"tools/gscheck", "tools/gscheck-worker"})
            o = mutate.Overlay(fb, Path(tmp) / "work", source, "plugins/x/helper.py", "x = 1\n",
                               {})
            own = o.out_dir / "tools/gscheck"
            own.parent.mkdir(parents=True)
            own.write_text("mutated")
            o.rebuilt["tools/gscheck"] = own
            self.assertEqual(o.runnable("tools/gscheck"), own)
            self.assertEqual(sorted(p.name for p in own.parent.iterdir()), ["gscheck"])

    def test_a_mutant_no_program_holds_is_not_planted(self):
        with tempfile.TemporaryDirectory() as tmp:
            build, source = layout(Path(tmp))
            fb = FakeBuild(build, outputs={"tools/gscheck"})
            o = mutate.Overlay(fb, Path(tmp) / "work", source, "plugins/x/helper.py", "x = 1\n",
                               COMPANIONS)
            self.assertIsNone(o.runnable("tools/gscheck"))
            cat = {"checks": {"run": {"kind": "command", "argv": ["{build}/tools/gscheck"]}}}
            checks = mutate.Checks(cat, fb, source, Path(tmp) / "work", 1)
            r = checks.run("run", o)
            self.assertEqual((r["verdict"], r["planted"]), ("not_planted", 0))

    def test_a_module_named_on_the_command_line_is_replaced_with_its_siblings(self):
        with tempfile.TemporaryDirectory() as tmp:
            build, source = layout(Path(tmp))
            fb = FakeBuild(build)
            o = mutate.Overlay(fb, Path(tmp) / "work", source, "plugins/x/mod.py",
                               "import sibling\nBUG = 1\n")
            cat = {"checks": {"run": {"kind": "command",
                                      "argv": ["true", "python:{source}/plugins/x/mod.py"]}}}
            checks = mutate.Checks(cat, fb, source, Path(tmp) / "work", 1)
            (cmd,) = checks.commands("run", o)
            self.assertTrue(cmd["planted"])
            moved = Path(cmd["argv"][1].split(":", 1)[1])
            self.assertIn("BUG", moved.read_text())
            self.assertTrue((moved.parent / "sibling.py").is_symlink())
            r = checks.run("run", o)
            self.assertEqual((r["verdict"], r["ran"]), ("passed", 1))
            # A planted command that exits with the check's skip status ran nothing.
            cat["checks"]["skip"] = {"kind": "command", "skip_rc": 77,
                                     "argv": ["sh", "-c", "exit 77", "{source}/plugins/x/mod.py"]}
            r = checks.run("skip", o)
            self.assertEqual((r["verdict"], r["planted"], r.get("ran", 0)), ("skipped", 1, 0))

    def test_a_python_file_compiled_into_a_plugin_rewrites_its_generated_header(self):
        with tempfile.TemporaryDirectory() as tmp:
            build, source = layout(Path(tmp))
            header = build / "plugins/python/host_source.h"
            header.parent.mkdir(parents=True)
            header.write_text('// Generated from plugins/x/mod.py.\nR"(import sibling\n)";\n')
            fb = FakeBuild(build, deps={"host.o": {str(header)}, "other.o": set()},
                           embeds=[str(header)])
            o = mutate.Overlay(fb, Path(tmp) / "work", source, "plugins/x/mod.py",
                               "import sibling\nBUG = 1\n")
            self.assertEqual(o.dirty_objects, {"host.o"})
            self.assertIn("BUG = 1", (o.src_dir / "host_source.h").read_text())
            header.write_text("// Generated from plugins/x/mod.py.\nsomething else\n")
            with self.assertRaises(mutate.CatalogueError):
                mutate.Overlay(fb, Path(tmp) / "work2", source, "plugins/x/mod.py", "x\n")


class TableTest(unittest.TestCase):
    def test_summary_counts_survivors_apart(self):
        table = {"mutants": [
            {"id": "a", "folder": "cuda", "status": "killed", "detect_seconds": 2.0,
             "description": "d", "killed_by": "unit", "build_seconds": 1},
            {"id": "b", "folder": "cuda", "status": "killed", "detect_seconds": 9.0,
             "description": "d", "killed_by": "unit", "build_seconds": 1},
            {"id": "c", "folder": "cuda", "status": "survived", "detect_seconds": 30.0,
             "description": "d", "killed_by": None, "build_seconds": 1},
            {"id": "d", "folder": "compare", "status": "equivalent", "detect_seconds": 30.0,
             "description": "d", "killed_by": None, "build_seconds": 1}]}
        s = mutate.write_table(None, table, 0.0)
        self.assertEqual(s["cuda"], {"mutants": 3, "killed": 2, "equivalent": 0, "other": 1,
                                     "median_detect_seconds": 9.0, "max_detect_seconds": 9.0})
        self.assertEqual(s["compare"]["equivalent"], 1)
        self.assertIn("| cuda | 3 | 2 | 0 | 1 |", mutate.markdown(table))


if __name__ == "__main__":
    unittest.main()
