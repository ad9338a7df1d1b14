#!/usr/bin/env python3
"""tools/conformance.py on reports of real `gscheck run`s made here (docs/conformance.md).

The fixture: five small runs, each giving the table a kind of cell to show: the reference
(tf-cpu) and cuda-emu (agree), the example gather_nd plugin with its declines file (differs by
rule), the hostile ABORT plugin on case files that trigger it (crashes), and the flaky plugin at
--repeat 2 (differs, with expected and got values). The expected cells are tallied here from the
reports themselves and compared with the markdown (`table`) and with the HTML page as Debian's
chromium renders it, a cell clicked (`browser`).

usage: conformance_test.py --gscheck BIN --source DIR --nd-plugin LIB --abort-plugin LIB
                           --flaky-plugin LIB [--chromium BIN] [--keep DIR] table|browser
Exit status: 0 pass, 1 fail, 77 skipped (browser: no chromium).
"""
import argparse
import importlib.util
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from collections import Counter

ARGS = None
FIX = {}  # name -> report path; "_dir", "_md", "_html"
GLYPHS = "✓≡≈✗☠⊘○"


def tool(*args):
    p = subprocess.run([sys.executable, os.path.join(ARGS.source, "tools", "conformance.py"), *args],
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def case_file(path, name, dtype, params, indices, semantics="tf-gpu"):
    with open(path, "w") as f:
        json.dump({"gscheck_case": 1, "name": name, "op": "gather", "semantics": semantics,
                   "attrs": {"axis": {"dtype": "int32", "shape": [], "data": [0]}},
                   "inputs": {"params": {"dtype": dtype, "shape": [len(params)], "data": params},
                              "indices": {"dtype": "int32", "shape": [len(indices)],
                                          "data": indices}}}, f)


def build_fixture(root):
    """The five runs; returns [(label, report path)]."""
    backends = subprocess.run([ARGS.gscheck, "list-backends"], capture_output=True, text=True,
                              timeout=120).stdout.splitlines()
    src = ARGS.source
    trig = os.path.join(root, "trigger")
    os.makedirs(trig)
    # ABORT aborts on params[0] == 13 (tests/plugin/hostile/hostile_plugin.c).
    case_file(os.path.join(trig, "f32_ok.json"), "conformance/f32_ok", "float32", [5, 1, 2], [2, 0])
    case_file(os.path.join(trig, "f32_abort.json"), "conformance/f32_abort", "float32", [13, 1, 2], [1])
    case_file(os.path.join(trig, "i32_abort.json"), "conformance/i32_abort", "int32", [13, 4], [0, 1])
    flaky_cases, flaky_state = os.path.join(root, "flaky_cases"), os.path.join(root, "flaky_state")
    os.makedirs(flaky_cases)
    os.makedirs(flaky_state)
    case_file(os.path.join(flaky_cases, "f32.json"), "conformance/flaky_f32", "float32", [5, 1, 2],
              [2, 0], semantics="tf-cpu")
    runs = [("reference-tf-cpu", ["--backend", "reference", "--semantics", "tf-cpu", "--sweep", "80",
                                  "--max-bytes", "100000000",  # one golden case SKIPPED
                                  os.path.join(src, "corpus/golden/gather")], {}),
            ("example-nd", ["--backend", "plugin:" + ARGS.nd_plugin, "--sweep", "150",
                            "--known-failures",
                            os.path.join(src, "examples/plugins/gather_nd_plugin_declines.json"),
                            os.path.join(src, "corpus/golden/gather_nd")], {}),
            ("hostile-abort", ["--backend", "plugin:" + ARGS.abort_plugin, "--sweep", "0",
                               "--repeat", "1", trig], {}),
            # The worker's root is read-only: the counter's folder is named writable.
            ("flaky", ["--backend", "plugin:" + ARGS.flaky_plugin, "--sweep", "40", "--repeat",
                       "2", "--jobs", "1", "--worker-writable", flaky_state, flaky_cases],
             {"GSCHECK_FLAKY_COUNTER": os.path.join(flaky_state, "flaky.count")})]
    if "cuda-emu" in backends:
        runs.insert(1, ("cuda-emu", ["--backend", "cuda-emu", "--sweep", "80",
                                     os.path.join(src, "corpus/golden/gather_nd")], {}))
    out = []
    for label, args, env in runs:
        d = os.path.join(root, label)
        os.makedirs(d)
        report = os.path.join(d, "report.json")
        p = subprocess.run([ARGS.gscheck, "run", "--quiet", "--seed", "7", *args, "--report", report],
                           cwd=d, capture_output=True, text=True, timeout=600,
                           env={**os.environ, **env})
        if p.returncode not in (0, 1) or not os.path.isfile(report):
            raise RuntimeError(f"gscheck run for {label} exited {p.returncode}:\n{p.stdout}{p.stderr}")
        out.append((label, report))
    return out


def setUpModule():
    root = tempfile.mkdtemp(prefix="gscheck_conformance_test_")
    FIX["_dir"] = root
    FIX["reports"] = build_fixture(root)
    FIX["_md"] = os.path.join(root, "conformance.md")
    FIX["_html"] = os.path.join(root, "conformance.html")
    rc, out, err = tool("--md", FIX["_md"], "--html", FIX["_html"], "--version",
                        "flaky=flaky-gather 1.0", *[f"{l}={p}" for l, p in FIX["reports"]])
    if rc != 0:
        raise RuntimeError(f"conformance.py exited {rc}: {out}{err}")


def tearDownModule():
    if ARGS.keep:
        os.makedirs(ARGS.keep, exist_ok=True)
        for name in ("conformance.md", "conformance.html", "conformance.png"):
            if os.path.exists(os.path.join(FIX["_dir"], name)):
                shutil.copy(os.path.join(FIX["_dir"], name), ARGS.keep)
    shutil.rmtree(FIX["_dir"], ignore_errors=True)


def follows_only(c):
    """An XFAIL the reference under a followed rule predicted bit for bit (the report says which
    rule in known_failure.follows, and then its one explained group is that prediction)."""
    rule = (c.get("known_failure") or {}).get("follows")
    if rule:
        groups = c["differences"]["explained"]
        assert len(groups) == 1 and groups[0]["example"].startswith("follows " + rule), c
    return bool(rule)


def expected_cells():
    """(label, semantics, op, dtype, api) -> Counter of glyphs, tallied from the reports."""
    cells = {}
    for label, path in FIX["reports"]:
        with open(path) as f:
            report = json.load(f)
        for c in report["cases"]:
            dt = next((c["inputs"][k]["dtype"] for k in ("params", "tensor", "updates")
                       if k in c["inputs"]), "-")
            v = c["verdict"]
            internal = c["outcome"].startswith("error internal") or c["outcome"] == "not finished"
            glyph = ("○" if v == "UNIMPLEMENTED" else "⊘" if v == "SKIPPED" else
                     "☠" if v == "UNSAFE" or internal and v not in ("PASSED", "XPASS") else
                     "✓" if v in ("PASSED", "XPASS") else
                     ("≡" if follows_only(c) else "≈") if v == "XFAIL" else "✗")
            key = (label, c["semantics"], c["op"] or "(no op: file unparsed or unread)", dt, c["api"])
            cells.setdefault(key, Counter())[glyph] += 1
    # A semantics of which no case ran gets no column.
    ran = {k[:2] for k, n in cells.items() if set(n) - {"○", "⊘"}}
    return {k: n for k, n in cells.items() if k[:2] in ran}


def parse_cell(text):
    return Counter({g: int(n) for g, n in re.findall(r"([" + GLYPHS + r"])(\d+)", text)})


def markdown_cells(md):
    """(label, semantics, op, dtype, api) -> (Counter, cell text) from the per-op tables."""
    cells, op, cols = {}, None, None
    for line in md.splitlines():
        m = re.match(r"### (.+)$", line)
        if m:
            op, cols = m.group(1), None
            continue
        if not line.startswith("| ") or op is None:
            continue
        parts = [p.strip() for p in line.strip("|").split(" | ")]
        if parts[:2] == ["dtype", "API"]:
            cols = [tuple(h.split("<br>")) for h in parts[2:]]
        elif cols and not line.startswith("|---"):
            for (label, sem), text in zip(cols, parts[2:]):
                if text != "·":
                    cells[(label, sem, op, parts[0], parts[1])] = (parse_cell(text), text)
    return cells


class TableTest(unittest.TestCase):
    def setUp(self):
        with open(FIX["_md"], encoding="utf-8") as f:
            self.md = f.read()
        self.cells = markdown_cells(self.md)

    def test_every_cell_counts_its_cases(self):
        want = expected_cells()
        got = {k: v[0] for k, v in self.cells.items()}
        self.assertEqual(set(got), set(want))
        for k in want:
            self.assertEqual(got[k], want[k], k)

    def test_header_names_each_implementation_and_version(self):
        for label, path in FIX["reports"]:
            with open(path) as f:
                head = json.load(f)
            row = next(l for l in self.md.splitlines() if l.startswith(f"| {label} |"))
            self.assertIn(head["backend"]["name"], row)
            self.assertIn(head["tool"]["version"], row)
            self.assertIn(f"| {head['seed']} / {head['sweep']} | {len(head['cases'])} |", row)
            for sem, n in Counter(c["semantics"] for c in head["cases"]).items():
                self.assertIn(f"{sem} {n}", row)
        self.assertRegex(self.md, r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC")
        self.assertRegex(self.md, r"\n\| flaky \| plugin:\S+ \| flaky-gather 1\.0 \|")

    def test_a_semantics_that_never_ran_has_no_column(self):
        # The example plugin claims tf-gpu only: the tf-cpu corpus files are all UNIMPLEMENTED.
        self.assertFalse([k for k in self.cells if k[:2] == ("example-nd", "tf-cpu")])
        row = next(l for l in self.md.splitlines() if l.startswith("| example-nd |"))
        self.assertRegex(row, r"tf-cpu \d+ \(none ran: no column\)")

    def test_crash_cells(self):
        f32 = self.cells[("hostile-abort", "tf-gpu", "gather", "float32", "python")][0]
        i32 = self.cells[("hostile-abort", "tf-gpu", "gather", "int32", "python")][0]
        self.assertEqual(f32, Counter({"✓": 1, "☠": 1}))
        self.assertEqual(i32, Counter({"☠": 1}))
        self.assertRegex(self.md, r"hostile-abort tf-gpu, gather float32 python: signal 6 "
                                  r"\(Aborted\) `conformance/f32_abort`")
        self.assertRegex(self.md, r"replay: `gscheck eval --backend plugin:\S+hostile_abort\S* "
                                  r"\S+f32_abort.json`")

    def test_an_abort_is_unsafe_and_an_entry_only_describes_it(self):
        # The abort is UNSAFE in the report; with a file whose entry names it the run still fails,
        # exit 4 (only described UNSAFE cases), never 0; without the file exit 1.
        report = json.load(open(dict(FIX["reports"])["hostile-abort"]))
        verdicts = Counter(c["verdict"] for c in report["cases"])
        self.assertEqual(verdicts, Counter({"PASSED": 1, "UNSAFE": 2}))
        known = os.path.join(FIX["_dir"], "abort_known.json")
        with open(known, "w") as f:
            json.dump({"gscheck_known_failures": 2, "known": [
                {"id": "aborts-on-13", "when": {"ops": ["gather"]},
                 "forgives": {"crash": "signal 6"}, "reason": "aborts on 13", "link": "x.md"}]}, f)
        trig = os.path.join(FIX["_dir"], "trigger")
        for extra, want in (([], 1), (["--known-failures", known], 4)):
            p = subprocess.run([ARGS.gscheck, "run", "--backend", "plugin:" + ARGS.abort_plugin,
                                "--sweep", "0", "--repeat", "1", "--shrink-time", "0", *extra,
                                trig], capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, want, p.stdout + p.stderr)
            self.assertIn("2 UNSAFE", p.stdout)
        self.assertIn("(2 described by known failures)", p.stdout)
        self.assertIn("unsafe, described by known failure (aborts-on-13", p.stdout)

    def test_follows_is_its_own_kind(self):
        # An XFAIL graded bit for bit under a followed rule is "follows" (its own colour); one
        # forgiven by an entry of another kind, or partly so, stays "rule".
        spec = importlib.util.spec_from_file_location(
            "conformance_tool", os.path.join(ARGS.source, "tools/conformance.py"))
        tool_mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tool_mod)
        follows = {"entry": "wrap", "count": 2,
                   "example": "follows negative_indices=wrap: the reference under "
                              "negative_indices=wrap agrees (reference: bit-exact (4 elements))"}
        other = {"entry": "nan", "count": 1, "example": "expect: element 0 (flat): expected "
                                                         "nan(0x7fc3), got nan(0x7fc0)"}
        case = {"verdict": "XFAIL", "outcome": "float32 [4]", "reason": "known failure (wrap)",
                "known_failure": {"verdict": "FAILED", "entry": "wrap", "reason": "r", "link": "l",
                                  "follows": "negative_indices=wrap"},
                "differences": {"explained": [follows], "unexplained": []}}
        self.assertEqual(tool_mod.kind_of(case), "follows")
        # The kind is the report's field, not the text of an example.
        del case["known_failure"]["follows"]
        self.assertEqual(tool_mod.kind_of(case), "rule")
        case["differences"]["explained"] = [other]
        self.assertEqual(tool_mod.kind_of(case), "rule")
        self.assertEqual(tool_mod.WORST_FIRST.index("rule") < tool_mod.WORST_FIRST.index("follows"),
                         True)

    def test_rule_cells_name_their_entry(self):
        ruled = [(k, text) for k, (n, text) in self.cells.items()
                 if k[0] == "example-nd" and n["≈"]]
        self.assertTrue(ruled, "the example plugin's declines file explains no cell")
        with open(os.path.join(ARGS.source, "examples/plugins/gather_nd_plugin_declines.json")) as f:
            reasons = {e["id"]: e["reason"] for e in json.load(f)["known"]}
        for k, text in ruled:
            refs = re.search(r"≈\d+ \((R\d+(?:,R\d+)*)\)", text)
            self.assertTrue(refs, text)
            for ref in refs.group(1).split(","):
                line = re.search(rf"^- \*\*{ref}\*\* example-nd: `([^`]+)`, (\d+) cases\. (.*)$",
                                 self.md, re.M)
                self.assertTrue(line, ref)
                self.assertIn(line.group(1), reasons)
                self.assertTrue(line.group(3).startswith(reasons[line.group(1)]))

    def test_differs_lists_a_replayable_case(self):
        flaky = [k for k, (n, _) in self.cells.items() if k[0] == "flaky" and n["✗"]]
        self.assertTrue(flaky, "the flaky plugin differs nowhere")
        self.assertRegex(self.md, r"- flaky tf-cpu, gather float32 python: FAILED `[^`]+`: run 2 "
                                  r"of 2 against \w+: .*\n  replay: `gscheck eval --backend plugin:")

    def test_markers_keep_the_prose_around_them(self):
        path = os.path.join(FIX["_dir"], "doc.md")
        with open(path, "w") as f:
            f.write("# Title\n\nprose before\n\n<!-- conformance:begin -->\nold table\n"
                    "<!-- conformance:end -->\n\nprose after\n")
        rc, out, err = tool("--md", path, *[f"{l}={p}" for l, p in FIX["reports"][:1]])
        self.assertEqual(rc, 0, err)
        with open(path) as f:
            text = f.read()
        self.assertTrue(text.startswith("# Title\n\nprose before\n\n<!-- conformance:begin"))
        self.assertTrue(text.endswith("<!-- conformance:end -->\n\nprose after\n"))
        self.assertNotIn("old table", text)
        self.assertIn("| reference-tf-cpu |", text)

    def test_cases_per_cell_caps_the_page(self):
        path = os.path.join(FIX["_dir"], "cap.html")
        rc, out, err = tool("--html", path, "--cases-per-cell", "1",
                            *[f"{l}={p}" for l, p in FIX["reports"]])
        self.assertEqual(rc, 0, err)
        with open(path, encoding="utf-8") as f:
            page = f.read()
        blob = re.search(r'<script type="application/json" id="conformance-data">(.*?)</script>',
                         page, re.S).group(1)
        data = json.loads(blob)
        self.assertEqual(data["cap"], 1)
        self.assertIn("At most 1 cases per cell, kind and verdict", page)
        capped = 0
        for cell in data["cells"].values():
            kinds = Counter((e["kind"], e["verdict"]) for e in cell["examples"])
            self.assertLessEqual(max(kinds.values(), default=0), 1)
            capped += cell["failing"] > len(cell["examples"])
        self.assertGreater(capped, 0, "no cell had more failing cases than the cap")


class PythonBackendTest(unittest.TestCase):
    def test_replay_names_the_module_and_venv(self):
        # A python:MODULE report names the host plugin as its backend, and so do its replay
        # lines; the table gives the module and venv from the run's argv instead.
        with open(dict(FIX["reports"])["flaky"]) as f:
            r = json.load(f)
        host = "plugin:/opt/gscheck/libgscheck_python_plugin.so"
        old = r["backend"]["name"]
        r["backend"]["name"] = host
        r["argv"] = ["gscheck", "run", "--backend", "python:/src/m_backend.py", "--python-venv",
                     "/venvs/m"]
        for c in r["cases"]:
            c["repro"] = c["repro"].replace(old, host)
        path = os.path.join(FIX["_dir"], "python.json")
        with open(path, "w") as f:
            json.dump(r, f)
        md = os.path.join(FIX["_dir"], "python.md")
        rc, out, err = tool("--md", md, path)
        self.assertEqual(rc, 0, err)
        with open(md) as f:
            text = f.read()
        self.assertIn("| python:/src/m_backend.py | python:/src/m_backend.py |", text)
        self.assertRegex(text, r"replay: `gscheck eval --backend python:/src/m_backend.py "
                               r"--python-venv /venvs/m (--worker-writable \S+ )?--repeat 2 "
                               r"\S+\.json`")
        self.assertNotIn("libgscheck_python_plugin.so", text)


class BadInputTest(unittest.TestCase):
    def write(self, name, text):
        path = os.path.join(FIX["_dir"], name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def refused(self, path, *needles):
        rc, out, err = tool("--md", os.path.join(FIX["_dir"], "bad.md"), path)
        self.assertEqual(rc, 2, out + err)
        self.assertIn(path, err)
        for n in needles:
            self.assertIn(n, err)

    def real(self):
        with open(FIX["reports"][0][1]) as f:
            return json.load(f)

    def test_not_json(self):
        self.refused(self.write("text.json", "hello"), "expected a JSON object")

    def test_not_a_report(self):
        self.refused(self.write("other.json", '{"cases": [], "x": 1}'), "'gscheck_report'")

    def test_missing_case_field(self):
        r = self.real()
        del r["cases"][3]["verdict"]
        self.refused(self.write("noverdict.json", json.dumps(r)), "cases[3]", "'verdict' missing")

    def test_unknown_verdict(self):
        r = self.real()
        r["cases"][0]["verdict"] = "GREAT"
        self.refused(self.write("verdict.json", json.dumps(r)), "cases[0]", "'GREAT'")

    def test_missing_backend_name(self):
        r = self.real()
        del r["backend"]["name"]
        self.refused(self.write("nobackend.json", json.dumps(r)), "'backend.name' missing")

    def test_truncated(self):
        text = json.dumps(self.real(), indent=1)
        self.refused(self.write("cut.json", text[:len(text) // 2]))

    def test_a_case_removed(self):
        r = self.real()
        r["cases"].pop()
        self.refused(self.write("short.json", json.dumps(r)), "'totals.cases'")

    def test_folder_and_missing_file(self):
        self.refused(FIX["_dir"], "not a regular file")
        self.refused(os.path.join(FIX["_dir"], "absent.json"), "no such file")


def chromium(*args, timeout=90):
    """Runs headless chromium in its own session and profile; nothing outlives the call."""
    profile = tempfile.mkdtemp(prefix="chromium_", dir=FIX["_dir"])
    cmd = [ARGS.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", *args]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = "", "timed out"
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    return p.returncode, out, err


HOOK = ("<script>window.__errors=[];window.addEventListener('error',function(e){"
        "__errors.push('error: '+e.message+' at '+e.filename+':'+e.lineno)});"
        "var __ce=console.error;console.error=function(){"
        "__errors.push('console.error: '+[].join.call(arguments,' '));__ce.apply(console,arguments)};"
        "</script>")
HARNESS = r"""<pre id="harness-result"></pre><script>
(function () {
  var res = {errors: window.__errors, cells: []};
  document.querySelectorAll('table.op-table').forEach(function (t) {
    var heads = [].slice.call(t.rows[0].cells, 2);
    [].slice.call(t.rows, 1).forEach(function (tr) {
      [].slice.call(tr.cells, 2).forEach(function (td, i) {
        res.cells.push([heads[i].getAttribute('data-label'), heads[i].getAttribute('data-semantics'),
                        t.getAttribute('data-op'), tr.getAttribute('data-dtype'),
                        tr.getAttribute('data-api'), td.getAttribute('data-kinds') || '',
                        td.className, td.getAttribute('data-cell')]);
      });
    });
  });
  function click(sel) {
    var td = document.querySelector(sel);
    if (!td) return null;
    td.click();
    var p = document.getElementById('panel');
    return {cell: td.getAttribute('data-cell'), open: p.classList.contains('open'),
            title: p.querySelector('h3').textContent,
            cases: [].map.call(p.querySelectorAll('.case'), function (c) {
              var r = c.querySelector('pre.repro');
              return {name: c.getAttribute('data-case'), repro: r ? r.textContent : null,
                      text: c.textContent, rows: [].map.call(c.querySelectorAll('table.mm tr'),
                        function (tr) { return [].map.call(tr.cells, function (x) { return x.textContent; }); })};
            })};
  }
  // The picker: one implementation shown hides every other one's columns, and the address
  // keeps the choice; then every one is shown again.
  var boxes = document.querySelectorAll('#pick input[data-pick]');
  var first = boxes[0].getAttribute('data-pick');
  window.conformancePick([first]);
  function visible(sel) {
    return [].filter.call(document.querySelectorAll(sel), function (e) { return e.offsetParent !== null; })
      .map(function (e) { return e.getAttribute('data-impl'); });
  }
  res.pick = {first: first, boxes: boxes.length, heads: visible('#overview-table th[data-impl]'),
              cells: visible('#overview-table td[data-impl]'), hash: location.hash};
  window.conformancePick([].map.call(boxes, function (b) { return b.getAttribute('data-pick'); }));
  res.pick.all = visible('#overview-table th[data-impl]').length;
  res.crash = click('table.op-table td.k-crash');
  res.differ = click('table.op-table td.k-differ');
  res.hash = location.hash;
  document.getElementById('harness-result').textContent = JSON.stringify(res);
})();
</script>"""


class BrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(FIX["_html"], encoding="utf-8") as f:
            page = f.read()
        cls.page = page
        harness = os.path.join(FIX["_dir"], "harness.html")
        with open(harness, "w", encoding="utf-8") as f:
            f.write(page.replace("<head>", "<head>" + HOOK, 1).replace("</body>", HARNESS + "</body>", 1))
        rc, out, err = chromium("--dump-dom", "file://" + harness)
        cls.console = [l for l in err.splitlines() if "CONSOLE" in l]
        m = re.search(r'<pre id="harness-result">(.*?)</pre>', out, re.S)
        if rc != 0 or not m:
            raise AssertionError(f"chromium --dump-dom exited {rc}; no result in its output:\n"
                                 f"{out[-2000:]}\n{err[-3000:]}")
        cls.res = json.loads(html.unescape(m.group(1)))

    def test_no_console_error(self):
        self.assertEqual(self.res["errors"], [])
        self.assertEqual([l for l in self.console if "Uncaught" in l or "rror" in l], [])

    def test_no_network(self):
        self.assertNotRegex(self.page, r"""(src|href)=["']?(https?:)?//""")

    def test_cells_as_rendered(self):
        want = expected_cells()
        names = {"✓": "agree", "≡": "follows", "≈": "rule", "✗": "differ", "☠": "crash",
                 "⊘": "skipped", "○": "unimpl"}
        worst = ["crash", "differ", "rule", "follows", "agree", "skipped", "unimpl"]
        seen = {}
        for label, sem, op, dt, api, kinds, cls, _ in self.res["cells"]:
            if not kinds:
                self.assertIn("k-empty", cls)
                continue
            seen[(label, sem, op, dt, api)] = (Counter({k: int(n) for k, n in
                                                         (p.split("=") for p in kinds.split())}), cls)
        self.assertEqual(set(seen), set(want))
        for key, counts in want.items():
            as_kinds = Counter({names[g]: n for g, n in counts.items()})
            self.assertEqual(seen[key][0], as_kinds, key)
            self.assertIn("k-" + next(k for k in worst if as_kinds[k]), seen[key][1].split(), key)

    def test_picker_shows_one_implementation(self):
        p = self.res["pick"]
        self.assertGreaterEqual(p["boxes"], 3)
        self.assertTrue(p["heads"])
        self.assertEqual(set(p["heads"]), {p["first"]})
        self.assertEqual(set(p["cells"]), {p["first"]})
        self.assertEqual(p["hash"], "#show=" + p["first"])
        self.assertGreater(p["all"], len(p["heads"]))

    def test_click_shows_a_crash_with_its_replay(self):
        c = self.res["crash"]
        self.assertTrue(c and c["open"], c)
        self.assertIn("hostile-abort", c["title"])
        self.assertTrue(c["cases"])
        for case in c["cases"]:
            self.assertIn(case["name"], ("conformance/f32_abort", "conformance/i32_abort"))
            self.assertRegex(case["repro"], r"^gscheck eval --backend plugin:\S+ \S+_abort\.json$")
            self.assertIn("signal 6 (Aborted)", case["text"])
        self.assertEqual(self.res["hash"], "#cell=" + self.res["differ"]["cell"])

    def test_click_shows_expected_and_got(self):
        d = self.res["differ"]
        self.assertTrue(d and d["open"], d)
        self.assertIn("flaky", d["title"])
        rows = [r for case in d["cases"] for r in case["rows"]]
        self.assertIn(["output index", "expected", "got", "in the case's terms"], rows)
        values = [r for r in rows if r[0].startswith("[")]
        self.assertTrue(values, d)
        # The flaky plugin zeroes element 0 on its second run (or flips its zero's sign).
        def num(x):
            try:
                return float(x)
            except ValueError:
                return None
        zeroed = [r for r in values if r[0] == "[0]" and num(r[1]) is not None
                  and num(r[2]) == 0 and r[2] != r[1]]
        self.assertTrue(zeroed, values)
        # Each differing element told in the case's terms (compare/triage.h): its index row.
        self.assertTrue(all(len(r) == 4 and r[3].startswith("from indices") for r in zeroed),
                        zeroed)
        self.assertTrue(all(case["repro"].startswith("gscheck eval --backend plugin:")
                            for case in d["cases"]))

    def test_screenshot(self):
        shot = os.path.join(FIX["_dir"], "conformance.png")
        cell = self.res["differ"]["cell"]
        rc, out, err = chromium(f"--screenshot={shot}", "--window-size=1400,900",
                                "--hide-scrollbars", f"file://{FIX['_html']}#cell={cell}")
        self.assertEqual(rc, 0, err[-2000:])
        with open(shot, "rb") as f:
            png = f.read()
        self.assertTrue(png.startswith(b"\x89PNG"))
        self.assertGreater(len(png), 20000)  # a blank page is a few KB


def main():
    global ARGS
    p = argparse.ArgumentParser()
    for a in ("--gscheck", "--source", "--nd-plugin", "--abort-plugin", "--flaky-plugin"):
        p.add_argument(a, required=True)
    p.add_argument("--chromium", default=shutil.which("chromium") or "")
    p.add_argument("--keep", help="copy the markdown, page and screenshot here")
    p.add_argument("which", choices=["table", "browser"])
    ARGS, rest = p.parse_known_args()
    ARGS.source = os.path.abspath(ARGS.source)
    for a in ("gscheck", "nd_plugin", "abort_plugin", "flaky_plugin"):
        setattr(ARGS, a, os.path.abspath(getattr(ARGS, a)))
    if ARGS.which == "browser" and not (ARGS.chromium and os.access(ARGS.chromium, os.X_OK)):
        print("SKIPPED: no chromium (Debian package chromium; scripts/setup.sh installs it)")
        return 77
    tests = [TableTest, PythonBackendTest, BadInputTest] if ARGS.which == "table" else [BrowserTest]
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(t) for t in tests)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
