#!/usr/bin/env python3
"""Turn gscheck run reports into a conformance table: markdown and a self-contained HTML page.

Each REPORT is the JSON of `gscheck run --report FILE` (reports/report.schema.json) for one
implementation; `LABEL=FILE` names its column (default: the backend's name). The table crosses
implementation (and semantics profile) with op x dtype x API level; each cell counts its cases as
agrees / follows another rule (an XFAIL graded bit for bit against the reference under the rule
its known-failures entry names) / differs, forgiven by an entry (an XFAIL of another kind) /
wrong / unsafe / unimplemented / skipped. Reports are read as a stream, one case at a time, and at most
--cases-per-cell failing cases per cell, kind and verdict are kept for the page.

Exit status: 0 written, 2 bad input (the message names the file and the field) or bad usage.
Python 3 standard library only. See docs/conformance.md.
"""
import argparse
import datetime
import html
import json
import os
import re
import sys
from collections import Counter

OPS = ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
       "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max"]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "string"]
APIS = ["python", "kernel"]
VERDICTS = ["PASSED", "FAILED", "MISTRUSTED", "UNIMPLEMENTED", "NONDETERMINISTIC", "SKIPPED",
            "XFAIL", "XPASS", "DECLINED", "UNSAFE"]
# (key, words, glyph), in the order a cell lists them; a cell's colour is its worst kind.
KINDS = [("agree", "agrees", "✓"),
         ("follows", "follows another rule (named by its known failure; graded bit for bit)", "≡"),
         ("rule", "differs, forgiven by a known failure (an error, a decline, or values "
                  "unchecked)", "≈"),
         ("differ", "wrong: differs, unexplained", "✗"),
         ("crash", "unsafe: crashes, hangs or returns memory nobody wrote", "☠"),
         ("skipped", "skipped (over the memory budget)", "⊘"),
         ("unimpl", "unimplemented (outside the declared contract)", "○")]
WORST_FIRST = ["crash", "differ", "rule", "follows", "agree", "skipped", "unimpl"]
MAX_VALUE_CHARS = 256 << 20  # one JSON value (a case) larger than this is not a report
CHUNK = 1 << 20
UNPARSED = "(no op: file unparsed or unread)"
MD_FAILURES = 60  # failing cases the markdown lists (two per cell at most)


class BadInput(Exception):
    """A report that is not one: the message names the file and what is wrong."""


# ---------------------------------------------------------------------------------------------
# Streaming reader: the report's top-level fields, and its cases one at a time.

class _Stream:
    _ws = re.compile(r"[ \t\n\r]*")

    def __init__(self, f, path):
        self.f, self.path = f, path
        self.buf, self.pos, self.eof = "", 0, False
        self.decoder = json.JSONDecoder()

    def _fill(self):
        if self.eof:
            return False
        try:
            data = self.f.read(max(CHUNK, len(self.buf) - self.pos))
        except UnicodeDecodeError as e:
            raise BadInput(f"{self.path}: not UTF-8 text ({e.reason} at byte {e.start})")
        if not data:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def peek(self):
        while True:
            self.pos = self._ws.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return ""

    def expect(self, chars, what):
        c = self.peek()
        if c == "" or c not in chars:
            found = "the end of the file" if c == "" else repr(c)
            raise BadInput(f"{self.path}: expected {what}, found {found}")
        self.pos += 1
        return c

    def value(self, where):
        self.peek()
        while True:
            try:
                v, end = self.decoder.raw_decode(self.buf, self.pos)
                # A number at the buffer's end may continue in the next chunk.
                if end < len(self.buf) or self.eof:
                    self.pos = end
                    return v
            except json.JSONDecodeError as e:
                if self.eof:
                    raise BadInput(f"{self.path}: {where}: not valid JSON ({e.msg})")
            if len(self.buf) - self.pos > MAX_VALUE_CHARS:
                raise BadInput(f"{self.path}: {where}: one value larger than "
                               f"{MAX_VALUE_CHARS >> 20} MiB")
            self._fill()


def read_report(path, on_case):
    """Reads one report: returns its top-level fields but `cases`, calls on_case per case."""
    if not os.path.exists(path):
        raise BadInput(f"{path}: no such file")
    if not os.path.isfile(path):
        raise BadInput(f"{path}: not a regular file")
    head, n, case_error = {}, 0, None
    with open(path, encoding="utf-8") as f:
        s = _Stream(f, path)
        s.expect("{", "a JSON object (a gscheck report)")
        if s.peek() == "}":
            s.pos += 1
        else:
            while True:
                key = s.value("a field name")
                if not isinstance(key, str):
                    raise BadInput(f"{path}: not a JSON object (a gscheck report)")
                s.expect(":", f"':' after field '{key}'")
                if key == "cases":
                    s.expect("[", "'[' (field 'cases' must be an array)")
                    if s.peek() == "]":
                        s.pos += 1
                    else:
                        while True:
                            case = s.value(f"cases[{n}]")
                            if case_error is None:
                                try:
                                    on_case(case, n)
                                except BadInput as e:
                                    # Fields sort before the head's: not a report says more.
                                    case_error = e
                            n += 1
                            if s.expect(",]", f"',' or ']' after cases[{n - 1}]") == "]":
                                break
                    head["cases"] = n
                else:
                    head[key] = s.value(f"field '{key}'")
                if s.expect(",}", "',' or '}' between the report's fields") == "}":
                    break
        if s.peek() != "":
            raise BadInput(f"{path}: text after the report's closing brace")
    if "gscheck_report" not in head:
        raise BadInput(f"{path}: not a gscheck run report (field 'gscheck_report' missing)")
    if case_error is not None:
        raise case_error
    _check_head(path, head)
    return head


