#!/usr/bin/env python3
"""End-to-end tests of `gscheck bench` (docs/performance.md "gscheck bench"): an honest plugin is
timed with its ratios, each timing hack of tests/tools/plugins/bench_hack_plugin.c is FAILED
with its reason and no speed, and a bad problems file is refused naming the field. Reports are
validated against reports/bench_report.schema.json when jsonschema is installed.

usage: bench_test.py --gscheck PATH --source DIR --hack-plugin LIB [unittest args]
"""
import argparse
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

GSCHECK = SOURCE = HACK_PLUGIN = ""

PROBLEMS = {"problems": [{"op": "gather_nd", "dtype": "float32", "slice_bytes": 64,
                          "indices": ["uniform", "zipf"], "table_bytes": 65536,
                          "index_count": 1000}]}


class Bench(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gscheck_bench_test_")
        self.problems = os.path.join(self.tmp.name, "problems.json")
        with open(self.problems, "w") as f:
            json.dump(PROBLEMS, f)

    def tearDown(self):
        self.tmp.cleanup()

    def bench(self, hack, *extra):
        report = os.path.join(self.tmp.name, "bench.json")
        p = subprocess.run([GSCHECK, "bench", "--backend", "plugin:" + HACK_PLUGIN,
                            "--problems", self.problems, "--min-time", "0.01",
                            "--repetitions", "2", "--report", report, *extra],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "GSCHECK_BENCH_HACK": hack})
        r = None
        if os.path.exists(report):
            with open(report) as f:
                r = json.load(f)
            if jsonschema is not None:
                with open(os.path.join(SOURCE, "reports", "bench_report.schema.json")) as f:
                    jsonschema.Draft202012Validator(json.load(f)).validate(r)
        return p, r

    def plugin_results(self, r):
        return [p["results"][0] for p in r["problems"]]

    def test_honest_plugin_is_timed_with_its_ratios(self):
        p, r = self.bench("honest")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(r["problems"]), 2)
        for res in self.plugin_results(r):
            self.assertEqual(res["verdict"], "PASSED")
            self.assertGreater(res["gbps"], 0)
            self.assertGreater(res["ratio_to_copy"], 0)
            self.assertEqual(len(res["samples_s"]), 2)
            self.assertIn("reference", res["speedup_over"])
        for prob in r["problems"]:
            self.assertEqual(prob["bytes_moved"], 1000 * 4 + 2 * 1000 * 64)
            self.assertGreater(prob["copy"]["gbps"], 0)
            self.assertEqual(prob["results"][1]["verdict"], "PASSED")  # the reference
        self.assertIn("gather_nd/float32/64B/zipf/table=64KiB/n=1000", p.stdout)

    def assert_failed(self, hack, reason):
        p, r = self.bench(hack)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        for res in self.plugin_results(r):
            self.assertEqual(res["verdict"], "FAILED", res)
            self.assertIn(reason, res["reason"])
            self.assertNotIn("gbps", res)  # a wrong kernel gets no speed
        self.assertIn("FAILED: " , p.stdout)
        return r

    def test_result_cached_by_shape_fails(self):
        # Every input set has the first one's shape: a replayed output is wrong (on the first
        # problem at its second set; the second problem meets the first one's output at once).
        r = self.assert_failed("cache", "before timing, input set ")
        self.assertIn("before timing, input set 1:", r["problems"][0]["results"][0]["reason"])

    def test_input_copied_to_output_fails(self):
        self.assert_failed("copy", "before timing, input set 0:")

    def test_work_left_on_a_thread_fails(self):
        self.assert_failed("thread", "work left running past the call")

    def test_bad_problems_file_names_the_field(self):
        with open(self.problems, "w") as f:
            json.dump({"problems": [{"op": "gather", "slice_bytes": 6}]}, f)
        p, r = self.bench("honest")
        self.assertEqual(p.returncode, 2)
        self.assertIn('problem 0: "slice_bytes" must be a positive multiple of float32\'s 4 bytes',
                      p.stderr)
        with open(self.problems, "w") as f:
            json.dump({"problems": [{"op": "gather", "indices": "random"}]}, f)
        p, r = self.bench("honest")
        self.assertEqual(p.returncode, 2)
        self.assertIn('"indices" is not an index pattern (uniform, sorted, permutation, zipf, '
                      'hot_key, out_of_bounds_1pct): "random"', p.stderr)

    def test_filter_and_against_none(self):
        p, r = self.bench("honest", "--filter", "zipf", "--against", "none")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([x["name"] for x in r["problems"]],
                         ["gather_nd/float32/64B/zipf/table=64KiB/n=1000"])
        self.assertEqual(len(r["problems"][0]["results"]), 1)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gscheck", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--hack-plugin", required=True)
    args, rest = ap.parse_known_args()
    GSCHECK, SOURCE, HACK_PLUGIN = args.gscheck, args.source, args.hack_plugin
    unittest.main(argv=[sys.argv[0], *rest])
