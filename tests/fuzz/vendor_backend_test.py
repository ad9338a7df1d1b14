#!/usr/bin/env python3
"""The fuzz targets grading a vendor's plugin ($GSCHECK_FUZZ_BACKEND, scripts/fuzz.sh --backend),
replayed without libFuzzer over a fixed set of seeded random inputs: a plugin that crashes on
every call is a finding (shrunk, saved with its replay line), never the end of the run; a correct
plugin with its known declines gives no finding, and without the file its declines are findings
too; an uninstrumented plugin is said to be one. Each kind of finding is reported once.

usage: vendor_backend_test.py --replay PATH --crash-plugin LIB --example-plugin LIB --declines FILE
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

REPLAY = CRASH = EXAMPLE = DECLINES = ""


class VendorBackend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gscheck_vendor_fuzz_")
        cls.inputs = os.path.join(cls.tmp.name, "inputs")
        os.makedirs(cls.inputs)
        rng = random.Random(20261206)
        for i in range(3000):
            with open(os.path.join(cls.inputs, "%04d" % i), "wb") as f:
                f.write(bytes(rng.randrange(256) for _ in range(rng.randrange(4, 160))))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def replay(self, target, backend, known=None):
        cases = tempfile.mkdtemp(dir=self.tmp.name)
        env = {**os.environ, "GSCHECK_FUZZ_BACKEND": backend, "GSCHECK_REGRESSIONS_DIR": cases}
        env.pop("GSCHECK_FUZZ_KNOWN_FAILURES", None)
        if known:
            env["GSCHECK_FUZZ_KNOWN_FAILURES"] = known
        p = subprocess.run([REPLAY, "--target", target, self.inputs], capture_output=True,
                           text=True, timeout=600, env=env)
        return p, sorted(glob.glob(os.path.join(cases, "*.json")))

    def test_a_crashing_plugin_is_a_finding_not_the_end(self):
        p, files = self.replay("gather", "plugin:" + CRASH)  # it crashes on every call
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("has no SanitizerCoverage counters", p.stderr)
        findings = [l for l in p.stderr.splitlines() if l.startswith("gscheck fuzz: FINDING")]
        kinds = [l for l in p.stderr.splitlines() if l.startswith("  kind: ")]
        # Each kind (a crash where TensorFlow gives a tensor, or an error) once, however often the
        # plugin crashed, each with its case file.
        self.assertGreaterEqual(len(findings), 1, p.stderr[-3000:])
        self.assertLessEqual(len(findings), 3, p.stderr[-3000:])
        self.assertEqual(len(kinds), len(set(kinds)), kinds)
        self.assertEqual(len(files), len(findings))
        self.assertIn("crashed", p.stderr)
        self.assertIn("replay: gscheck eval --backend plugin:" + CRASH, p.stderr)
        with open(files[0]) as f:
            case = json.load(f)
        self.assertEqual(case["op"], "gather")
        self.assertIn("expect", case)

    def test_known_declines_are_no_findings(self):
        p, files = self.replay("gather_nd", "plugin:" + EXAMPLE, DECLINES)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("FINDING", p.stderr)
        self.assertEqual(files, [])
        # Without the file, the same declines are findings, and the run still ends normally.
        p, files = self.replay("gather_nd", "plugin:" + EXAMPLE)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("declined a case inside its declared contract", p.stderr)
        self.assertGreaterEqual(len(files), 1)

    def test_bad_settings_are_named(self):
        p, _ = self.replay("gather", "cuda:nothing")
        self.assertEqual(p.returncode, 2)
        self.assertIn("expected plugin:PATH or python:MODULE", p.stderr)
        p, _ = self.replay("gather", "plugin:/nonexistent/lib.so")
        self.assertEqual(p.returncode, 2)
        self.assertIn("/nonexistent/lib.so", p.stderr)
        p, _ = self.replay("gather", "plugin:" + EXAMPLE, "/nonexistent/known.json")
        self.assertEqual(p.returncode, 2)
        self.assertIn("/nonexistent/known.json", p.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    for a in ("--replay", "--crash-plugin", "--example-plugin", "--declines"):
        ap.add_argument(a, required=True)
    args, rest = ap.parse_known_args()
    REPLAY, CRASH, EXAMPLE, DECLINES = (args.replay, args.crash_plugin, args.example_plugin,
                                        args.declines)
    unittest.main(argv=[sys.argv[0]] + rest)
