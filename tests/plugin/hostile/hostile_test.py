#!/usr/bin/env python3
"""Hostile plugins against `gscheck run`: the promise "only its cases fail, nothing outlives the
run, the report is the truth" checked from outside, one plugin (hostile_plugin.c, one mode
each) per way a plugin escapes.

  hostile_test.py --gscheck BUILD/tools/gscheck --plugin libhostile_MODE.so --mode MODE
                  [--isolate worker|call]

Each run checks six small gather cases (two of them with params[0] == 13, which the plugins
misbehave on) and asserts:
  1. exactly the triggered cases fail, each with a reason of the plugin's class (EXPECT below);
  2. the other cases pass;
  3. the report is intact once gscheck and whatever it left have ended: valid JSON whose counts
     are the ones gscheck printed, whose case verdicts add up to them, and a JUnit file agreeing;
  4. no process outlives gscheck. This driver is a child subreaper, so every process gscheck's
     tree leaves behind is reparented to it; after gscheck exits it waits (bounded) for its
     process tree to empty, reports what is left and kills it.
  5. the containment the report claims was on: each worker notes what it sees of it
     (seccomp, capabilities, PID, mount and IPC namespaces, a write beside its writable folder, its cgroup's
     pids.max and memory limit), and every protection claimed must be seen, so a protection
     that is silently off fails every hostile test instead of passing it.
The plugins note in $GSC_HOSTILE_DIR what they managed ("acted") or were refused ("refused"),
so a refused attempt (a sealed memfd, a seccomp filter) is told from an undetected one.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# Classes of failure reason (searched in the case's report reason).
LEFT = r"child process|left"
ABORT = r"SIGABRT|Aborted|abort"
TIMEOUT = r"timed out"
OVERRUN = r"past the end of its output|guard page after"
INPUT = (r"read-only inputs|wrote (to|into) (its|the) inputs"
         r"|inputs? (was|were) (written|modified|changed)")
FORGED = r"malformed|desynchron"
CLOSED = r"closed|descriptor|without answering"
KILLED = r"signal 9|SIGKILL|Killed|killed|parent"
MEMORY = r"memory|signal 9|Killed|budget|signal 25|SIGXFSZ|File size limit"
SYSCALL = r"SIGSYS|Bad system call|signal 31|seccomp|not permitted|refused"
# A made-up value in a gather is in no input: UNSAFE, with the value in its reason.
WRONG = r"differ|mismatch|expected|wrong|in no input"
# A reason about an earlier call, never the right blame for this one.
MISATTRIBUTED = r"gone before the call"

SMALL_BUDGET = ["--max-bytes", "1048576"]

# Per mode:
#   fails: the triggered cases fail with a reason matching this regex (None: no case fails);
#   verdict: theirs (default UNSAFE: a crash, a hang, a write outside the output, a broken
#     protocol or an output made up; FAILED for a wrong answer the backend gave);
#   refusable: a triggered case may pass instead when the plugin's attempt was refused (it noted
#     "refused" and never "acted");
#   never_acts: the plugin's attempt must never succeed, whatever the verdicts ("acted" fails);
#   must_try: the plugin noted its attempt ("acted" or "refused"), so the test tested something;
#   shm_clean: no /dev/shm/gscheck-hostile* file is left after the run;
#   cwd_in_cases: gscheck runs with the case folder as its working directory;
#   isolate: the --isolate modes it runs under (one ctest each, CMakeLists.txt);
#   args: more gscheck arguments; timeout: --timeout (None: the default deadline);
#   cases: "two" (two triggered cases) or "one";
#   max_rss_mib: a bound on the largest resident set of gscheck and its workers;
#   needs_sandbox: only the namespaces stop it: where this machine gives none (the run's
#   containment says "process group only", allowed by $GSCHECK_UNSAFE_NO_SANDBOX in the test
#   presets), the test is SKIPPED (exit 77) rather than passed or failed.
EXPECT = {
    # run() leaves a daemon: no parent-death signal, its own session.
    "setsid_daemon": dict(fails=LEFT, isolate=("worker", "call")),
    # run() double-forks: the daemon is nobody's child.
    "double_fork": dict(fails=LEFT, isolate=("worker", "call")),
    # init() and finalize() double-fork a daemon: the cases pass, nothing may outlive the run.
    "init_daemon": dict(fails=None, isolate=("worker", "call")),
    "finalize_daemon": dict(fails=None, isolate=("worker", "call")),
    # init() leaves a daemon that waits for gscheck to exit, then rewrites the report to say the
    # plugin's wrong answers passed.
    "report_rewrite": dict(fails=WRONG, never_acts=True),
    # A result frame claiming a 256 MiB output (out memfd grown to hold it) under a 1 MiB budget.
    "forged_huge": dict(fails=FORGED, args=SMALL_BUDGET, max_rss_mib=160),
    # "Allocated" frames claiming 16 TiB, then sleeping past the call's deadline: it times out,
    # or its frames are caught as forged first (they carry no valid call id).
    "forged_allocated": dict(fails=TIMEOUT + "|" + FORGED, timeout=None, cases="one"),
    # A forged result before the real one: two results for one call.
    "desync": dict(fails=FORGED, isolate=("worker", "call")),
    # Writes to the inputs: mprotect(PROT_WRITE) of their mapping, pwrite() on the memfd behind
    # them (and on it reopened O_RDWR), a fresh writable MAP_SHARED mapping of it.
    "input_mprotect": dict(fails=INPUT, isolate=("worker", "call")),
    "input_pwrite": dict(fails=INPUT, refusable=True, isolate=("worker", "call")),
    "input_mmap": dict(fails=INPUT, refusable=True, isolate=("worker", "call")),
    # mprotect() the guard page after the output writable and write there.
    "guard_mprotect": dict(fails=OVERRUN, isolate=("worker", "call")),
    # One byte a page past the guard page after the output.
    "overrun_past_guard": dict(fails=OVERRUN, isolate=("worker", "call")),
    # 1.5 GiB into a memfd of its own under --max-bytes 1 MiB.
    # At the cap a cgroup v1 group reclaims before it OOM-kills, which under load (or ASan) can
    # outlast the deadline: a timeout there is containment too (never_acts says the fill never
    # got through).
    "memfd_fill": dict(fails=MEMORY + "|" + TIMEOUT, refusable=True, never_acts=True,
                       args=SMALL_BUDGET, timeout=20),
    # kill(getppid(), SIGKILL): only the call that did it fails.
    "kill_parent": dict(fails=KILLED, refusable=True, isolate=("worker", "call")),
    # kill(gscheck, SIGKILL): must be refused.
    "kill_gscheck": dict(fails=SYSCALL + "|" + KILLED, refusable=True, never_acts=True,
                         isolate=("worker", "call")),
    # close_range(0, ~0): every descriptor, the result pipe too, then a normal return.
    "close_fds": dict(fails=CLOSED, isolate=("worker", "call")),
    "abort": dict(fails=ABORT, isolate=("worker", "call")),
    # init() writes a clean case over each triggered case file, then answers them wrong: the
    # files were read and hashed before the plugin loaded, so the wrong answers fail.
    # gscheck runs in the case folder, so a relative path can pass under its read-only mount.
    "init_rewrite_cases": dict(fails=WRONG, must_try=True, cwd_in_cases=True,
                               isolate=("worker", "call")),
    # An error message that is not UTF-8 (0xff, a surrogate, a cut sequence): the reason shows
    # the bytes escaped, the JSON report and JUnit file are written and valid.
    "non_utf8_message": dict(verdict="FAILED", fails=r"bad index \\xff\\xfe\\xed\\xa0\\x80 \\xc3",
                             isolate=("worker", "call")),
    # Writes through gscheck's working directory, to /tmp, the worker executable and its
    # folder, the report and its folder, sysctls, cgroup files, /dev/tty, a device node: all
    # refused (a read-only root, no capabilities, its own session); its /dev/shm dies with it.
    "escape_writes": dict(fails=None, never_acts=True, must_try=True, shm_clean=True,
                          needs_sandbox=True, isolate=("worker", "call")),
    # Reads the case files (their expect blocks) through the working directory, the test
    # folder and /proc/<gscheck>/cwd: every one hidden.
    "read_cases": dict(fails=None, never_acts=True, must_try=True, needs_sandbox=True,
                       isolate=("worker", "call")),
    # Writes "exited with status 0" into the guard's status pipe (/proc/1/fd/7), then crashes:
    # the pipe cannot be opened and the crash is seen.
    "forge_status": dict(fails=r"signal 11|SIGSEGV|Segmentation", never_acts=True,
                         must_try=True, isolate=("worker", "call")),
    # Answers resource_exhausted ("out of memory") on the triggered cases, which are far
    # inside --max-bytes: only gscheck decides a case is over budget, so they fail, not skip.
    "budget_lie": dict(verdict="FAILED",
                       fails=r"answered resource_exhausted for a case gscheck ran within "
                       r"--max-bytes", isolate=("worker", "call")),
    # What uid 0 reaches with no capability on a read-only root, each set up (harmless) by this
    # driver: a root-only unix socket and an abstract one (connect), a device node (opened for
    # writing: /dev/null's numbers), a root-only SysV shared memory segment: all refused.
    "root_reach": dict(fails=None, never_acts=True, must_try=True, needs_sandbox=True,
                       lures=True, isolate=("worker", "call")),
    # ptrace(PTRACE_ATTACH) of gscheck, mount(tmpfs), setns(/proc/1/ns/mnt): all refused.
    "syscalls": dict(fails=SYSCALL, refusable=True, never_acts=True, isolate=("worker", "call")),
}

DEFAULT_TIMEOUT_S = 5
SETTLE_S = 5  # how long leftovers have to end after gscheck exits
GSCHECK_LIMIT_S = 120


def cases(which):
    """(name, case) pairs in the order gscheck runs them (by name): a triggered case (params[0]
    == 13, "trigger" in its name) is followed by an innocent one, which a misattributed failure
    would hit."""
    table = [
        ("a_clean", "float32", [1.5, 2, 3, 4, 5, 6, 7, 8], "int32", [7, 0, 3, 3]),
        ("b_trigger", "float32", [13, 2, 3, 4, 5, 6, 7, 8], "int32", [1, 2, 0, 7]),
        ("c_clean", "int32", [5, 6, 7, 8, 9, 10, 11, 12], "int64", [0, 7, 2, 2]),
        ("d_clean", "float32", [-1, 0.5, 0.25, 9, 10, 11, 12, 14], "int64", [3, 1]),
        ("e_trigger", "int32", [13, 1, 2, 3, 4, 5, 6, 7], "int64", [0, 1, 7, 6]),
        ("f_clean", "int32", [-4, 3, 2, 1, 0, -1, -2, -3], "int32", [2, 2, 2, 2, 5]),
    ]
    if which == "one":
        table = [t for t in table if t[0] != "e_trigger"]
    out = []
    for name, dtype, params, idx_dtype, idx in table:
        out.append(("hostile/" + name, {
            "gscheck_case": 1, "name": "hostile/" + name, "op": "gather", "semantics": "tf-gpu",
            "inputs": {"params": {"dtype": dtype, "shape": [len(params)], "data": params},
                       "indices": {"dtype": idx_dtype, "shape": [len(idx)], "data": idx}}}))
    return out


# --- Processes: this driver is a child subreaper; its process tree is what gscheck left.
def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def children_of(pid):
    kids = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def state_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
        return text[text.rindex(")") + 2]
    except (OSError, ValueError):
        return "?"


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        cmd = "?"
    return f"pid {pid} ({state_of(pid)}): {cmd[:160]}"


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def tree():
    """Live (not zombie) processes under this driver, parents before children."""
    out, queue = [], children_of(os.getpid())
    while queue:
        pid = queue.pop(0)
        if state_of(pid) not in ("Z", "X", "?"):
            out.append(pid)
        queue += children_of(pid)
    return out


def settle(until):
    """Waits until nothing is left under this driver (or `until`); returns what is left."""
    while True:
        reap()
        left = tree()
        if not left or time.monotonic() >= until:
            return left
        time.sleep(0.02)


def kill_tree():
    for _ in range(250):
        reap()
        left = tree()
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


# --- The run.
def run_gscheck(argv, env, cwd, out_path, err_path):
    """Runs gscheck to its end (bounded); returns (exit code, max RSS in MiB)."""
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                             cwd=cwd)
    deadline = time.monotonic() + GSCHECK_LIMIT_S
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return p.returncode, usage.ru_maxrss / 1024.0
        if time.monotonic() > deadline:
            os.kill(p.pid, signal.SIGKILL)
            os.wait4(p.pid, 0)
            p.returncode = -9
            return None, 0.0
        time.sleep(0.01)


def read_notes(notes_dir, name):
    try:
        with open(os.path.join(notes_dir, name), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


PRINTED = re.compile(r"^(\d+) cases:((?: \d+ [A-Z]+)*)$", re.M)


def check_report(report_path, junit_path, stdout_text, problems):
    """Check 3: the report is what gscheck printed. Returns the report's cases by name."""
    m = None
    for m in PRINTED.finditer(stdout_text):
        pass
    if not m:
        problems.append("gscheck printed no totals line")
        return None
    printed = {"cases": int(m.group(1))}
    words = m.group(2).split()
    for count, verdict in zip(words[::2], words[1::2]):
        printed[verdict] = int(count)
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"report {report_path} is not valid JSON after the run: {e}")
        return None
    if report.get("interrupted") is not None:
        problems.append(f"report says interrupted: {report.get('interrupted')!r}")
    totals = {k: v for k, v in report.get("totals", {}).items() if v}
    want = {k: v for k, v in printed.items() if v}
    if totals != want:
        problems.append(f"report totals {totals} are not what gscheck printed {want} "
                        "(the report was rewritten?)")
    verdicts = {}
    for c in report.get("cases", []):
        verdicts[c.get("verdict")] = verdicts.get(c.get("verdict"), 0) + 1
    if {k: v for k, v in verdicts.items() if v} != {k: v for k, v in want.items() if k != "cases"}:
        problems.append(f"report case verdicts {verdicts} do not add up to its printed "
                        f"totals {want}")
    try:
        root = ET.parse(junit_path).getroot()
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
        printed_failed = printed.get("FAILED", 0) + printed.get("UNSAFE", 0)
        if failed != printed_failed:
            problems.append(f"JUnit has {failed} failures, gscheck printed "
                            f"{printed_failed} FAILED or UNSAFE")
    except (OSError, ET.ParseError) as e:
        problems.append(f"JUnit file is not valid XML: {e}")
    return {c.get("name"): c for c in report.get("cases", [])}


