#!/usr/bin/env python3
"""Merges `gscheck bench` reports of several implementations (bench/runtimes/speed_table.sh) into
one markdown table: a row per implementation, a column per problem, each cell the median GB/s
and, in parentheses, the speed over a memcpy of the same bytes measured in that run. A backend
that FAILED, declined or was skipped shows its verdict instead. The table replaces the text
between <!-- speed-table:begin --> and <!-- speed-table:end --> of --md (a new file holds only
the table).

usage: speed_table.py --md FILE --command TEXT NAME=REPORT.json...
"""
import argparse
import json
import os
import sys

BEGIN, END = "<!-- speed-table:begin -->", "<!-- speed-table:end -->"


def short(problem):
    # gather_nd/float32/64B/uniform/table=256KiB/n=65536 -> gather_nd 256KiB
    parts = problem.split("/")
    table = next((p[len("table="):] for p in parts if p.startswith("table=")), "")
    return "%s %s" % (parts[0], table)


def cell(result):
    if result is None:
        return "-"
    if result.get("verdict") != "PASSED" or "gbps" not in result:
        return result.get("verdict", "?")
    return "%.2f (%.3f)" % (result["gbps"], result["ratio_to_copy"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--md", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("reports", nargs="+", metavar="NAME=REPORT")
    a = ap.parse_args()
    rows, problems, machine, started, notes = [], [], None, [], []
    for spec in a.reports:
        name, sep, path = spec.partition("=")
        if not sep:
            sys.exit("speed_table.py: expected NAME=REPORT, got %r" % spec)
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit("speed_table.py: %s: %s" % (path, e))
        if r.get("gscheck_bench_report") != 1:
            sys.exit("speed_table.py: %s is not a gscheck bench report" % path)
        machine = machine or r.get("machine", {})
        started.append(r.get("started_at", ""))
        by_problem = {}
        for p in r.get("problems", []):
            if p["name"] not in problems:
                problems.append(p["name"])
            res = p["results"][0] if p.get("results") else None
            by_problem[p["name"]] = res
            if res and res.get("verdict") not in ("PASSED", None) and res.get("reason"):
                notes.append("%s, %s: %s %s" % (name, short(p["name"]), res["verdict"],
                                                 res["reason"][:160]))
        rows.append((name, by_problem))
    stamps = sorted(s[:16].replace("T", " ") for s in started if s)
    when = "%s to %s UTC" % (stamps[0], stamps[-1][11:]) if stamps else "?"
    lines = [
        "%s; %s, %d CPUs; `%s`. Each cell: median GB/s (DESIGN.md's bytes) and, in parentheses, "
        "the speed over a memcpy of the same bytes in the same run." % (
            when, (machine or {}).get("cpu", "?"), (machine or {}).get("cpus", 0), a.command),
        "",
        "| implementation | " + " | ".join(short(p) for p in problems) + " |",
        "|---|" + "---:|" * len(problems),
    ]
    for name, by_problem in rows:
        lines.append("| %s | %s |" % (name, " | ".join(cell(by_problem.get(p)) for p in problems)))
    if notes:
        lines.append("")
        lines += ["- " + n for n in notes]
    table = "\n".join(lines) + "\n"
    if os.path.exists(a.md):
        with open(a.md) as f:
            text = f.read()
        if BEGIN not in text or END not in text:
            sys.exit("speed_table.py: %s has no %s ... %s markers" % (a.md, BEGIN, END))
        head, rest = text.split(BEGIN, 1)
        text = head + BEGIN + "\n" + table + END + rest.split(END, 1)[1]
    else:
        text = BEGIN + "\n" + table + END + "\n"
    with open(a.md, "w") as f:
        f.write(text)
    print(table, end="")


if __name__ == "__main__":
    main()
