#!/usr/bin/env python3
"""End-to-end tests of sharded runs, `gscheck report merge|diff`, progress output and time
budgets (docs/report_format.md). Real runs of the built gscheck; reports are validated against
reports/report.schema.json when jsonschema is installed.

usage: report_test.py --gscheck PATH --source DIR --release-plugin LIB [unittest args]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

try:
    import jsonschema
except ImportError:  # the schema checks are skipped, and say so
    jsonschema = None

GSCHECK = ""
SOURCE = ""
RELEASE_PLUGIN = ""

# What a case is, apart from timings and replay commands (which name the shard).
CASE_FIELDS = ("name", "file", "op", "semantics", "inputs", "bad_indices_policy", "backend",
               "verdict", "outcome", "reason", "checks", "runs", "differing_runs")


def essence(report):
    return [{k: c[k] for k in CASE_FIELDS} for c in report["cases"]]


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gscheck_report_test_")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def gscheck(self, *args, env=None, timeout=600):
        p = subprocess.run([GSCHECK, *args], capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, **(env or {})})
        return p.returncode, p.stdout, p.stderr

    def load(self, name):
        with open(self.path(name)) as f:
            report = json.load(f)
        if jsonschema is not None:
            with open(os.path.join(SOURCE, "reports", "report.schema.json")) as f:
                jsonschema.Draft202012Validator(json.load(f)).validate(report)
        return report


def golden(*ops):
    return [os.path.join(SOURCE, "corpus", "golden", op) for op in ops]


class ShardTest(Base):
    # Case files and a sweep; corpus/golden/gather is left out for its 8-second trap case.
    @property
    def RUN(self):
        return ("run", "--backend", "cuda-emu", "--seed", "11", "--sweep", "400", "--quiet",
                *golden("gather_nd", "scatter_nd", "tensor_scatter_nd"))

    def run_shards(self, n):
        for k in range(1, n + 1):
            rc, out, err = self.gscheck(*self.RUN, "--shard", f"{k}/{n}",
                                        "--report", self.path(f"s{k}.json"))
            self.assertEqual(rc, 0, out + err)
            self.assertIn(f"shard {k}/{n}", out)
        return [self.path(f"s{k}.json") for k in range(1, n + 1)]

    def test_union_of_shards_is_the_unsharded_run(self):
        rc, out, err = self.gscheck(*self.RUN, "--report", self.path("whole.json"))
        self.assertEqual(rc, 0, out + err)
        whole = self.load("whole.json")
        parts = self.run_shards(3)
        sizes = [len(self.load(os.path.basename(p))["cases"]) for p in parts]
        self.assertEqual(sum(sizes), len(whole["cases"]))
        self.assertTrue(all(s < len(whole["cases"]) * 0.4 for s in sizes), sizes)
        # Merge in a scrambled order: the cases come back in the unsharded run's order.
        rc, out, err = self.gscheck("report", "merge", parts[2], parts[0], parts[1],
                                    "-o", self.path("all.json"), "--junit", self.path("all.xml"))
        self.assertEqual(rc, 0, out + err)
        merged = self.load("all.json")
        self.assertEqual(essence(merged), essence(whole))
        for key in ("totals", "per_op", "matrix", "seed", "sweep", "sweep_size",
                    "sweep_boundary_fraction"):
            self.assertEqual(merged[key], whole[key], key)
        self.assertIsNone(merged["shard"])
        self.assertEqual(merged["merged_from"], [parts[2], parts[0], parts[1]])
        self.assertIn("total", out)  # the per-op table of the merged run
        suites = ET.parse(self.path("all.xml")).getroot()
        self.assertEqual(int(suites.get("tests")), len(whole["cases"]))

    def test_merge_refuses_what_is_not_one_run(self):
        parts = self.run_shards(2)
        rc, out, err = self.gscheck("run", "--backend", "cuda-emu", "--seed", "12", "--sweep",
                                    "400", "--quiet", "--shard", "2/2",
                                    "--report", self.path("other_seed.json"),
                                    *golden("gather_nd"))
        self.assertEqual(rc, 0, out + err)
        # Another boundary fraction draws other values: not a shard of the same run.
        rc, out, err = self.gscheck(*self.RUN, "--shard", "2/2", "--boundary-fraction", "0",
                                    "--report", self.path("other_fraction.json"))
        self.assertEqual(rc, 0, out + err)
        for args, message in [
            ([parts[0], self.path("other_seed.json")], "differ in seed (11 vs 12)"),
            ([parts[0], self.path("other_fraction.json")],
             "differ in sweep boundary fraction (0.500000 vs 0.000000)"),
            ([parts[0], parts[0]], "are both shard 1/2"),
            ([parts[0]], "shard(s) 2 of 2 missing"),
        ]:
            rc, out, err = self.gscheck("report", "merge", *args, "-o", self.path("m.json"))
            self.assertEqual(rc, 2, (args, out, err))
            self.assertIn(message, err, args)
            self.assertFalse(os.path.exists(self.path("m.json")))
        rc, out, err = self.gscheck("report", "merge", "--force", parts[0],
                                    self.path("other_seed.json"), "-o", self.path("m.json"))
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(len(self.load("m.json")["cases"]),
                         len(self.load("s1.json")["cases"]) +
                         len(self.load("other_seed.json")["cases"]))

    def test_bad_command_lines(self):
        self.write_garbage = self.path("garbage.json")
        with open(self.write_garbage, "w") as f:
            f.write('{"gscheck_report": 1, "command": "run"}')
        for args, message in [
            (["run", "--shard", "3/2"], "--shard: expected K/N with 1 <= K <= N"),
            (["run", "--shard", "0/2"], "--shard: expected K/N"),
            (["run", "--shard", "x"], "--shard: expected K/N"),
            (["run", "--time", "0"], "--time: expected an integer in [1,"),
            (["report"], "which report command"),
            (["report", "frob"], "unknown report command 'frob'"),
            (["report", "merge", "x.json"], "merge needs -o OUT.json"),
            (["report", "merge", "-o", "o.json", self.path("absent.json")], "cannot open"),
            (["report", "merge", "-o", "o.json", self.write_garbage], 'missing "argv"'),
            (["report", "diff", "a.json"], "diff takes two reports"),
        ]:
            rc, out, err = self.gscheck(*args)
            self.assertEqual(rc, 2, (args, out, err))
            self.assertIn(message, err, args)


class DiffTest(Base):
    def release_report(self, release, name):
        rc, out, err = self.gscheck("run", "--backend", "plugin:" + RELEASE_PLUGIN, "--seed", "5",
                                    "--sweep", "1500", "--repeat", "1", "--quiet",
                                    "--known-failures", TEST_DECLINES, "--report", self.path(name),
                                    env={"GSCHECK_RELEASE": str(release)})
        return rc, out + err

    def test_diff_catches_a_planted_regression(self):
        rc, log = self.release_report(1, "r1.json")
        self.assertEqual(rc, 0, log)
        rc, log = self.release_report(2, "r2.json")
        self.assertEqual(rc, 1, log)  # release 2 fails its own run too
        r1, r2 = self.load("r1.json"), self.load("r2.json")
        # The golden cases are the same in both runs (the sweeps are not: release 2 claims
        # fewer index dtypes, so the same seed draws other cases, which diff must not pair).
        golden_passed = [c for c in r1["cases"] if c["file"] and c["verdict"] == "PASSED"]
        passed_int64 = [c["name"] for c in golden_passed
                        if c["inputs"]["indices"]["dtype"] == "int64"]
        bad_index = [c["name"] for c in golden_passed if c["outcome"].startswith("error bad_index")
                     and c["inputs"]["indices"]["dtype"] == "int32"
                     and c["inputs"]["params"]["shape"][0] > 0]
        self.assertTrue(passed_int64 and bad_index, "no golden case the bugs affect")
        rc, out, err = self.gscheck("report", "diff", self.path("r1.json"), self.path("r2.json"))
        self.assertEqual(rc, 1, out + err)
        self.assertIn("verdict: REGRESSION", out)
        self.assertRegex(out, r"note: \d+ cases have the same name but other inputs")
        for name in bad_index:
            self.assertRegex(out, r"new failure +PASSED +FAILED +" + re.escape(name) + "\n")
        for name in passed_int64:
            self.assertRegex(out, r"lost +PASSED +UNIMPLEMENTED +" + re.escape(name) + "\n")
        self.assertRegex(out, r"REGRESSED gather float32 int64 -: \d+ passed.* -> \d+ unimplemented")

        rc, out, err = self.gscheck("report", "diff", "--json", self.path("r1.json"),
                                    self.path("r2.json"))
        self.assertEqual(rc, 1, out + err)
        d = json.loads(out)
        self.assertTrue(d["regression"])
        new_failures = {c["name"] for c in d["cases"] if c["change"] == "new failure"}
        self.assertTrue(set(bad_index) <= new_failures, new_failures)
        # Every other new failure is a redrawn sweep case that fails (release 2's clamping).
        for c in d["cases"]:
            if c["change"] == "new failure" and c["name"] not in bad_index:
                self.assertTrue(c["name"].startswith("sweep/5/"), c)
        self.assertEqual({c["name"] for c in d["cases"] if c["change"] == "lost"},
                         set(passed_int64))
        self.assertEqual(d["summary"]["lost"], len(passed_int64))
        self.assertTrue(any(r["regression"] and r["index_dtype"] == "int64" for r in d["matrix"]))

        # The other way round is all fixes and gains; a report against itself has no change.
        rc, out, err = self.gscheck("report", "diff", self.path("r2.json"), self.path("r1.json"))
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r"\d+ fixed")
        self.assertIn("verdict: no regression", out)
        rc, out, err = self.gscheck("report", "diff", self.path("r1.json"), self.path("r1.json"))
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f"{len(r1['cases'])} cases unchanged\n", out)


class ProgressTest(Base):
    def setUp(self):
        super().setUp()
        self.empty = self.path("no_case_files")  # the sweep only
        os.makedirs(self.empty)

    def test_terminal_shows_a_progress_line(self):
        # `script` gives gscheck a terminal: the line is redrawn in place with \r.
        cmd = f"{GSCHECK} run --backend cuda-emu --seed 3 --time 2 {self.empty}"
        p = subprocess.run(["script", "-qefc", cmd, "/dev/null"], capture_output=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        text = p.stdout.decode(errors="replace")
        self.assertEqual(p.returncode, 0, text)
        draws = re.findall(r"\r\x1b\[K(\d+) cases, (\d+) cases/s, (\d+) failures?, (\d+)s of 2s left",
                           text)
        self.assertGreaterEqual(len(draws), 5, text[-2000:])
        counts = [int(d[0]) for d in draws]
        self.assertEqual(counts, sorted(counts))
        self.assertGreater(counts[-1], counts[0])

    def test_terminal_line_has_total_and_eta_for_a_sweep(self):
        cmd = f"{GSCHECK} run --backend cuda-emu --seed 3 --sweep 4000 {self.empty}"
        p = subprocess.run(["script", "-qefc", cmd, "/dev/null"], capture_output=True,
                           timeout=300, stdin=subprocess.DEVNULL)
        text = p.stdout.decode(errors="replace")
        self.assertEqual(p.returncode, 0, text[-2000:])
        self.assertRegex(text, r"\r\x1b\[K\d+/\d+ cases \(\d+%\), \d+ cases/s, 0 failures, ETA \d+")

    def test_plain_lines_when_not_a_terminal_and_none_when_quiet(self):
        rc, out, err = self.gscheck("run", "--backend", "cuda-emu", "--seed", "3", "--time", "3",
                                    self.empty, env={"GSCHECK_PROGRESS_INTERVAL": "1"})
        self.assertEqual(rc, 0, out + err)
        lines = re.findall(r"^gscheck: \d+ cases, \d+ cases/s, \d+ failures?, \d+s of 3s left$",
                           err, re.M)
        self.assertGreaterEqual(len(lines), 2, err)
        self.assertNotIn("\r", err)
        rc, out, err = self.gscheck("run", "--backend", "cuda-emu", "--seed", "3", "--time", "3",
                                    "--quiet", self.empty, env={"GSCHECK_PROGRESS_INTERVAL": "1"})
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(err, "")


class TimeBudgetTest(Base):
    def setUp(self):
        super().setUp()
        self.empty = self.path("no_case_files")  # the budget is the sweep's: only the sweep
        os.makedirs(self.empty)

    def test_time_10_stops_within_a_second_of_its_budget(self):
        # No --report: writing ~200k cases of JSON takes seconds of its own, after the run.
        start = time.monotonic()
        rc, out, err = self.gscheck("run", "--seed", "9", "--time", "10", "--quiet", self.empty)
        wall = time.monotonic() - start
        self.assertEqual(rc, 0, out + err)
        m = re.search(r"time budget 10 s \(sweep ([0-9.]+) s, run ([0-9.]+) s\)", out)
        self.assertTrue(m, out)
        sweep, run = float(m.group(1)), float(m.group(2))
        # The sweep, the run and the whole process (start-up, the final table) end within a
        # second of the budget.
        self.assertGreaterEqual(sweep, 10)
        self.assertLess(sweep - 10, 1.0, out)
        self.assertLess(run - 10, 1.0, out)
        self.assertLess(wall - 10, 1.0, wall)
        print(f"--time 10: sweep {sweep:.3f} s, run {run:.3f} s, process {wall:.3f} s",
              file=sys.stderr)

    def test_time_budget_run_replays_with_sweep(self):
        # No large cases: this is about the budget's overrun (one case), and a large case on
        # cuda-emu can take a quarter of a second on its own.
        rc, out, err = self.gscheck("run", "--seed", "21", "--time", "2", "--shard", "2/3",
                                    "--large-fraction", "0", "--quiet", "--report",
                                    self.path("t.json"), self.empty)
        self.assertEqual(rc, 0, out + err)
        r = self.load("t.json")
        reached = r["sweep"]
        self.assertGreater(reached, 100)
        self.assertEqual(r["time_budget_s"], 2)
        self.assertGreaterEqual(r["sweep_elapsed_s"], 2)
        self.assertLess(r["sweep_elapsed_s"] - 2, 1.0)
        # The budget is checked before each case, so the overrun is at most one case; no case
        # comes near the second allowed.
        worst = max(c["elapsed_ms"] for c in r["cases"])
        self.assertLess(worst, 250, worst)
        print(f"--time 2: sweep {r['sweep_elapsed_s']:.4f} s, slowest case {worst:.2f} ms",
              file=sys.stderr)
        self.assertIn(f"--sweep {reached} --size 30 --large-fraction 0 --shard 2/3)", out)
        rc, out, err = self.gscheck("run", "--seed", "21", "--sweep", str(reached), "--shard",
                                    "2/3", "--large-fraction", "0", "--quiet", "--report",
                                    self.path("replay.json"), self.empty)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(essence(self.load("replay.json")), essence(r))


class MergeKeepsGradingTest(Base):
    """Merged shards keep what each shard's grading said: XFAIL/XPASS and the entry that matched
    them, the known-failures file, --strict, and that a shard did not finish."""

    def shard(self, k, n, known, extra=()):
        rc, out, err = self.gscheck("run", "--backend", "plugin:" + RELEASE_PLUGIN, "--seed", "5",
                                    "--sweep", "600", "--repeat", "1", "--quiet",
                                    "--known-failures", known, "--shard", f"{k}/{n}",
                                    "--report", self.path(f"k{k}.json"), *extra,
                                    env={"GSCHECK_RELEASE": "2"})
        self.assertEqual(rc, 0, out + err)  # release 2's failures are all declared
        return self.path(f"k{k}.json")

    def test_xfail_known_failures_and_interruption_survive_a_merge(self):
        known = self.path("known.json")
        with open(known, "w") as f:
            declines = json.load(open(TEST_DECLINES))["known"]
            json.dump({"gscheck_known_failures": 2, "known": declines + [
                {"id": "clamps", "when": {"ops": ["gather"], "expected": "bad_index"},
                 "forgives": {"output": True},
                 "reason": "release 2 clamps an out-of-range index", "link": "tests/tools"}]}, f)
        parts = [self.shard(k, 2, known) for k in (1, 2)]
        xfail = sum(self.load(os.path.basename(p))["totals"]["XFAIL"] for p in parts)
        self.assertGreater(xfail, 0)
        rc, out, err = self.gscheck("report", "merge", *parts, "-o", self.path("m.json"),
                                    "--junit", self.path("m.xml"))
        self.assertEqual(rc, 0, out + err)
        m = self.load("m.json")
        self.assertEqual(m["totals"]["XFAIL"], xfail)
        self.assertEqual(m["known_failures"], known)
        self.assertIsNone(m["interrupted"])
        marked = [c for c in m["cases"] if c["verdict"] == "XFAIL"
                  and c["known_failure"]["entry"] == "clamps"]
        self.assertTrue(marked)
        self.assertTrue(all(c["known_failure"]["reason"].startswith("release 2") for c in marked))
        self.assertEqual(int(ET.parse(self.path("m.xml")).getroot().get("failures")), 0)

        # An UNSAFE case an entry describes fails the merged run with exit 4 (its only kind of
        # failure), never 0; one nothing describes, with exit 1.
        for described, want in ((True, 4), (False, 1)):
            copies = []
            for part in parts:
                with open(part) as f:
                    copies.append(json.load(f))
            first = next(c for r in copies for c in r["cases"] if c["verdict"] == "XFAIL")
            first["verdict"] = "UNSAFE"
            if not described:
                del first["known_failure"]
            for k, r in enumerate(copies):
                with open(self.path(f"u{k}.json"), "w") as f:
                    json.dump(r, f)
            rc, out, err = self.gscheck("report", "merge", self.path("u0.json"),
                                        self.path("u1.json"), "-o", self.path("u.json"))
            self.assertEqual(rc, want, out + err)
            self.assertIn("1 UNSAFE", out)
            self.assertEqual("(1 described by known failures)" in out, described, out)

        # Another known-failures file grades other verdicts: not shards of one run.
        other = self.path("other.json")
        with open(other, "w") as f:
            json.dump({"gscheck_known_failures": 2, "known": []}, f)
        rc, out, err = self.gscheck("run", "--backend", "plugin:" + RELEASE_PLUGIN, "--seed", "5",
                                    "--sweep", "600", "--repeat", "1", "--quiet",
                                    "--known-failures", other, "--shard", "2/2",
                                    "--report", self.path("o2.json"),
                                    env={"GSCHECK_RELEASE": "2"})
        self.assertEqual(rc, 1, out + err)
        rc, out, err = self.gscheck("report", "merge", parts[0], self.path("o2.json"),
                                    "-o", self.path("x.json"))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("differ in known failures", err)

        # A shard that did not finish leaves the merged run unfinished, and its JUnit failing.
        with open(parts[1]) as f:
            r = json.load(f)
        r["interrupted"] = "SIGTERM"
        with open(parts[1], "w") as f:
            json.dump(r, f)
        rc, out, err = self.gscheck("report", "merge", *parts, "-o", self.path("i.json"),
                                    "--junit", self.path("i.xml"))
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.load("i.json")["interrupted"], parts[1] + ": SIGTERM")
        with open(self.path("i.xml")) as f:
            self.assertIn('type="INTERRUPTED"', f.read())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gscheck", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--release-plugin", default="")
    args, rest = parser.parse_known_args()
    GSCHECK = os.path.abspath(args.gscheck)
    SOURCE = os.path.abspath(args.source)
    TEST_DECLINES = os.path.join(SOURCE, "tests", "tools", "plugins", "test_plugin_declines.json")
    RELEASE_PLUGIN = os.path.abspath(args.release_plugin) if args.release_plugin else ""
    if not RELEASE_PLUGIN:
        DiffTest = unittest.skip("no --release-plugin given")(DiffTest)
        MergeKeepsGradingTest = unittest.skip("no --release-plugin given")(MergeKeepsGradingTest)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