def check_cases(by_name, names, spec, acted, refused, problems):
    """Checks 1 and 2: the triggered cases fail with the class, the others pass."""
    for name in names:
        c = by_name.get(name)
        if c is None:
            problems.append(f"{name}: not in the report")
            continue
        verdict, reason = c.get("verdict"), c.get("reason", "")
        short = f"{name}: {verdict}: {reason[:300]!r}"
        triggered = "trigger" in name and spec["fails"] is not None
        if not triggered:
            if verdict != "PASSED":
                problems.append(f"innocent case failed: {short}")
        elif verdict == "PASSED":
            if not (spec.get("refusable") and refused and not acted):
                problems.append(f"triggered case passed (its misbehaviour went undetected): "
                                f"{short}")
        elif verdict != spec.get("verdict", "UNSAFE") or not re.search(
                spec["fails"], reason) or re.search(MISATTRIBUTED, reason):
            problems.append(f"triggered case has the wrong verdict or class (want "
                            f"{spec.get('verdict', 'UNSAFE')} matching /{spec['fails']}/): "
                            f"{short}")


def check_protections(report_path, text, problems):
    """Holds what the plugin saw from inside its worker (its "protections" notes, one line per
    worker process) against what the report says contained it: a protection that is claimed
    but not on fails the test, whatever the mode's verdicts (a test that passes only because a
    protection it relies on was silently off proves nothing)."""
    try:
        with open(report_path, encoding="utf-8") as f:
            claim = json.load(f)["backend"]["containment"] or ""
    except (OSError, ValueError, KeyError, TypeError):
        return  # check_report names a missing or broken report
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        problems.append("the plugin never noted its protections: nothing shows the containment "
                        f"the report claims ({claim!r}) was on")
        return
    cgroup = re.search(r"cgroup v\d \(([^)]*)\)", claim)
    controllers = cgroup.group(1).split(", ") if cgroup else []
    for line in lines:
        seen = dict(kv.split("=", 1) for kv in line.split("\t") if "=" in kv)
        bad = []
        if claim.startswith("pid, mount"):
            ipc = claim.startswith(("pid, mount, IPC", "pid, mount and IPC"))
            for ns in ("pid", "mnt") + (("ipc",) if ipc else ()):
                if seen.get(f"{ns}_ns") in ("?", os.readlink(f"/proc/self/ns/{ns}")):
                    bad.append(f"the driver's {ns} namespace ({seen.get(f'{ns}_ns')})")
            if seen.get("cwd") != "/":
                bad.append(f"working directory {seen.get('cwd')!r}, not /")
            if seen.get("outside_write") == "writable":
                bad.append("a file outside --worker-writable could be created (root not "
                           "read-only)")
        if "no capabilities" in claim and seen.get("cap_eff", "").strip("0"):
            bad.append(f"capabilities {seen.get('cap_eff')}")
        if re.search(r"(^|, )seccomp", claim) and (seen.get("seccomp") != "2" or
                                                   seen.get("no_new_privs") != "1"):
            bad.append(f"seccomp mode {seen.get('seccomp')!r}, no_new_privs "
                       f"{seen.get('no_new_privs')!r} (filter and 1 claimed)")
        if "pids" in controllers and not seen.get("pids.max", "").isdigit():
            bad.append(f"pids.max {seen.get('pids.max')!r} (a limit claimed)")
        if "memory" in controllers and not (seen.get("memory.max", "").isdigit() and
                                            int(seen["memory.max"]) <= 2**62):
            bad.append(f"memory limit {seen.get('memory.max')!r} (a cap claimed)")
        if bad:
            problems.append(f"the report claims {claim!r}, but the worker saw: " + "; ".join(bad))