def _need(path, obj, field, types, where=""):
    name = f"{where}{field}"
    if not isinstance(obj, dict) or field not in obj:
        raise BadInput(f"{path}: field '{name}' missing")
    v = obj[field]
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in _tuple(types)):
        raise BadInput(f"{path}: field '{name}' has the wrong type ({type(v).__name__})")
    return v


def _tuple(t):
    return t if isinstance(t, tuple) else (t,)


def _check_head(path, head):
    if "gscheck_report" not in head:
        raise BadInput(f"{path}: not a gscheck run report (field 'gscheck_report' missing)")
    if head["gscheck_report"] != 1:
        raise BadInput(f"{path}: field 'gscheck_report' is {head['gscheck_report']!r}; this tool "
                       "reads version 1")
    if "cases" not in head:
        raise BadInput(f"{path}: field 'cases' missing")
    backend = _need(path, head, "backend", dict)
    _need(path, backend, "name", str, "backend.")
    for f in ("semantics", "apis", "ops", "dtypes"):
        _need(path, backend, f, list, "backend.")
    tool = _need(path, head, "tool", dict)
    _need(path, tool, "version", str, "tool.")
    _need(path, head, "started_at", str)
    _need(path, head, "elapsed_s", (int, float))
    totals = _need(path, head, "totals", dict)
    total = _need(path, totals, "cases", int, "totals.")
    if total != head["cases"]:
        raise BadInput(f"{path}: field 'totals.cases' is {total} but the report holds "
                       f"{head['cases']} cases (truncated or edited?)")


# ---------------------------------------------------------------------------------------------
# Grading one case into a cell.

def _case_fields(path, c, i):
    where = f"cases[{i}]"
    if not isinstance(c, dict):
        raise BadInput(f"{path}: {where} is not an object")
    name = c.get("name")
    label = f"{where} ({name})" if isinstance(name, str) else where
    for field, types in (("name", str), ("verdict", str), ("semantics", str), ("api", str),
                         ("inputs", dict), ("outcome", str), ("reason", str), ("repro", str),
                         ("checks", list)):
        if field not in c:
            raise BadInput(f"{path}: {label}: field '{field}' missing")
        if not isinstance(c[field], types):
            raise BadInput(f"{path}: {label}: field '{field}' has the wrong type "
                           f"({type(c[field]).__name__})")
    if "op" not in c:
        raise BadInput(f"{path}: {label}: field 'op' missing")
    if c["op"] is not None and not isinstance(c["op"], str):
        raise BadInput(f"{path}: {label}: field 'op' has the wrong type")
    if c["verdict"] not in VERDICTS:
        raise BadInput(f"{path}: {label}: field 'verdict' is {c['verdict']!r}, not one of "
                       + ", ".join(VERDICTS))
    for k, v in c["inputs"].items():
        if not isinstance(v, dict) or not isinstance(v.get("dtype"), str):
            raise BadInput(f"{path}: {label}: field 'inputs.{k}.dtype' missing")
    kf = c.get("known_failure")
    if kf is not None and not (isinstance(kf, dict) and isinstance(kf.get("entry"), str)):
        raise BadInput(f"{path}: {label}: field 'known_failure.entry' missing")
    return label


def data_dtype(c):
    for k in ("params", "tensor", "updates"):
        if k in c["inputs"]:
            return c["inputs"][k]["dtype"]
    return "-"


def is_crash(c):
    if c["verdict"] == "UNSAFE":
        return True
    if c["verdict"] in ("PASSED", "XPASS", "UNIMPLEMENTED", "SKIPPED"):
        return False
    return (c["outcome"] == "not finished" or c["outcome"].startswith("error internal")
            or ": the backend failed: " in c["reason"])


def crash_class(c):
    text = c["outcome"] + " " + c["reason"]
    m = re.search(r"crashed with signal (\d+) \(([^)]*)\)", text)
    if m:
        return f"signal {m.group(1)} ({m.group(2)})"
    for needle, cls in (("not finished", "timeout (--case-timeout)"), ("timed out", "timeout"),
                        ("memory cap", "out of memory"), ("exited with status", "exited"),
                        ("guard", "wrote outside its output"),
                        ("is in no input", "memory nobody wrote"),
                        ("traceback", "Python exception"), ("desynchronised", "desynchronised")):
        if needle in text:
            return cls
    return "internal error"


def kind_of(c):
    v = c["verdict"]
    if v == "UNIMPLEMENTED":
        return "unimpl"
    if v == "SKIPPED":
        return "skipped"
    if is_crash(c):
        return "crash"
    if v in ("PASSED", "XPASS"):
        return "agree"
    if v == "XFAIL":
        # The reference under a followed rule agreed bit for bit (report field since 2026-12-07).
        if (c.get("known_failure") or {}).get("follows"):
            return "follows"
        return "rule"
    return "differ"  # FAILED, DECLINED, NONDETERMINISTIC, MISTRUSTED


def ref_kind(cell):
    """The kind a cell's R-numbers follow: its entries explain its ≈ and ≡ cases."""
    return "rule" if cell.kinds["rule"] else "follows"


def _cut(s, n):
    return s if len(s) <= n else s[:n] + f"... ({len(s)} chars)"


