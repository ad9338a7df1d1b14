#!/usr/bin/env python3
"""End-to-end tests of the gscheck CLI: small temporary case files, exit codes, messages,
reports (validated against reports/report.schema.json when jsonschema is installed) and the
corpus against corpus/case.schema.json.

usage: cli_test.py --gscheck PATH --source DIR [unittest args]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

try:
    import jsonschema
except ImportError:  # the schema checks are skipped, and say so
    jsonschema = None

GSCHECK = ""
SOURCE = ""
PLUGIN = ""  # examples/plugins/gather_nd_plugin.c built, when given
FLAKY_PLUGIN = ""  # tests/tools/plugins/flaky_gather_plugin.c built, when given
GATHER_V2_PLUGIN = ""  # tests/tools/plugins/gather_v2_plugin.c built, when given


def gather_case(expect_output, name="gather/tmp"):
    return {
        "gscheck_case": 1,
        "name": name,
        "op": "gather",
        "inputs": {
            "params": {"dtype": "float32", "shape": [3], "data": [1, 2, 3]},
            "indices": {"dtype": "int32", "shape": [2], "data": [2, 0]},
        },
        "expect": {"output": {"dtype": "float32", "shape": [2], "data": expect_output}},
    }


class CliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gscheck_cli_test_")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, content):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def gscheck(self, *args, env=None):
        p = subprocess.run([GSCHECK, *args], capture_output=True, text=True, timeout=600,
                           env=None if env is None else {**os.environ, **env})
        return p.returncode, p.stdout, p.stderr

    # ---- eval ----------------------------------------------------------------------------

    def test_eval_pass(self):
        path = self.write("ok.json", gather_case([3, 1]))
        rc, out, err = self.gscheck("eval", path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("PASSED", out)
        self.assertIn("gather/tmp  float32 [2]", out)
        self.assertIn("1 cases: 1 PASSED", out)

    def test_eval_mismatch_exits_1_with_index_and_repro(self):
        path = self.write("bad.json", gather_case([3, 9]))
        rc, out, _ = self.gscheck("eval", path)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED", out)
        self.assertIn("at [1]: expected 9, got 1", out)
        self.assertIn("repro: gscheck eval --backend reference " + path, out)

    def test_eval_expected_error(self):
        case = gather_case([0, 0])
        case["inputs"]["indices"]["data"] = [5, 0]
        case["expect"] = {"error": {"class": "bad_index", "message": r"^indices\[0\] = 5 is not in \[0, 3\)$"}}
        rc, out, _ = self.gscheck("eval", self.write("err.json", case))
        self.assertEqual(rc, 0, out)
        case["expect"]["error"]["message"] = "something else"
        rc, out, _ = self.gscheck("eval", self.write("err2.json", case))
        self.assertEqual(rc, 1, out)
        self.assertIn("got message \"indices[0] = 5 is not in [0, 3)\"", out)

    def test_malformed_files_have_clear_messages(self):
        syntax = self.write("syntax.json", '{\n  "gscheck_case": 1,\n  "name": \n}\n')
        rc, out, _ = self.gscheck("eval", syntax)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED", out)
        self.assertIn(syntax + ": invalid JSON: parse error at line 4", out)
        case = gather_case([3, 1])
        case["inputs"]["params"]["shape"] = [3, "x"]
        field = self.write("field.json", case)
        rc, out, _ = self.gscheck("eval", field)
        self.assertEqual(rc, 1, out)
        self.assertIn(field + ": inputs.params.shape[1]: expected an integer, got the string \"x\"", out)

    def test_directories_are_searched_and_budget_skips(self):
        self.write("d/a.json", gather_case([3, 1], "a"))
        self.write("d/sub/b.json", gather_case([3, 1], "b"))
        self.write("d/notes.txt", "not a case")
        rc, out, _ = self.gscheck("eval", os.path.join(self.dir, "d"))
        self.assertEqual(rc, 0, out)
        self.assertIn("2 cases: 2 PASSED", out)
        rc, out, _ = self.gscheck("eval", "--max-bytes", "8", os.path.join(self.dir, "d"))
        self.assertEqual(rc, 0, out)
        self.assertIn("2 cases: 2 SKIPPED", out)
        self.assertIn("exceeds the memory budget of 8 bytes", out)

    def test_empty_folder_is_zero_cases(self):
        os.makedirs(os.path.join(self.dir, "empty"))
        rc, out, err = self.gscheck("eval", os.path.join(self.dir, "empty"))
        self.assertEqual(rc, 0, out + err)
        self.assertIn("0 cases:", out)
        self.assertIn("no *.json case files", err)

    def test_quiet_prints_only_failures(self):
        ok = self.write("q/ok.json", gather_case([3, 1], "ok"))
        bad = self.write("q/bad.json", gather_case([3, 2], "bad"))
        rc, out, _ = self.gscheck("eval", "--quiet", ok, bad)
        self.assertEqual(rc, 1)
        self.assertNotIn(" ok  ", out)
        self.assertIn("FAILED        bad", out)

    def test_known_failures_xfail_xpass_and_strict(self):
        bad = self.write("k/bad.json", gather_case([3, 2], "gather/known_bad"))
        fixed = self.write("k/fixed.json", gather_case([3, 1], "gather/was_bad"))
        known = self.write("k/known.json.txt", {
            "gscheck_known_failures": 2,
            "known": [
                {"id": "wrong-row", "when": {"case": "gather/known_*"},
                 "forgives": {"elements": "any_value"}, "reason": "wrong row",
                 "link": "https://t.invalid/1"},
                {"id": "fixed-since", "when": {"case": "gather/was_bad"},
                 "forgives": {"elements": "any_value"}, "reason": "fixed since",
                 "link": "https://t.invalid/2"}]})
        report = os.path.join(self.dir, "k", "out", "report.json")
        junit = os.path.join(self.dir, "k", "out", "junit.xml")
        rc, out, err = self.gscheck("eval", "--known-failures", known, "--report", report,
                                    "--junit", junit, bad, fixed)
        self.assertEqual(rc, 0, out + err)
        # wrong-row is input_element: an XFAIL whose values no rule predicted is counted apart.
        self.assertIn("2 cases: 1 XFAIL (1 values unchecked) 1 XPASS", out)
        self.assertIn("known failure (wrong-row: wrong row, https://t.invalid/1)", out)
        with open(report) as f:
            r = json.load(f)
        self.assertEqual(r["known_failures"], known)
        cases = {c["name"]: c for c in r["cases"]}
        self.assertEqual(cases["gather/known_bad"]["verdict"], "XFAIL")
        self.assertEqual(cases["gather/known_bad"]["known_failure"],
                         {"verdict": "FAILED", "entry": "wrong-row", "reason": "wrong row",
                          "link": "https://t.invalid/1", "values_unchecked": True})
        self.assertEqual(cases["gather/known_bad"]["differences"],
                         {"explained": [{"entry": "wrong-row", "count": 1, "example":
                                         "expect: element 1 (flat): expected 2, got 1"}],
                          "unexplained": []})
        self.assertEqual(cases["gather/was_bad"]["verdict"], "XPASS")
        if jsonschema is not None:
            with open(os.path.join(SOURCE, "reports", "report.schema.json")) as f:
                jsonschema.validate(r, json.load(f))
            with open(os.path.join(SOURCE, "reports", "known_failures.schema.json")) as f:
                schema = json.load(f)
            with open(known) as f:
                jsonschema.validate(json.load(f), schema)
            shipped = glob.glob(os.path.join(SOURCE, "plugins", "*", "*known_failures.json"))
            self.assertGreaterEqual(len(shipped), 10, shipped)  # every shipped backend's file
            shipped.append(os.path.join(SOURCE, "examples", "plugins",
                                        "gather_nd_plugin_declines.json"))
            for path in shipped:
                with open(path) as f:
                    jsonschema.validate(json.load(f), schema)
        with open(junit) as f:
            x = f.read()
        self.assertIn('<skipped message="XFAIL: wrong row (https://t.invalid/1)"/>', x)
        # --strict: the fixed known failure fails the run.
        rc, out, err = self.gscheck("run", "--backend", "reference", "--sweep", "0", "--strict",
                                    "--known-failures", known, bad, fixed)
        self.assertEqual(rc, 1, out + err)
        # A malformed file is a command-line error naming the entry.
        broken = self.write("k/broken.json.txt", {"gscheck_known_failures": 2,
                                                  "known": [{"id": "x", "forgives": {"output": True},
                                                             "link": "l"}]})
        rc, out, err = self.gscheck("eval", "--known-failures", broken, bad)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("known[0].reason: missing", err)

    def test_report_to_stdout(self):
        ok = self.write("s/ok.json", gather_case([3, 1], "ok"))
        bad = self.write("s/bad.json", gather_case([3, 2], "bad"))
        for cmd in (["eval"], ["run", "--backend", "reference", "--sweep", "3", "--seed", "1"]):
            rc, out, err = self.gscheck(*cmd, "--report", "-", ok, bad)
            self.assertEqual(rc, 1, out + err)
            r = json.loads(out)  # stdout is the report alone: one JSON document
            self.assertEqual(r["totals"]["FAILED"], 1, cmd)
            self.assertIn("FAILED", err)  # the text went to stderr
            self.assertFalse(os.path.exists("-"))
            self.assertFalse(os.path.exists(os.path.join(self.dir, "s", "failed_cases")))
            rc, out, err = self.gscheck(*cmd, "--junit", "-", ok, bad)
            self.assertEqual(ET.fromstring(out).attrib["failures"], "1", cmd)

    def test_reports(self):
        ok = self.write("r/ok.json", gather_case([3, 1], "ok"))
        bad = self.write("r/bad.json", gather_case([3, 2], "bad"))
        report = os.path.join(self.dir, "out", "report.json")
        junit = os.path.join(self.dir, "out", "junit.xml")
        rc, out, err = self.gscheck("eval", "--report", report, "--junit", junit, ok, bad)
        self.assertEqual(rc, 1, out + err)
        with open(report) as f:
            r = json.load(f)
        self.assertEqual(r["command"], "eval")
        self.assertEqual(r["totals"]["PASSED"], 1)
        self.assertEqual(r["totals"]["FAILED"], 1)
        failed = [c for c in r["cases"] if c["verdict"] == "FAILED"][0]
        self.assertEqual(failed["file"], bad)
        mismatch = failed["checks"][0]["mismatches"][0]
        self.assertEqual({k: mismatch[k] for k in ("index", "expected", "got")},
                         {"index": [1], "expected": "2", "got": "1"})
        # In the case's terms (compare/triage.h): the index row and the element the value is.
        self.assertRegex(mismatch["triage"], r"^from indices\[1\] = \d+: TensorFlow reads params\[\d+\]; got 1")
        self.assertEqual(failed["inputs"]["params"], {"dtype": "float32", "shape": [3]})
        root = ET.parse(junit).getroot()
        self.assertEqual(root.attrib["tests"], "2")
        self.assertEqual(root.attrib["failures"], "1")
        self.assertEqual(len(root.findall(".//failure")), 1)
        if jsonschema is None:
            self.skipTest("python3 jsonschema not installed: report schema not checked")
        with open(os.path.join(SOURCE, "reports", "report.schema.json")) as f:
            jsonschema.Draft202012Validator(json.load(f)).validate(r)

    # ---- run -----------------------------------------------------------------------------

    def test_run_sweep_and_table(self):
        path = self.write("run/ok.json", gather_case([3, 1], "ok"))
        report = os.path.join(self.dir, "run_out", "report.json")
        for backend in self.backends():
            rc, out, err = self.gscheck("run", "--backend", backend, "--sweep", "25", "--seed", "3",
                                        "--report", report, path)
            self.assertEqual(rc, 0, backend + out + err)
            self.assertIn("total ", out)
            self.assertIn("seed 3", out)
            self.assertNotIn("PASSED        ok", out)  # run prints failures only by default
            with open(report) as f:
                r = json.load(f)
            self.assertEqual(r["seed"], 3)
            self.assertEqual(r["sweep"], 25)
            self.assertEqual(r["totals"]["cases"], 26)
            self.assertEqual(r["backend"]["name"], backend)
            self.assertTrue(any(c["file"] is None for c in r["cases"]))
            if jsonschema is not None:
                with open(os.path.join(SOURCE, "reports", "report.schema.json")) as f:
                    jsonschema.Draft202012Validator(json.load(f)).validate(r)

    def test_run_sweep_draws_the_export_cases(self):
        # One sampler: run's tf-cpu sweep on the reference is export --include-invalid's cases.
        out_dir = os.path.join(self.dir, "exported")
        rc, out, err = self.gscheck("export", "--count", "200", "--seed", "4", "--include-invalid",
                                    "--out", out_dir)
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r", [1-9][0-9]* with boundary values\)")
        empty = os.path.join(self.dir, "no_case_files")
        os.makedirs(empty)
        report = os.path.join(self.dir, "sweep_out", "report.json")
        rc, out, err = self.gscheck("run", "--backend", "reference", "--semantics", "tf-cpu",
                                    "--sweep", "200", "--seed", "4", "--quiet", "--report", report,
                                    empty)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("--semantics tf-cpu", out)  # in the replay command
        with open(report) as f:
            r = json.load(f)
        self.assertEqual(r["sweep_boundary_fraction"], 0.5)
        data = ("params", "indices", "updates", "tensor")  # axis and shape are attrs in a case file
        swept = [(c["name"], c["semantics"], {k: v for k, v in c["inputs"].items() if k in data})
                 for c in r["cases"]]
        exported = []
        for name in sorted(os.listdir(out_dir)):
            with open(os.path.join(out_dir, name)) as f:
                case = json.load(f)
            inputs = {k: {"dtype": t["dtype"], "shape": t["shape"]}
                      for k, t in case["inputs"].items() if k in data}
            exported.append((case["name"], case["semantics"], inputs))
        self.assertEqual(len(swept), 200)
        self.assertEqual(swept, exported)
        rc, out, err = self.gscheck("run", "--backend", "reference", "--semantics", "tf-tpu")
        self.assertEqual(rc, 2)
        self.assertIn("--semantics: expected one of tf-cpu, tf-gpu, xla, jax, got 'tf-tpu'", err)
        rc, out, err = self.gscheck("run", "--backend", "reference", "--boundary-fraction", "0.25",
                                    "--sweep", "3", "--seed", "1", empty)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("--boundary-fraction 0.25", out)  # the replay keeps the fraction

    def test_run_verbose_prints_every_case(self):
        path = self.write("verbose/ok.json", gather_case([3, 1], "ok"))
        rc, out, err = self.gscheck("run", "--backend", "reference", "--sweep", "0", "--verbose", path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("PASSED        ok  float32 [2]", out)
        self.assertNotIn("replay:", out)  # no sweep, nothing to replay

    def test_run_fails_on_a_wrong_expect(self):
        bad = self.write("runbad/bad.json", gather_case([1, 1], "bad"))
        rc, out, _ = self.gscheck("run", "--backend", "reference", "--sweep", "0", bad)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED", out)

    def test_run_mistrusts_a_golden_the_reference_fails(self):
        if "cuda-emu" not in self.backends():
            self.skipTest("no cuda-emu backend in this build")
        bad = self.write("mis/bad.json", gather_case([1, 1], "bad"))
        rc, out, _ = self.gscheck("run", "--backend", "cuda-emu", "--sweep", "0", bad)
        self.assertEqual(rc, 1, out)
        self.assertIn("MISTRUSTED", out)
        self.assertIn("the reference fails this case's expect", out)

    def validate(self, report):
        if jsonschema is not None:
            with open(os.path.join(SOURCE, "reports", "report.schema.json")) as f:
                jsonschema.Draft202012Validator(json.load(f)).validate(report)

    def test_repeat_runs_each_case_k_times(self):
        path = self.write("rep/ok.json", gather_case([3, 1], "ok"))
        report = os.path.join(self.dir, "rep_out", "report.json")
        rc, out, err = self.gscheck("eval", "--repeat", "3", "--report", report, path)
        self.assertEqual(rc, 0, out + err)
        with open(report) as f:
            r = json.load(f)
        self.assertEqual(r["cases"][0]["runs"], 3)
        self.assertEqual(r["cases"][0]["differing_runs"], 0)
        self.validate(r)
        # The in-tree reference runs each case once by default: CI pays nothing for repeats.
        rc, out, err = self.gscheck("run", "--backend", "reference", "--sweep", "0", "--report",
                                    report, path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("repeat 1", out)
        with open(report) as f:
            self.assertEqual(json.load(f)["cases"][0]["runs"], 1)
        for bad in ("0", "x", "1001"):
            rc, _, err = self.gscheck("run", "--repeat", bad, path)
            self.assertEqual(rc, 2, bad)
            self.assertIn("--repeat: expected an integer in [1, 1000]", err)

    def test_matrix_only_when_asked_for_in_tree_backends(self):
        path = self.write("mat/ok.json", gather_case([3, 1], "ok"))
        header = "op                         dtype      index  policy    passed  failed"
        rc, out, err = self.gscheck("run", "--backend", "reference", "--sweep", "0", path)
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn(header, out)
        rc, out, err = self.gscheck("run", "--backend", "reference", "--sweep", "0", "--matrix",
                                    path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn(header, out)
        self.assertIn("\ngather                     float32    int32  -              1       0", out)
        rc, out, err = self.gscheck("eval", "--matrix", path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn(header, out)

    def test_plugins_run_only_sandboxed_unless_the_user_says_unsafe(self):
        if not PLUGIN:
            self.skipTest("no --plugin given (examples/ not built)")
        path = self.write("nosandbox/gather.json", gather_case([3, 1], "gather"))
        report = os.path.join(self.dir, "nosandbox_out", "report.json")
        # As a container without namespaces would (and not as the test presets, which allow it).
        no_ns = {"GSCHECK_NAMESPACES": "0", "GSCHECK_UNSAFE_NO_SANDBOX": ""}
        rc, out, err = self.gscheck("run", "--backend", "plugin:" + PLUGIN, "--sweep", "0",
                                    "--report", report, path, env=no_ns)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("refused to start the worker without its sandbox (process group only: "
                      "namespaces turned off ($GSCHECK_NAMESPACES=0))", err)
        self.assertFalse(os.path.exists(report))
        rc, out, err = self.gscheck("run", "--backend", "plugin:" + PLUGIN, "--sweep", "0",
                                    "--report", report, "--unsafe-no-sandbox", path, env=no_ns)
        self.assertEqual(rc, 0, out + err)
        with open(report) as f:
            containment = json.load(f)["backend"]["containment"]
        self.assertTrue(containment.startswith("process group only"), containment)
        self.assertIn("--unsafe-no-sandbox: the worker sees and may write what gscheck may",
                      containment)
        self.assertIn("gscheck: plugin containment (--unsafe-no-sandbox)", err)

    def test_plugin_matrix_and_repeat(self):
        if not PLUGIN:
            self.skipTest("no --plugin given (examples/ not built)")
        nd = {
            "gscheck_case": 1,
            "name": "gather_nd/ok",
            "op": "gather_nd",
            "semantics": "tf-gpu",
            "inputs": {
                "params": {"dtype": "int64", "shape": [2, 2], "data": [1, 2, 3, 4]},
                "indices": {"dtype": "int32", "shape": [2, 1], "data": [1, 0]},
            },
            "attrs": {"bad_indices_policy": "IGNORE"},
            "expect": {"output": {"dtype": "int64", "shape": [2, 2], "data": [3, 4, 1, 2]}},
        }
        nd_path = self.write("plug/nd.json", nd)
        gather_path = self.write("plug/gather.json", gather_case([3, 1], "gather"))
        report = os.path.join(self.dir, "plug_out", "report.json")
        junit = os.path.join(self.dir, "plug_out", "junit.xml")
        backend = "plugin:" + PLUGIN
        rc, out, err = self.gscheck("run", "--backend", backend, "--sweep", "0", "--report", report,
                                    "--junit", junit, nd_path, gather_path)
        self.assertEqual(rc, 0, out + err)
        # A plugin run always prints the matrix, and repeats each case twice.
        self.assertIn("\ngather                     float32    int32  -              0       0"
                      "      0          0             1        0                0       0     0     0"
                      "\n", out)
        self.assertIn("\ngather_nd                  int64      int32  IGNORE         1       0"
                      "      0          0             0        0                0       0     0     0"
                      "\n", out)
        self.assertIn("repeat 2", out)
        with open(report) as f:
            r = json.load(f)
        self.validate(r)
        runs = {c["name"]: (c["runs"], c["differing_runs"], c["verdict"]) for c in r["cases"]}
        self.assertEqual(runs["gather_nd/ok"], (2, 0, "PASSED"))
        self.assertEqual(runs["gather"], (0, 0, "UNIMPLEMENTED"))
        self.assertEqual([(m["op"], m["dtype"], m["index_dtype"], m["bad_indices_policy"])
                          for m in r["matrix"]],
                         [("gather", "float32", "int32", ""), ("gather_nd", "int64", "int32", "IGNORE")])
        self.assertEqual(r["matrix"][1]["counts"]["PASSED"], 1)
        self.assertEqual(r["matrix"][0]["counts"]["UNIMPLEMENTED"], 1)
        self.assertEqual(ET.parse(junit).getroot().attrib["failures"], "0")
        rc, out, err = self.gscheck("eval", "--backend", backend, "--repeat", "3", "--report",
                                    report, nd_path)
        self.assertEqual(rc, 0, out + err)
        with open(report) as f:
            self.assertEqual(json.load(f)["cases"][0]["runs"], 3)

    def test_kernel_level_plugin_passes_the_kernel_cases(self):
        if not GATHER_V2_PLUGIN:
            self.skipTest("no --gather-v2-plugin given")
        report = os.path.join(self.dir, "v2", "report.json")
        rc, out, err = self.gscheck("eval", "--backend", "plugin:" + GATHER_V2_PLUGIN, "--quiet",
                                    "--report", report, "--known-failures", TEST_DECLINES,
                                    os.path.join(SOURCE, "corpus", "golden", "kernel"),
                                    os.path.join(SOURCE, "corpus", "golden", "gather"))
        self.assertEqual(rc, 0, out + err)
        with open(report) as f:
            r = json.load(f)
        self.assertEqual(r["backend"]["apis"], ["kernel"])
        cases = {c["name"]: c for c in r["cases"]}
        # Every kernel-level gather case runs and passes; GatherV2 keeps batch_dims with axis 0.
        for name in ("kernel/gather_v2_axis0_keeps_batch_dims", "kernel/gather_v2_axis0_batch_dims0",
                     "kernel/gather_v2_axis0_negative_batch_dims",
                     "kernel/gather_v2_explicit_axis_minus1_batch_dims_minus1",
                     "kernel/gather_v2_axis1_batch_dims1"):
            self.assertEqual(cases[name]["verdict"], "PASSED", cases[name])
        # A Python-level rule is not the kernel's business: UNIMPLEMENTED, not FAILED ...
        self.assertEqual(cases["gather/python_axis0_drops_batch_dims"]["verdict"], "UNIMPLEMENTED")
        self.assertIn("python API level is not implemented",
                      cases["gather/python_axis0_drops_batch_dims"]["reason"])
        # ... while a Python case no Python rule touches is graded (and passes).
        self.assertEqual(cases["gather/negative_axis"]["verdict"], "PASSED", cases["gather/negative_axis"])
        self.assertGreater(r["totals"]["PASSED"], 30)

    def test_plugin_jobs_keep_the_report_order(self):
        if not PLUGIN:
            self.skipTest("no --plugin given (examples/ not built)")
        backend = "plugin:" + PLUGIN
        names = {}
        for jobs in ("1", "3"):
            report = os.path.join(self.dir, "jobs" + jobs, "report.json")
            rc, out, err = self.gscheck("run", "--backend", backend, "--sweep", "300", "--seed", "5",
                                        "--jobs", jobs, "--report", report, "--known-failures",
                                        EXAMPLE_DECLINES)
            self.assertEqual(rc, 0, out + err)
            with open(report) as f:
                names[jobs] = [(c["name"], c["verdict"]) for c in json.load(f)["cases"]]
        self.assertGreater(len(names["1"]), 300)
        self.assertEqual(names["1"], names["3"])
        rc, out, err = self.gscheck("run", "--backend", backend, "--isolate", "thread")
        self.assertEqual(rc, 2)
        self.assertIn("--isolate: expected 'worker' or 'call', got 'thread'", err)

    def test_flaky_plugin_is_nondeterministic_or_failed(self):
        if not FLAKY_PLUGIN:
            self.skipTest("no --flaky-plugin given")
        path = self.write("flaky/ok.json", gather_case([3, 1], "ok"))
        report = os.path.join(self.dir, "flaky_out", "report.json")
        junit = os.path.join(self.dir, "flaky_out", "junit.xml")
        backend = "plugin:" + FLAKY_PLUGIN
        for deterministic in ("1", "0"):
            # Not beside the case (hidden from the worker); the worker's root is read-only, so
            # the folder is named writable.
            counter = self.write("flaky_state/counter" + deterministic, "0")
            env = {"GSCHECK_FLAKY_COUNTER": counter, "GSCHECK_FLAKY_DETERMINISTIC": deterministic}
            rc, out, err = self.gscheck("run", "--backend", backend, "--sweep", "0", "--report",
                                        report, "--junit", junit, "--worker-writable",
                                        os.path.dirname(counter), "--shrink-time", "0", path,
                                        env=env)
            self.assertEqual(rc, 1, out + err)
            with open(counter) as f:
                # The default repeat for plugins (no shrinking: each step would call it again).
                self.assertEqual(f.read().strip(), "2")
            with open(report) as f:
                r = json.load(f)
            self.validate(r)
            c = r["cases"][0]
            self.assertEqual((c["runs"], c["differing_runs"]), (2, 1))
            self.assertIn("--repeat 2", c["repro"])
            failure = ET.parse(junit).getroot().find(".//failure")
            if deterministic == "1":
                self.assertEqual(c["verdict"], "NONDETERMINISTIC")
                self.assertEqual(c["reason"], "declared deterministic, but run 2 of 2 differs from "
                                 "run 1: element 0 (flat) differs in its bits")
                self.assertIn("NONDETERMINISTIC ok  float32 [2]", out)
                self.assertEqual(r["matrix"][0]["counts"]["NONDETERMINISTIC"], 1)
                self.assertEqual(failure.attrib["type"], "NONDETERMINISTIC")
            else:
                self.assertEqual(c["verdict"], "FAILED")
                self.assertEqual(c["reason"], "run 2 of 2 against expect: 1 of 2 elements differ; "
                                 "first at [0]: expected 3, got 0")
                self.assertIn("at [0]: expected 3, got 0", out)
                self.assertEqual(failure.attrib["type"], "FAILED")
            self.assertIn("runs: 2, 1 differing bitwise from the first", failure.text)
        # One run cannot see the difference: the first answer is right.
        counter = self.write("flaky_state/counter_once", "0")
        rc, out, err = self.gscheck("eval", "--backend", backend, "--repeat", "1",
                                    "--worker-writable", os.path.dirname(counter), path,
                                    env={"GSCHECK_FLAKY_COUNTER": counter,
                                         "GSCHECK_FLAKY_DETERMINISTIC": "1"})
        self.assertEqual(rc, 0, out + err)

    # ---- command lines -------------------------------------------------------------------

    def test_malformed_command_lines_exit_2(self):
        for args, message in [
            ([], "usage: gscheck"),
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["eval"], "no case files given"),
            (["eval", "--bogus", "x.json"], "unknown option '--bogus'"),
            (["eval", "--backend"], "option '--backend' needs a value"),
            (["eval", "--max-bytes", "lots", "x.json"], "--max-bytes: expected an integer"),
            (["eval", os.path.join(self.dir, "absent.json")], "no such file or directory"),
            (["eval", "--backend", "tpu", self.write("x.json", gather_case([3, 1]))], "unknown backend 'tpu'"),
            (["run", "--sweep", "-1"], "--sweep: expected an integer in [0,"),
            (["run", "--seed", "1", "--seed", "2"], "option '--seed' given twice"),
            (["list-backends", "extra"], "unexpected argument 'extra'"),
            (["run", "--known-failures", "/dev/zero"], "/dev/zero: not a regular file"),
            (["report", "diff", "/dev/null", "/dev/null"], "not a regular file"),
        ]:
            rc, out, err = self.gscheck(*args)
            self.assertEqual(rc, 2, (args, out, err))
            self.assertIn(message, err, args)
            # A mistake in a value or a file is said in a line or two, not buried in the usage.
            if args[:1] in (["run"], ["report"]) and "--seed" not in args:
                self.assertLessEqual(len(err.splitlines()), 2, (args, err))

    def test_help(self):
        rc, out, _ = self.gscheck("--help")
        self.assertEqual(rc, 0)
        for command in ("run", "eval", "list-backends"):
            self.assertIn(command, out)
            rc, sub, _ = self.gscheck(command, "--help")
            self.assertEqual(rc, 0, command)
            self.assertIn("usage: gscheck " + command, sub)

    def test_list_backends(self):
        rc, out, _ = self.gscheck("list-backends")
        self.assertEqual(rc, 0)
        self.assertIn("reference\n  ops:           gather, gather_nd, scatter_nd", out)
        self.assertIn("tf messages:   yes", out)
        if "\ncuda-emu\n" in out:  # the checked mode promises bad_index texts only
            self.assertIn("cuda-emu\n", out)
            self.assertIn("tf messages:   bad_index only", out.split("\ncuda-emu\n", 1)[1])

    def backends(self):
        """The backends this build can run here (a cuda build without a GPU lists cuda as
        unavailable, on the line after its name)."""
        _, out, _ = self.gscheck("list-backends")
        lines = out.splitlines()
        return [line for i, line in enumerate(lines)
                if line and not line.startswith(" ")
                and not (i + 1 < len(lines) and lines[i + 1].startswith("  unavailable:"))]


class CorpusSchemaTest(unittest.TestCase):
    @unittest.skipIf(jsonschema is None, "python3 jsonschema not installed")
    def test_every_corpus_case_matches_the_schema(self):
        with open(os.path.join(SOURCE, "corpus", "case.schema.json")) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        files = [p for p in glob.glob(os.path.join(SOURCE, "corpus", "**", "*.json"), recursive=True)
                 if not p.endswith(".schema.json")]
        for path in sorted(files):
            with open(path) as f:
                errors = list(validator.iter_errors(json.load(f)))
            self.assertEqual(errors, [], path + ": " + (errors[0].message if errors else ""))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gscheck", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--plugin", default="", help="libgather_nd_plugin.so, for the plugin tests")
    parser.add_argument("--gather-v2-plugin", default="")
    parser.add_argument("--flaky-plugin", default="", help="libflaky_gather_plugin.so")
    args, rest = parser.parse_known_args()
    GSCHECK = os.path.abspath(args.gscheck)
    SOURCE = os.path.abspath(args.source)
    PLUGIN = os.path.abspath(args.plugin) if args.plugin else ""
    FLAKY_PLUGIN = os.path.abspath(args.flaky_plugin) if args.flaky_plugin else ""
    EXAMPLE_DECLINES = os.path.join(SOURCE, "examples", "plugins", "gather_nd_plugin_declines.json")
    TEST_DECLINES = os.path.join(SOURCE, "tests", "tools", "plugins", "test_plugin_declines.json")
    GATHER_V2_PLUGIN = os.path.abspath(args.gather_v2_plugin) if args.gather_v2_plugin else ""
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