class Lures:
    """For root_reach: a listening root-only unix socket (mode 0600) and an abstract one, a
    device node with /dev/null's numbers (mode 0600), a SysV shared memory segment (mode 0600),
    named to the plugin through its environment. `reached()` says which socket took a
    connection."""

    IPC_CREAT, IPC_RMID = 0o1000, 0

    def __init__(self, folder):
        import socket
        os.makedirs(folder)
        self.env, self.socks = {}, []
        path = os.path.join(folder, "root.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        os.chmod(path, 0o600)
        self.env["GSC_HOSTILE_SOCKET"] = path
        a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        name = f"gscheck-hostile-{os.getpid()}"
        a.bind("\0" + name)
        self.env["GSC_HOSTILE_ABSTRACT"] = name
        for sock in (s, a):
            sock.listen(4)
            sock.setblocking(False)
            self.socks.append(sock)
        device = os.path.join(folder, "null")
        os.mknod(device, 0o600 | 0o020000, os.makedev(1, 3))
        self.env["GSC_HOSTILE_DEVICE"] = device
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.shmid = self.libc.shmget(0, 4096, self.IPC_CREAT | 0o600)  # IPC_PRIVATE
        if self.shmid < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        self.env["GSC_HOSTILE_SHMID"] = str(self.shmid)

    def reached(self):
        took = []
        for sock, what in zip(self.socks, ("the root-only socket", "the abstract socket")):
            try:
                sock.accept()[0].close()
                took.append(what)
            except BlockingIOError:
                pass
        return took

    def close(self):
        for sock in self.socks:
            sock.close()
        self.libc.shmctl(self.shmid, self.IPC_RMID, None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gscheck", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--mode", required=True, choices=sorted(EXPECT))
    ap.add_argument("--isolate", default="worker", choices=("worker", "call"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    spec = EXPECT[args.mode]
    become_subreaper()
    if tree():
        print(f"processes under the driver before the run: {[describe(p) for p in tree()]}")
        return 1

    tmp = tempfile.mkdtemp(prefix=f"gscheck_hostile_{args.mode}_")
    notes, out_dir, case_dir = (os.path.join(tmp, d) for d in ("notes", "out", "cases"))
    for d in (notes, out_dir, case_dir, os.path.join(notes, "mnt")):
        os.makedirs(d)
    named = cases(spec.get("cases", "two"))
    for name, case in named:
        with open(os.path.join(case_dir, name.split("/")[1] + ".json"), "w") as f:
            json.dump(case, f)
    report, junit = os.path.join(out_dir, "report.json"), os.path.join(out_dir, "report.xml")
    env = dict(os.environ, GSC_HOSTILE_DIR=notes, GSC_HOSTILE_REPORT=report)
    lures = Lures(os.path.join(tmp, "lures")) if spec.get("lures") else None
    if lures:
        env.update(lures.env)
    timeout = spec.get("timeout", DEFAULT_TIMEOUT_S)
    plugin = "plugin:" + os.path.abspath(args.plugin)
    argv = [os.path.abspath(args.gscheck), "run", "--backend", plugin,
            "--sweep", "0", "--repeat", "1", "--jobs", "1", "--isolate", args.isolate,
            "--case-timeout", "60", "--quiet", "--report", report, "--junit", junit,
            # One call per case: each mode's verdicts and memory bound are about that call, and
            # shrinking a failure would call the plugin again (under ASan, forged_huge's extra
            # calls alone lift gscheck past its 160 MiB bound: 163-164 MiB, 2026-12-06).
            "--shrink-time", "0",
            # the notes folder is the plugins' one writable place besides their /dev/shm
            "--worker-writable", notes,
            *(["--timeout", str(timeout)] if timeout else []), *spec.get("args", []), case_dir]
    stdout_path, stderr_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
    problems, by_name = [], None
    try:
        cwd = case_dir if spec.get("cwd_in_cases") else tmp
        code, rss = run_gscheck(argv, env, cwd, stdout_path, stderr_path)
        left = settle(time.monotonic() + SETTLE_S)
        left_text = [describe(p) for p in left]
        with open(stdout_path, encoding="utf-8", errors="replace") as f:
            stdout_text = f.read()
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            stderr_text = f.read()
        acted, refused = read_notes(notes, "acted"), read_notes(notes, "refused")
        if code is None:
            problems.append(f"gscheck did not end within {GSCHECK_LIMIT_S} s")
        elif code not in (0, 1):
            problems.append(f"gscheck exited with {code} (0 or 1 expected)")
        if spec.get("needs_sandbox") and "containment (--unsafe-no-sandbox): process group only" \
                in stderr_text:
            print(f"SKIPPED {args.mode}: this machine gives the worker no namespaces, and only "
                  "they stop this plugin")
            shutil.rmtree(tmp, ignore_errors=True)
            for n in os.listdir("/dev/shm"):  # what the unsandboxed plugin left there
                if n.startswith(("gscheck-hostile", "hostile-")):
                    os.unlink(os.path.join("/dev/shm", n))
            return 77
        by_name = check_report(report, junit, stdout_text, problems)
        if by_name is not None:
            check_cases(by_name, [n for n, _ in named], spec, acted, refused, problems)
        check_protections(report, read_notes(notes, "protections"), problems)
        if spec.get("must_try") and not (acted or refused):
            problems.append("the plugin's attempt never ran: the test proves nothing")
        if spec.get("shm_clean"):
            left_shm = [n for n in os.listdir("/dev/shm") if n.startswith("gscheck-hostile")]
            if left_shm:
                problems.append(f"the worker's /dev/shm files outlived the run: {left_shm}")
        if spec.get("never_acts") and acted:
            problems.append(f"the plugin's attempt succeeded: {acted.strip()}")
        reached = lures.reached() if lures else []
        if reached:
            problems.append(f"the worker connected to {', '.join(reached)}")
        if "max_rss_mib" in spec and rss > spec["max_rss_mib"]:
            problems.append(f"gscheck or a worker reached {rss:.0f} MiB resident "
                            f"(bound {spec['max_rss_mib']} MiB)")
        if left:
            problems.append(f"{len(left)} process(es) outlived gscheck: {left_text}")
    finally:
        kill_tree()
        if lures:
            lures.close()
        mnt = os.path.join(notes, "mnt")
        if os.path.ismount(mnt):
            subprocess.run(["umount", "-l", mnt], check=False)

    label = f"{args.mode} (--isolate {args.isolate})"
    print(f"{label}: gscheck exit {code}, max RSS {rss:.0f} MiB")
    for name, c in sorted((by_name or {}).items()):
        print(f"  {name}: {c.get('verdict')}: {c.get('reason', '')[:200]!r}")
    print("gscheck stdout tail:\n  " + "\n  ".join(stdout_text.strip().splitlines()[-8:]))
    if stderr_text.strip():
        print("gscheck stderr tail:\n  " + "\n  ".join(stderr_text.strip().splitlines()[-6:]))
    for what, text in (("acted", acted), ("refused", refused),
                       ("daemons", read_notes(notes, "daemons")),
                       ("protections", read_notes(notes, "protections"))):
        if text:
            print(f"plugin notes ({what}):\n  " + "\n  ".join(text.strip().splitlines()[:16]))
    if problems:
        print(f"FAIL {label}:\n  - " + "\n  - ".join(problems))
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        return 1
    print(f"PASS {label}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