def case_summary(c, kind):
    """What the page shows of one case: small, bounded."""
    inputs = ", ".join(f"{k} {v['dtype']}[{','.join(str(d) for d in v.get('shape', []))}]"
                       for k, v in c["inputs"].items())
    checks = []
    for ch in c["checks"]:
        if not isinstance(ch, dict) or ch.get("pass", True):
            continue
        mm = [[m.get("index", []), _cut(str(m.get("expected", "")), 200),
               _cut(str(m.get("got", "")), 200), _cut(str(m.get("triage", "")), 400)]
              for m in (ch.get("mismatches") or [])[:8] if isinstance(m, dict)]
        checks.append({"against": str(ch.get("against", "")),
                       "summary": _cut(str(ch.get("summary", "")), 600),
                       "mismatch_count": ch.get("mismatch_count", len(mm)), "mismatches": mm})
    out = {"name": c["name"], "file": c.get("file"), "verdict": c["verdict"], "kind": kind,
           "outcome": _cut(c["outcome"], 600), "reason": _cut(c["reason"], 2000),
           "repro": c["repro"], "inputs": inputs, "policy": c.get("bad_indices_policy", ""),
           "checks": checks}
    if kind == "crash":
        out["crash"] = crash_class(c)
    kf = c.get("known_failure")
    if kf:
        out["known"] = {"entry": kf["entry"], "was": str(kf.get("verdict", "")),
                        "reason": _cut(str(kf.get("reason", "")), 600),
                        "link": str(kf.get("link", ""))}
    diff = c.get("differences")
    if isinstance(diff, dict):
        out["differences"] = [
            [g.get("entry", ""), g.get("count", 0), _cut(str(g.get("example", "")), 300)]
            for part in ("explained", "unexplained")
            for g in (diff.get(part) or [])[:6] if isinstance(g, dict)]
    return out


class Cell:
    def __init__(self):
        self.kinds = Counter()
        self.verdicts = Counter()
        self.rules = Counter()      # known-failures entry id -> cases
        self.crashes = Counter()    # crash class -> cases
        self.index_dtypes = Counter()
        self.examples = []          # kept failing cases
        self.kept = Counter()       # per (kind, verdict)
        self.unimpl_reason = ""

    def add(self, c, kind, cap):
        self.kinds[kind] += 1
        self.verdicts[c["verdict"]] += 1
        it = c["inputs"].get("indices", {}).get("dtype")
        if it:
            self.index_dtypes[it] += 1
        kf = c.get("known_failure")
        if kf and c["verdict"] == "XFAIL":
            for e in kf["entry"].split(","):
                if e.strip():
                    self.rules[e.strip()] += 1
        if kind == "crash":
            self.crashes[crash_class(c)] += 1
        if kind == "unimpl" and not self.unimpl_reason:
            self.unimpl_reason = _cut(c["reason"], 300)
        # Kept per kind and verdict: a cell's FAILED cases are not crowded out by its DECLINED.
        if kind in ("follows", "rule", "differ", "crash") and self.kept[kind, c["verdict"]] < cap:
            self.kept[kind, c["verdict"]] += 1
            self.examples.append(case_summary(c, kind))

    def worst(self):
        return next((k for k in WORST_FIRST if self.kinds[k]), "empty")

    def total(self):
        return sum(self.kinds.values())


# ---------------------------------------------------------------------------------------------
# The table: columns are (report, semantics), rows (op, dtype, api).

class Column:
    def __init__(self, idx, label, semantics):
        self.idx, self.label, self.semantics = idx, label, semantics


def _order(value, known):
    return (known.index(value), "") if value in known else (len(known), value)


def load_known_failures(path, report_path):
    """The entries (id -> reason, link) of a report's known-failures file, when it is readable."""
    if not path:
        return {}
    for p in (path, os.path.join(os.path.dirname(report_path), path)):
        try:
            with open(p, encoding="utf-8") as f:
                doc = json.load(f)
            return {e["id"]: (str(e.get("reason", "")), str(e.get("link", "")))
                    for e in doc.get("known", []) if isinstance(e, dict) and "id" in e}
        except (OSError, ValueError, AttributeError, TypeError):
            continue
    return {}


def _option(argv, name):
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def python_backend(head):
    """The backend as the run named it, and for a python:MODULE backend the --backend text that
    replays it: its report names the Python host plugin, whose replay lines lack the module."""
    name = head["backend"]["name"]
    argv = head.get("argv") if isinstance(head.get("argv"), list) else []
    given = _option(argv, "--backend")
    if not (given and given.startswith("python:") and name.startswith("plugin:")
            and name.endswith("libgscheck_python_plugin.so")):
        return name, None
    venv = _option(argv, "--python-venv")
    return given, f"--backend {given}" + (f" --python-venv {venv}" if venv else "")


