#!/usr/bin/env python3
"""End-to-end tests of shrinking (harness/shrink.h): a plugin with a planted bug (the last of more
than 20 index rows reads the row before it) fails a 30-row gather_nd case; `gscheck run` and
`gscheck eval` save the smallest case that fails the same way (21 rows, rank minimal) beside the
original, the report names it with steps and time, and the minimal case replays: FAILED on the
buggy plugin, PASSED on the honest one and on the reference. Reports are validated against
reports/report.schema.json when jsonschema is installed.

usage: shrink_test.py --gscheck PATH --source DIR --bug-plugin LIB --plugin LIB [unittest args]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import jsonschema
except ImportError:
    jsonschema = None

GSCHECK = SOURCE = BUG_PLUGIN = PLUGIN = ""


def case_30_rows():
    # params [8, 3], indices [5, 6, 1]: 30 rows, each row's slice different from the one before.
    rows = [(i * 5 + 3) % 8 for i in range(30)]
    return {
        "gscheck_case": 1,
        "name": "gather_nd/thirty_rows",
        "op": "gather_nd",
        "semantics": "tf-gpu",
        "inputs": {
            "params": {"dtype": "float32", "shape": [8, 3], "data": [float(i) for i in range(24)]},
            "indices": {"dtype": "int32", "shape": [5, 6, 1], "data": rows},
        },
    }


class Shrink(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gscheck_shrink_test_")
        self.case = os.path.join(self.tmp.name, "thirty_rows.json")
        with open(self.case, "w") as f:
            json.dump(case_30_rows(), f)
        self.report = os.path.join(self.tmp.name, "out", "report.json")
        os.makedirs(os.path.dirname(self.report))

    def tearDown(self):
        self.tmp.cleanup()

    def gscheck(self, *args):
        return subprocess.run([GSCHECK, *args], capture_output=True, text=True, timeout=240)

    def load_report(self):
        with open(self.report) as f:
            r = json.load(f)
        if jsonschema is not None:
            with open(os.path.join(SOURCE, "reports", "report.schema.json")) as f:
                jsonschema.Draft202012Validator(json.load(f)).validate(r)
        return r

    def check_minimal(self, shrunk):
        self.assertTrue(os.path.isfile(shrunk["file"]), shrunk)
        self.assertEqual(os.path.dirname(shrunk["file"]),
                         os.path.join(os.path.dirname(self.report), "failed_cases"))
        # The fewest rows that still fail, flattened into one row dimension; params lost their
        # slice dimension (rank 1) and rows they do not need.
        self.assertEqual(shrunk["inputs"]["indices"]["shape"], [21, 1], shrunk)
        self.assertEqual(len(shrunk["inputs"]["params"]["shape"]), 1, shrunk)
        self.assertGreater(shrunk["kept"], 0)
        self.assertGreaterEqual(shrunk["tried"], shrunk["kept"])
        self.assertFalse(shrunk["limited"], shrunk)
        with open(shrunk["file"]) as f:
            minimal = json.load(f)
        self.assertIn("shrunk from " + self.case, minimal["description"])
        self.assertIn("expect", minimal)
        # It replays: the bug fails it, an honest plugin and the reference pass it.
        bug = self.gscheck("eval", "--backend", "plugin:" + BUG_PLUGIN, "--shrink-time", "0",
                           shrunk["file"])
        self.assertEqual(bug.returncode, 1, bug.stdout + bug.stderr)
        for backend in ["plugin:" + PLUGIN, "reference"]:
            ok = self.gscheck("eval", "--backend", backend, shrunk["file"])
            self.assertEqual(ok.returncode, 0, backend + ": " + ok.stdout + ok.stderr)

    def test_run_saves_the_minimal_case(self):
        p = self.gscheck("run", "--backend", "plugin:" + BUG_PLUGIN, "--sweep", "0", "--report",
                         self.report, "--shrink-time", "60", self.case)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("minimal (", p.stdout)
        self.assertIn("indices [21,1]", p.stdout)
        r = self.load_report()
        (c,) = r["cases"]
        self.assertEqual(c["verdict"], "FAILED")
        # The original stays the case's own: its file, its replay line.
        self.assertEqual(c["file"], self.case)
        self.assertIn(self.case, c["repro"])
        self.assertEqual(c["inputs"]["indices"]["shape"], [5, 6, 1])
        self.check_minimal(c["shrunk"])
        self.assertIn(c["shrunk"]["file"], c["shrunk"]["repro"])

    def test_eval_with_a_report_shrinks_too(self):
        p = self.gscheck("eval", "--backend", "plugin:" + BUG_PLUGIN, "--report", self.report,
                         "--shrink-time", "60", self.case)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        (c,) = self.load_report()["cases"]
        self.check_minimal(c["shrunk"])

    def test_shrink_time_zero_saves_nothing(self):
        p = self.gscheck("run", "--backend", "plugin:" + BUG_PLUGIN, "--sweep", "0", "--report",
                         self.report, "--shrink-time", "0", self.case)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        (c,) = self.load_report()["cases"]
        self.assertNotIn("shrunk", c)
        self.assertEqual(glob.glob(os.path.join(self.tmp.name, "out", "failed_cases", "*")), [])

    def test_a_passing_run_shrinks_nothing(self):
        p = self.gscheck("run", "--backend", "plugin:" + PLUGIN, "--sweep", "0", "--report",
                         self.report, self.case)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        (c,) = self.load_report()["cases"]
        self.assertNotIn("shrunk", c)

    def test_bad_values_are_refused_by_name(self):
        for flag, value in [("--shrink-time", "-1"), ("--shrink-time", "x"),
                            ("--shrink-total", "1e9")]:
            p = self.gscheck("run", "--backend", "reference", "--sweep", "0", flag, value,
                             self.case)
            self.assertEqual(p.returncode, 2, flag + " " + value)
            self.assertIn(flag, p.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gscheck", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--bug-plugin", required=True)
    ap.add_argument("--plugin", required=True)
    args, rest = ap.parse_known_args()
    GSCHECK, SOURCE = args.gscheck, args.source
    BUG_PLUGIN, PLUGIN = args.bug_plugin, args.plugin
    unittest.main(argv=[sys.argv[0]] + rest)
