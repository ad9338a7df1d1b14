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

    def test_output_written_after_the_answer_fails(self):
        # The first call of each set is a warm-up where threads may stay (runtimes make their
        # pools there); the output is read as soon as the answer comes, and is not there yet.
        self.assert_failed("thread", "before timing, input set 0: 16000 of 16000 elements differ")

    def test_work_left_on_a_thread_fails(self):
        # Right output, and a thread per call left running: past the warm-ups, the first timed
        # call that leaves more threads than they did fails.
        self.assert_failed("linger", "work left running past the call")

    def test_output_replayed_for_a_known_table_fails(self):
        # Correct on every set before timing (the first call of each computes); the first timed
        # call meets a table it has seen, with indices it has not.
        r = self.assert_failed("replay", "timed call 1, input set 1:")
        self.assertIn("differ", r["problems"][0]["results"][0]["reason"])

    def test_inputs_are_written_by_gscheck_alone(self):
        # The plugin answers INTERNAL naming any way it found to write its inputs: with fresh
        # indices written into a kept mapping, none may work.
        p, r = self.bench("poke")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for res in self.plugin_results(r):
            self.assertEqual(res["verdict"], "PASSED", res)

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

    def test_cold_caches_are_recorded(self):
        p, r = self.bench("honest", "--filter", "zipf", "--against", "none")
        self.assertEqual(r["settings"]["cold_flush_bytes"], 0)
        p, r = self.bench("honest", "--filter", "zipf", "--against", "none", "--cold")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # Twice the last-level cache, at least 8 MiB, written before every timed call.
        self.assertGreaterEqual(r["settings"]["cold_flush_bytes"], 8 << 20)
        self.assertEqual(self.plugin_results(r)[0]["verdict"], "PASSED")
        # A kernel that replays outputs is still caught with the caches cold.
        p, r = self.bench("replay", "--cold")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)


class SlowerOrNot(unittest.TestCase):
    """`gscheck report diff` on real bench reports: a report against itself is unchanged, the
    same plugin made twenty times slower (by wall-clock spinning) is flagged, exit 1. Only
    outcomes no machine's load can change are asserted (see the slower test's comment)."""

    PROBLEMS = {"problems": [{"op": "gather_nd", "dtype": "float32", "slice_bytes": 64,
                              "indices": "uniform", "table_bytes": 262144,
                              "index_count": 65536}]}

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gscheck_bench_diff_test_")
        self.problems = os.path.join(self.tmp.name, "problems.json")
        with open(self.problems, "w") as f:
            json.dump(self.PROBLEMS, f)

    def tearDown(self):
        self.tmp.cleanup()

    def bench(self, name, env):
        report = os.path.join(self.tmp.name, name + ".json")
        p = subprocess.run([GSCHECK, "bench", "--backend", "plugin:" + HACK_PLUGIN,
                            "--against", "none", "--problems", self.problems,
                            "--min-time", "0.05", "--repetitions", "9", "--report", report],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, **env})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return report

    def diff(self, old, new, *extra):
        return subprocess.run([GSCHECK, "report", "diff", old, new, *extra],
                              capture_output=True, text=True, timeout=60)

    def first_run(self):
        first = self.bench("run0", {"GSCHECK_BENCH_HACK": "honest"})
        with open(first) as f:
            return first, json.load(f)["problems"][0]["results"][0]["median_s"]

    def test_a_report_diffed_with_itself_is_unchanged(self):
        first, _ = self.first_run()
        d = self.diff(first, first, "--json")
        self.assertEqual(d.returncode, 0, d.stdout + d.stderr)
        j = json.loads(d.stdout)
        self.assertEqual(j["changes"], [])
        self.assertEqual(j["unchanged"], 1)
        self.assertFalse(j["regression"])

    def test_a_plugin_twenty_times_slower_is_flagged(self):
        # Whether an honest rerun is flagged depends on the machine, not on gscheck: on this
        # shared VM a back-to-back pair of honest runs came out x1.63 apart (547 -> 894 us, p =
        # 4e-5) in CI on 2026-12-07, which no test on two reports can tell from a regression
        # (docs/performance.md "Is it slower?"). So no rerun is asserted here; the rule itself is
        # pinned on fixed samples by BenchDiff.* and MannWhitney.*. What is asserted holds on any
        # machine: the slow hack spins for twenty honest medians of wall-clock time after its
        # gather, so every slow call takes longer than the honest median by that much, whatever
        # the load while either run was timed.
        first, median = self.first_run()
        slow = self.bench("slow", {"GSCHECK_BENCH_HACK": "slow",
                                   "GSCHECK_BENCH_SLOW_US": str(20 * median * 1e6)})
        d = self.diff(first, slow)
        self.assertEqual(d.returncode, 1, d.stdout + d.stderr)
        self.assertIn("  slower  gather_nd/float32/64B/uniform/table=256KiB/n=65536  ", d.stdout)
        j = json.loads(self.diff(first, slow, "--json").stdout)
        self.assertEqual(j["changes"][0]["kind"], "slower")
        self.assertTrue(j["regression"])
        self.assertGreater(j["changes"][0]["ratio"], 10)
        self.assertLess(j["changes"][0]["p"], 0.01)
        # The other way round it is faster: reported, exit 0.
        d = self.diff(slow, first)
        self.assertEqual(d.returncode, 0, d.stdout + d.stderr)
        self.assertIn("  faster  ", d.stdout)

    def test_bad_diffs_are_refused(self):
        report = self.bench("run0", {"GSCHECK_BENCH_HACK": "honest"})
        run_report = os.path.join(self.tmp.name, "run.json")
        with open(run_report, "w") as f:
            json.dump({"cases": []}, f)
        d = self.diff(report, run_report)
        self.assertEqual(d.returncode, 2)
        self.assertIn("is a bench report and", d.stderr)
        d = self.diff(report, report, "--alpha", "0.9")
        self.assertEqual(d.returncode, 2)
        self.assertIn("--alpha: expected a number in (0, 0.5), got '0.9'", d.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gscheck", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--hack-plugin", required=True)
    args, rest = ap.parse_known_args()
    GSCHECK, SOURCE, HACK_PLUGIN = args.gscheck, args.source, args.hack_plugin
    unittest.main(argv=[sys.argv[0], *rest])