class Table:
    def __init__(self, cap, versions=None):
        self.cap = cap
        self.versions = versions or {}  # label -> what it runs (pinned packages)
        self.reports = []  # dicts: label, path, head, known (entry -> (reason, link))
        self.cells = {}    # (report idx, semantics, op, dtype, api) -> Cell; "*" aggregates
        self.rule_text = {}  # (report idx, entry) -> (reason, link) from the cases

    def add_report(self, label, path):
        idx = len(self.reports)

        def on_case(c, i):
            _case_fields(path, c, i)
            kind = kind_of(c)
            op = c["op"] or UNPARSED
            dt = data_dtype(c)
            sem = c["semantics"]
            for key in ((idx, sem, op, dt, c["api"]), (idx, sem, op, "*", "*"),
                        (idx, sem, "*", "*", "*")):
                cell = self.cells.get(key)
                if cell is None:
                    cell = self.cells[key] = Cell()
                cell.add(c, kind, self.cap)
            kf = c.get("known_failure")
            if kf and "," not in kf["entry"]:
                self.rule_text.setdefault((idx, kf["entry"]), (str(kf.get("reason", "")),
                                                               str(kf.get("link", ""))))

        head = read_report(path, on_case)
        backend, replay = python_backend(head)
        if replay:
            for key, cell in self.cells.items():
                if key[0] == idx:
                    for e in cell.examples:
                        e["repro"] = e["repro"].replace(
                            "--backend " + head["backend"]["name"], replay, 1)
        self.reports.append({"label": label or backend, "path": path, "head": head,
                             "backend": backend,
                             "known": load_known_failures(head.get("known_failures"), path)})

    def finish(self):
        # Unique labels: a second report of one backend gets its --semantics, then a number.
        seen = Counter(r["label"] for r in self.reports)
        for r in self.reports:
            if seen[r["label"]] > 1:
                argv = r["head"].get("argv") or []
                if "--semantics" in argv[:-1]:
                    r["label"] += " " + argv[argv.index("--semantics") + 1]
        seen, count = Counter(r["label"] for r in self.reports), Counter()
        for r in self.reports:
            if seen[r["label"]] > 1:
                count[r["label"]] += 1
                r["label"] += f" #{count[r['label']]}"
        # A semantics none of whose cases ran (all outside the contract: corpus files of another
        # device) gets no column; the implementations table says so.
        self.columns, self.hidden = [], set()
        for i, sem in sorted({(k[0], k[1]) for k in self.cells}):
            kinds = self.cells[(i, sem, "*", "*", "*")].kinds
            if kinds["unimpl"] + kinds["skipped"] == sum(kinds.values()):
                self.hidden.add((i, sem))
            else:
                self.columns.append(Column(i, self.reports[i]["label"], sem))
        keys = {(k[2], k[3], k[4]) for k in self.cells
                if k[3] != "*" and (k[0], k[1]) not in self.hidden}
        self.rows = sorted(keys, key=lambda r: (_order(r[0], OPS + [UNPARSED]),
                                                _order(r[1], DTYPES + ["-"]), _order(r[2], APIS)))
        self.ops = [op for op in OPS + [UNPARSED] if any(r[0] == op for r in self.rows)]
        self.ops += sorted({r[0] for r in self.rows} - set(self.ops))
        # Rules: numbered R1, R2, ... by column, then by how many cases each explains.
        self.rule_ref = {}
        self.rules = []
        for col in self.columns:
            total = self.cells.get((col.idx, col.semantics, "*", "*", "*"))
            for entry, n in sorted(total.rules.items(), key=lambda e: (-e[1], e[0])):
                key = (col.idx, entry)
                if key in self.rule_ref:
                    self.rules[self.rule_ref[key] - 1]["cases"] += n
                    continue
                reason, link = self.reports[col.idx]["known"].get(
                    entry, self.rule_text.get(key, ("", "")))
                self.rules.append({"ref": f"R{len(self.rules) + 1}", "impl": col.label,
                                   "entry": entry, "cases": n, "reason": reason, "link": link})
                self.rule_ref[key] = len(self.rules)

    def cell(self, col, op, dt, api):
        return self.cells.get((col.idx, col.semantics, op, dt, api))

    def refs(self, col, cell):
        numbers = sorted(self.rule_ref[(col.idx, e)] for e in cell.rules)
        return [f"R{n}" for n in numbers]

    def cell_text(self, col, cell):
        if cell is None or cell.total() == 0:
            return "·"
        parts = []
        for k, _, g in KINDS:
            if cell.kinds[k]:
                part = f"{g}{cell.kinds[k]}"
                if k == ref_kind(cell):
                    part += " (" + ",".join(self.refs(col, cell)) + ")"
                parts.append(part)
        return " ".join(parts)


# ---------------------------------------------------------------------------------------------
# Markdown.

BEGIN = "<!-- conformance:begin (written by tools/conformance.py; edits inside are lost) -->"
END = "<!-- conformance:end -->"


def _md(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def col_header(col):
    return f"{col.label}<br>{col.semantics}"


def report_rows(t):
    """Per report: label, backend, gscheck, semantics (with counts), APIs, known failures,
    seed / sweep, cases, time, interrupted."""
    rows = []
    for i, r in enumerate(t.reports):
        h = r["head"]
        tool = h["tool"]["version"] + (f" ({h['tool']['git_commit'][:10]})"
                                       if h["tool"].get("git_commit") else "")
        sems = []
        for (idx, sem) in sorted({(k[0], k[1]) for k in t.cells if k[0] == i}):
            n = t.cells[(idx, sem, "*", "*", "*")].total()
            sems.append(f"{sem} {n}" + (" (none ran: no column)" if (idx, sem) in t.hidden else ""))
        rows.append({"label": r["label"], "backend": r["backend"], "tool": tool,
                     "version": t.versions.get(r["label"], ""),
                     "semantics": ", ".join(sems), "apis": ", ".join(h["backend"]["apis"]),
                     "known": os.path.basename(h.get("known_failures") or "") or "none",
                     "sweep": f"{h.get('seed')} / {h.get('sweep')}", "cases": h["cases"],
                     "time": f"{float(h['elapsed_s']):.1f} s", "interrupted": h.get("interrupted"),
                     "path": r["path"]})
    return rows


def implementations_md(t):
    out = ["| implementation | backend | version | gscheck | cases per semantics "
           "| API levels | known failures | seed / sweep | cases | time |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in report_rows(t):
        note = f" — **interrupted: {_md(r['interrupted'])}**" if r["interrupted"] else ""
        out.append(f"| {_md(r['label'])} | {_md(r['backend'])}{note} | {_md(r['version'])} | "
                   f"{_md(r['tool'])} | "
                   f"{_md(r['semantics'])} | {_md(r['apis'])} | {_md(r['known'])} | "
                   f"{r['sweep']} | {r['cases']} | {r['time']} |")
    return out


def legend_md():
    return ["Cell: " + ", ".join(f"`{g}N` {w}" for _, w, g in KINDS) +
            "; N is the number of cases. `(R3)` names the known-failures entries (below) that "
            "explain the cell's `≈` and `≡` cases. `·`: no case."]


def markdown(t, meta):
    out = [f"Generated {meta['date']} by `{meta['command']}` from {len(t.reports)} reports; "
           f"at most {t.cap} failing cases per cell, kind and verdict are kept for the HTML page."]
    out += [f"{_md(meta['note'])}.", ""] if meta["note"] else [""]
    out += ["### Implementations", ""] + implementations_md(t) + [""]
    out += ["### Legend", ""] + legend_md() + [""]
    cols = t.columns
    head = "| op | " + " | ".join(_md(col_header(c)) for c in cols) + " |"
    sep = "|---|" + "---|" * len(cols)
    out += ["### Overview (all dtypes and API levels)", "", head, sep]
    for op in t.ops:
        out.append(f"| {op} | " + " | ".join(t.cell_text(c, t.cell(c, op, "*", "*"))
                                             for c in cols) + " |")
    for op in t.ops:
        out += ["", f"### {op}", "", "| dtype | API | " + head[len("| op | "):],
                "|---|---|" + "---|" * len(cols)]
        for (rop, dt, api) in t.rows:
            if rop == op:
                out.append(f"| {dt} | {api} | " + " | ".join(t.cell_text(c, t.cell(c, op, dt, api))
                                                            for c in cols) + " |")
    out += ["", "### Departures by rule (known failures)", ""]
    if not t.rules:
        out.append("No case was explained by a known-failures entry.")
    for r in t.rules:
        link = f" ({_md(r['link'])})" if r["link"] else ""
        out.append(f"- **{r['ref']}** {_md(r['impl'])}: `{r['entry']}`, {r['cases']} cases. "
                   f"{_md(r['reason'])}{link}")
    out += ["", "### Failures no rule explains", ""]
    listed = []
    for col in cols:
        for (op, dt, api) in t.rows:
            cell = t.cell(col, op, dt, api)
            bad = sorted((e for e in (cell.examples if cell else [])
                          if e["kind"] in ("crash", "differ")),
                         key=lambda e: (e["kind"] != "crash", e["verdict"] != "FAILED"))
            for e in bad[:2]:
                what = e.get("crash") or e["verdict"]
                listed.append(f"- {_md(col.label)} {col.semantics}, {op} {dt} {api}: {what} "
                              f"`{_md(e['name'])}`: {_md(_cut(e['reason'], 240))}  \n"
                              f"  replay: `{_md(e['repro'])}`")
    out += listed[:MD_FAILURES] or ["None."]
    if len(listed) > MD_FAILURES:
        out.append(f"- ... and {len(listed) - MD_FAILURES} more (two per cell) on the HTML page.")
    return "\n".join(out) + "\n"


def write_markdown(path, text, title):
    """Replaces the text between the markers when FILE has them; else writes a whole page."""
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
        b = re.search(r"<!-- conformance:begin[^>]*-->", old)
        e = re.search(r"<!-- conformance:end -->", old)
        if b and e and b.end() <= e.start():
            _write(path, old[:b.start()] + BEGIN + "\n" + text + END + old[e.end():])
            return
    _write(path, f"# {title}\n\n{BEGIN}\n{text}{END}\n")


def _write(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# HTML: the table rendered here, the cells' details as inline JSON the page's script shows.

CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header,main{padding:12px 20px}
header{background:#263238;color:#eceff1}
header h1{font-size:20px;margin:0 0 4px}
header p{margin:2px 0;color:#cfd8dc}
header code{color:#fff;word-break:break-all}
#impls td:first-child{white-space:nowrap;font-weight:600}
h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #ccc;padding-bottom:3px}
table{border-collapse:collapse;background:#fff;margin-bottom:6px}
th,td{border:1px solid #cfd8dc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eceff1;font-weight:600;white-space:nowrap}
th small{font-weight:400;color:#546e7a;display:block}
td.cell{cursor:pointer;white-space:nowrap;font-variant-numeric:tabular-nums;min-width:70px}
td.cell:hover,td.cell:focus{outline:2px solid #1565c0;outline-offset:-2px}
td.sel{outline:3px solid #0d47a1 !important;outline-offset:-3px}
.k-agree{background:#c8e6c9}.k-follows{background:#bbdefb}.k-rule{background:#ffe082}.k-differ{background:#ef9a9a}
.k-crash{background:#b71c1c;color:#fff}.k-unimpl{background:#e0e0e0;color:#616161}
.k-skipped{background:#cfd8dc;color:#37474f}.k-empty{background:#fff;color:#bbb;cursor:default}
.legend span.sw{display:inline-block;padding:1px 8px;margin:0 4px 4px 0;border:1px solid #b0bec5;border-radius:3px}
.wrap{overflow-x:auto}
#panel{position:fixed;top:0;right:0;width:min(720px,52vw);height:100vh;overflow:auto;background:#fff;
 border-left:2px solid #455a64;box-shadow:-4px 0 12px rgba(0,0,0,.15);padding:12px 16px;box-sizing:border-box;display:none}
#panel.open{display:block}
#panel h3{margin:0 28px 6px 0;font-size:16px}
#panel .close{position:absolute;top:8px;right:10px;border:0;background:#eceff1;font-size:16px;cursor:pointer;border-radius:3px}
.case{border:1px solid #cfd8dc;border-left:5px solid #90a4ae;border-radius:3px;margin:8px 0;padding:6px 8px}
.case.k-crash{border-left-color:#b71c1c;background:#fff;color:inherit}
.case.k-differ{border-left-color:#e53935;background:#fff}
.case.k-rule{border-left-color:#ffb300;background:#fff}
.case.k-follows{border-left-color:#1e88e5;background:#fff}
#pick label{display:inline-block;margin:0 10px 4px 0;white-space:nowrap}
#pick button{margin-right:6px}
.case .name{font-weight:600;word-break:break-all}
.badge{display:inline-block;font-size:12px;padding:0 6px;border-radius:3px;background:#455a64;color:#fff;margin-right:4px}
pre.repro{background:#263238;color:#e0f2f1;padding:5px 8px;border-radius:3px;white-space:pre-wrap;word-break:break-all;margin:4px 0}
table.mm td,table.mm th{font:12px/1.3 ui-monospace,"DejaVu Sans Mono",monospace;padding:1px 6px}
.muted{color:#607d8b}
.kv{margin:2px 0;display:grid;grid-template-columns:128px 1fr;gap:8px}
.kv b{color:#37474f}
.kv span{word-break:break-word}
body.panel-open main,body.panel-open header{margin-right:min(720px,52vw)}
"""

JS = r"""
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('conformance-data').textContent);
  var panel = document.getElementById('panel');
  var body = document.getElementById('panel-body');
  var selected = null, cellId = null;
  // The implementations shown (#pick): a style rule hides each other one's columns.
  var picks = [].slice.call(document.querySelectorAll('#pick input[data-pick]'));
  function shownList() {
    return picks.filter(function (b) { return b.checked; }).map(function (b) { return b.getAttribute('data-pick'); });
  }
  function setHash() {
    var parts = [], shown = shownList();
    if (shown.length !== picks.length) parts.push('show=' + shown.join(','));
    if (cellId !== null) parts.push('cell=' + cellId);
    if (history.replaceState) history.replaceState(null, '', '#' + parts.join('&'));
  }
  function applyPicks() {
    document.getElementById('pick-style').textContent = picks.filter(function (b) { return !b.checked; })
      .map(function (b) { return '[data-impl="' + b.getAttribute('data-pick') + '"]{display:none}'; }).join('\n');
    setHash();
  }
  picks.forEach(function (b) { b.addEventListener('change', applyPicks); });
  document.getElementById('pick-all').addEventListener('click', function () { picks.forEach(function (b) { b.checked = true; }); applyPicks(); });
  document.getElementById('pick-none').addEventListener('click', function () { picks.forEach(function (b) { b.checked = false; }); applyPicks(); });
  window.conformancePick = function (ids) {
    picks.forEach(function (b) { b.checked = ids.indexOf(b.getAttribute('data-pick')) >= 0; });
    applyPicks();
  };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function kv(parent, key, value) {
    if (value === undefined || value === null || value === '') return;
    var p = el('div', 'kv'); p.appendChild(el('b', null, key)); p.appendChild(el('span', null, value));
    parent.appendChild(p);
  }
  function counts(obj) {
    return Object.keys(obj).map(function (k) { return k + ' ' + obj[k]; }).join(', ');
  }
  function showCase(c) {
    var d = el('div', 'case k-' + c.kind);
    d.setAttribute('data-case', c.name);
    var t = el('div');
    t.appendChild(el('span', 'badge', c.crash ? 'unsafe: ' + c.crash : c.verdict));
    t.appendChild(el('span', 'name', c.name));
    d.appendChild(t);
    kv(d, 'inputs', c.inputs + (c.policy ? ', bad_indices_policy ' + c.policy : ''));
    kv(d, 'outcome', c.outcome);
    kv(d, 'reason', c.reason);
    if (c.known) kv(d, 'known failure', c.known.entry + ' (was ' + c.known.was + '): ' + c.known.reason + (c.known.link ? ' ' + c.known.link : ''));
    (c.checks || []).forEach(function (ch) {
      kv(d, 'against ' + ch.against, ch.summary);
      if (ch.mismatches.length) {
        var tb = el('table', 'mm'), hr = el('tr');
        ['output index', 'expected', 'got', 'in the case\'s terms'].forEach(function (h) { hr.appendChild(el('th', null, h)); });
        tb.appendChild(hr);
        ch.mismatches.forEach(function (m) {
          var r = el('tr');
          r.appendChild(el('td', null, '[' + m[0].join(',') + ']'));
          r.appendChild(el('td', null, m[1]));
          r.appendChild(el('td', null, m[2]));
          r.appendChild(el('td', 'triage', m[3] || ''));
          tb.appendChild(r);
        });
        if (ch.mismatch_count > ch.mismatches.length) {
          var more = el('tr'), td = el('td', 'muted', (ch.mismatch_count - ch.mismatches.length) + ' more differing elements');
          td.colSpan = 4; more.appendChild(td); tb.appendChild(more);
        }
        d.appendChild(tb);
      }
    });
    (c.differences || []).forEach(function (g) {
      kv(d, g[0] ? 'explained by ' + g[0] : 'unexplained', g[1] + ': ' + g[2]);
    });
    d.appendChild(el('div', 'muted', 'replay:'));
    d.appendChild(el('pre', 'repro', c.repro));
    return d;
  }
  function show(id) {
    var cell = data.cells[id];
    if (!cell) return;
    if (selected) selected.classList.remove('sel');
    selected = document.querySelector('td[data-cell="' + id + '"]');
    if (selected) selected.classList.add('sel');
    body.textContent = '';
    body.appendChild(el('h3', null, cell.title));
    kv(body, 'cases', cell.total + ' (' + counts(cell.verdicts) + ')');
    kv(body, 'index dtypes', counts(cell.index_dtypes));
    if (Object.keys(cell.crashes).length) kv(body, 'crashes', counts(cell.crashes));
    kv(body, 'unimplemented', cell.unimpl_reason);
    cell.rules.forEach(function (ref) {
      var r = data.rules[ref];
      kv(body, ref + ' ' + r.entry, r.cases_here[id] + ' cases here. ' + r.reason + (r.link ? ' (' + r.link + ')' : ''));
    });
    var shown = cell.examples.length, failing = cell.failing;
    body.appendChild(el('p', 'muted', failing === 0 ? 'No failing case: every case agrees, is unimplemented or skipped.' :
      'Showing ' + shown + ' of ' + failing + ' cases that do not agree (at most ' + data.cap + ' per kind and verdict: --cases-per-cell).'));
    cell.examples.forEach(function (c) { body.appendChild(showCase(c)); });
    panel.classList.add('open');
    document.body.classList.add('panel-open');
    panel.scrollTop = 0;
    cellId = id;
    setHash();
  }
  document.querySelectorAll('td.cell[data-cell]').forEach(function (td) {
    td.addEventListener('click', function () { show(td.getAttribute('data-cell')); });
    td.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); show(td.getAttribute('data-cell')); } });
  });
  document.getElementById('panel-close').addEventListener('click', function () {
    panel.classList.remove('open');
    document.body.classList.remove('panel-open');
    if (selected) selected.classList.remove('sel');
    cellId = null;
    setHash();
  });
  var sm = /(?:^#|&)show=([\d,]*)(?:&|$)/.exec(location.hash);
  var m = /(?:^#|&)cell=(\d+)(?:&|$)/.exec(location.hash);
  if (sm) window.conformancePick(sm[1] ? sm[1].split(',') : []);
  if (m) show(m[1]);
  window.conformanceShow = show;
})();
"""


def _h(s):
    return html.escape(str(s), quote=True)


def _slug(op):
    return "op-" + (re.sub(r"[^a-z0-9_]+", "-", op).strip("-") or "x")


def html_page(t, meta):
    cells, cell_ids = {}, {}
    rules = {r["ref"]: dict(r, cases_here={}) for r in t.rules}

    def cell_td(col, key, title):
        cell = t.cells.get(key)
        if cell is None or cell.total() == 0:
            return f'<td class="cell k-empty" data-impl="{col.idx}">·</td>'
        cid = str(len(cells))
        cell_ids[key] = cid
        refs = t.refs(col, cell)
        for ref, entry in zip(refs, sorted(cell.rules, key=lambda e: t.rule_ref[(col.idx, e)])):
            rules[ref]["cases_here"][cid] = cell.rules[entry]
        cells[cid] = {"title": title, "total": cell.total(),
                      "verdicts": {v: cell.verdicts[v] for v in VERDICTS if cell.verdicts[v]},
                      "index_dtypes": dict(cell.index_dtypes), "crashes": dict(cell.crashes),
                      "unimpl_reason": cell.unimpl_reason, "rules": refs,
                      "failing": sum(cell.kinds[k] for k in ("follows", "rule", "differ", "crash")),
                      "examples": cell.examples}
        parts = []
        for k, words, g in KINDS:
            if cell.kinds[k]:
                extra = f' <small>{",".join(refs)}</small>' if k == ref_kind(cell) else ""
                parts.append(f'<span title="{_h(words)}">{g}{cell.kinds[k]}</span>{extra}')
        kinds = " ".join(f"{k}={cell.kinds[k]}" for k, _, _ in KINDS if cell.kinds[k])
        return (f'<td class="cell k-{cell.worst()}" tabindex="0" data-cell="{cid}" '
                f'data-impl="{col.idx}" '
                f'data-kinds="{_h(kinds)}" '
                f'title="{_h(title)}">{" ".join(parts)}</td>')

    cols = t.columns
    colhead = "".join(f'<th data-label="{_h(c.label)}" data-semantics="{_h(c.semantics)}" '
                      f'data-impl="{c.idx}">'
                      f'{_h(c.label)}<small>{_h(c.semantics)}</small></th>' for c in cols)
    o = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width,initial-scale=1">',
         f"<title>{_h(meta['title'])}</title><style>{CSS}</style></head><body>",
         f"<header><h1>{_h(meta['title'])}</h1>",
         f"<p>Generated {_h(meta['date'])} from {len(t.reports)} gscheck reports by "
         f"<code>{_h(meta['command'])}</code>.</p>",
         f"<p>{_h(meta['note'])}.</p>" if meta["note"] else "",
         "<p>Click a cell for its cases: what differs, the expected and received values, and the "
         "command that replays each case.</p></header><main>"]
    o.append('<h2>Legend</h2><p class="legend">' + "".join(
        f'<span class="sw k-{k}">{g} {_h(w)}</span>' for k, w, g in KINDS) +
        "</p><p class=muted>Each cell counts its cases by kind; its colour is its worst kind. "
        "R<i>n</i> names the known-failures entries (listed at the end) that explain its ≈ "
        "and ≡ cases. "
        f"At most {t.cap} cases per cell, kind and verdict are kept on this page.</p>")
    # The implementations to compare: one screen per runtime instead of fourteen columns.
    shown = sorted({c.idx for c in cols})
    o.append('<h2>Compare</h2><p id="pick" class="legend">'
             '<button type="button" id="pick-all">all</button>'
             '<button type="button" id="pick-none">none</button>' + "".join(
                 f'<label><input type="checkbox" data-pick="{i}" checked> '
                 f'{_h(t.reports[i]["label"])}</label>' for i in shown) +
             '</p><p class=muted>Tick the implementations to show; the choice is kept in the '
             'address (<code>#show=0,3</code>), so a link opens the same screen.</p>'
             '<style id="pick-style"></style>')
    o.append(f'<h2 id="overview">Overview: all dtypes and API levels</h2><div class=wrap>'
             f'<table id="overview-table"><tr><th>op</th>{colhead}</tr>')
    for op in t.ops:
        tds = "".join(cell_td(c, (c.idx, c.semantics, op, "*", "*"),
                              f"{c.label} ({c.semantics}): {op}, all dtypes") for c in cols)
        o.append(f'<tr><th><a href="#{_slug(op)}">{_h(op)}</a></th>{tds}</tr>')
    o.append("</table></div>")
    o.append("<h2>Implementations</h2><div class=wrap><table id=impls><tr><th>implementation</th>"
             "<th>backend</th><th>version</th><th>gscheck</th><th>cases per semantics</th>"
             "<th>API levels</th><th>known failures</th><th>seed / sweep</th><th>cases</th>"
             "<th>time</th><th>report</th></tr>")
    for r in report_rows(t):
        intr = (f'<br><b style="color:#b71c1c">interrupted: {_h(r["interrupted"])}</b>'
                if r["interrupted"] else "")
        keys = ("label", "backend", "version", "tool", "semantics", "apis", "known", "sweep",
                "cases", "time", "path")
        o.append("<tr>" + "".join(f"<td>{_h(r[k])}{intr if k == 'backend' else ''}</td>"
                                  for k in keys) + "</tr>")
    o.append("</table></div>")
    for op in t.ops:
        o.append(f'<h2 id="{_slug(op)}">{_h(op)}</h2><div class=wrap><table class="op-table" '
                 f'data-op="{_h(op)}"><tr><th>dtype</th><th>API</th>{colhead}</tr>')
        for (rop, dt, api) in t.rows:
            if rop != op:
                continue
            tds = "".join(cell_td(c, (c.idx, c.semantics, op, dt, api),
                                  f"{c.label} ({c.semantics}): {op} {dt}, {api} API") for c in cols)
            o.append(f'<tr data-dtype="{_h(dt)}" data-api="{_h(api)}"><th>{_h(dt)}</th>'
                     f"<td>{_h(api)}</td>{tds}</tr>")
        o.append("</table></div>")
    o.append('<h2 id="rules">Departures by rule (known failures)</h2>')
    if not t.rules:
        o.append("<p>No case was explained by a known-failures entry.</p>")
    else:
        o.append("<table><tr><th>ref</th><th>implementation</th><th>entry</th><th>cases</th>"
                 "<th>why</th></tr>")
        for r in t.rules:
            o.append(f"<tr><td>{r['ref']}</td><td>{_h(r['impl'])}</td><td><code>{_h(r['entry'])}"
                     f"</code></td><td>{r['cases']}</td><td>{_h(r['reason'])}"
                     f"{'<br><span class=muted>' + _h(r['link']) + '</span>' if r['link'] else ''}"
                     "</td></tr>")
        o.append("</table>")
    o.append("</main>")
    o.append('<aside id="panel" aria-live="polite"><button id="panel-close" class="close" '
             'title="close">✕</button><div id="panel-body"></div></aside>')
    blob = json.dumps({"cap": t.cap, "cells": cells, "rules": rules}, ensure_ascii=False,
                      separators=(",", ":"))
    blob = blob.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    o.append(f'<script type="application/json" id="conformance-data">{blob}</script>')
    o.append(f"<script>{JS}</script></body></html>")
    return "\n".join(o) + "\n"


# ---------------------------------------------------------------------------------------------

def main(argv):
    p = argparse.ArgumentParser(
        prog="conformance.py", description="Conformance table (markdown, HTML) from gscheck run "
        "reports. REPORT is FILE or LABEL=FILE.")
    p.add_argument("reports", nargs="+", metavar="REPORT")
    p.add_argument("--md", help="markdown output: replaces the text between the "
                   "conformance:begin/end markers if FILE has them, else writes a whole page")
    p.add_argument("--html", help="HTML output (self-contained)")
    p.add_argument("--cases-per-cell", type=int, default=10, metavar="K",
                   help="failing cases kept per cell, kind and verdict (default 10)")
    p.add_argument("--title", default="gscheck conformance: gather and scatter against "
                   "TensorFlow's contract")
    p.add_argument("--command", help="the command shown as having produced the table "
                   "(default: this one)")
    p.add_argument("--date", help="the date shown (default: now, UTC)")
    p.add_argument("--version", action="append", default=[], metavar="LABEL=TEXT",
                   help="what implementation LABEL runs (its pinned packages), for the header")
    p.add_argument("--root", help="show paths under DIR relative to it (and $HOME as ~)")
    p.add_argument("--note", default="", help="a line for the header (how long the runs took)")
    a = p.parse_args(argv)
    if not a.md and not a.html:
        p.error("nothing to write: give --md FILE and/or --html FILE")
    if a.cases_per_cell < 0:
        p.error("--cases-per-cell must be >= 0")
    versions = {}
    for v in a.version:
        if "=" not in v:
            p.error(f"--version {v!r}: expected LABEL=TEXT")
        k, text = v.split("=", 1)
        versions[k] = text
    t = Table(a.cases_per_cell, versions)
    try:
        for spec in a.reports:
            label, path = (spec.split("=", 1) if "=" in spec and not os.path.exists(spec)
                           else ("", spec))
            t.add_report(label, path)
    except BadInput as e:
        print(f"conformance.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"conformance.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    t.finish()
    meta = {"title": a.title,
            "date": a.date or datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M UTC"),
            "command": a.command or " ".join(["tools/conformance.py"] + argv), "note": a.note}
    def short(text):
        # Replay lines a reader can paste from the source tree: paths under --root relative.
        for base, to in ((a.root, ""), (os.path.expanduser("~"), "~/")):
            if base and not set('"\\<>&') & set(base):
                text = text.replace(os.path.abspath(base).rstrip("/") + "/", to)
        return text

    if a.md:
        write_markdown(a.md, short(markdown(t, meta)), a.title)
    if a.html:
        _write(a.html, short(html_page(t, meta)))
    print(f"conformance: {len(t.reports)} reports, {len(t.columns)} columns, {len(t.rows)} rows"
          + (f"; markdown {a.md}" if a.md else "") + (f"; HTML {a.html}" if a.html else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
