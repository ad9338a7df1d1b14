#!/usr/bin/env bash
# Grade one of the shipped Python-hosted backends (plugins/onnxruntime, plugins/openvino,
# plugins/litert, plugins/tf_xla, plugins/jax) through the Python host on the corpus and a
# seeded sweep, in its pinned venv.
#   with:    gscheck run --known-failures plugins/NAME/NAME_known_failures.json
#            --lint-known-failures (what `gscheck known-failures check` runs: no entry wider than
#            the cases it explains, none forgiving an injected bug); passes when
#            gscheck exits 0 (every departure explained) or 4 (besides, UNSAFE cases that entries
#            describe: a crash or memory nobody wrote, never green in gscheck's own verdict, which
#            this check, testing the file, accepts when described) and every entry explained a case.
#   without: the same run without the file; passes when gscheck exits 1 and the cases that fail
#            are exactly those the `with` run (its report in --out, run first) called XFAIL or
#            described UNSAFE.
# Usage: runtime_backend_check.sh NAME with|without GSCHECK --out DIR [gscheck run options...]
# NAME may also be the module's path (tools/mutate.py plants a mutated copy that way).
# Exit status: 0 pass, 1 fail, 2 setup error, 77 skipped (no venv can be had: PyPI unreachable).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if (($# < 5)) || [[ "$4" != --out ]]; then
  echo "usage: $0 NAME with|without GSCHECK --out DIR [gscheck run options...]" >&2
  exit 2
fi
name="$1" mode="$2" gscheck="$3" out="$5"
shift 5
# The module: plugins/*/NAME_backend.py (variants sit beside a main module: plugins/jax/jax_lax_...).
# Its known failures and venv: NAME's, else those of the longest prefix of NAME cut at a '_' that
# has them (tf_xla_kernel: plugins/tf_xla/tf_xla_known_failures.json and scripts/tf_venv.sh;
# jax_promise_in_bounds: plugins/jax/jax_known_failures.json, same answers).
if [[ "$mode" != with && "$mode" != without ]]; then
  echo "$0: mode must be 'with' or 'without', not '$mode'" >&2
  exit 2
fi
source "$root/scripts/backend_files.sh"
runtime_backend "$root" "$name"  # sets module, name, known, venv
mkdir -p "$out/$mode"
# 1 GiB budget (a later --max-bytes wins): the runtimes build outputs of several GiB that no
# TensorFlow limit stops under gscheck's 4 GiB default, and the worker then runs out of memory.
# --shrink-time 0: these runs count departures; shrinking each (a call per step) is not their job.
args=(run --backend "python:$module" --python-venv "$venv" --seed 1 --quiet
      --max-bytes 1073741824 --shrink-time 0 --report "$out/$mode/report.json" "$@")
[[ "$mode" == with ]] && args+=(--known-failures "$known" --lint-known-failures)
cache="$(backend_writable_cache "$module")"
[[ -n "$cache" ]] && args+=(--worker-writable "$cache")
start=$SECONDS
"$gscheck" "${args[@]}" >"$out/$mode/run.txt" 2>&1
rc=$?
tail -3 "$out/$mode/run.txt"
echo "$name $mode: gscheck exit $rc in $((SECONDS - start)) s ($out/$mode/run.txt)"
if [[ "$mode" == with ]]; then
  ((rc == 0 || rc == 4)) || { grep -E '^(FAILED|DECLINED|NONDETERMINISTIC|MISTRUSTED|UNSAFE) ' "$out/$mode/run.txt" | head -20; exit 1; }
else
  ((rc == 1)) || { echo "$name without its known failures: expected gscheck exit 1"; exit 1; }
  [[ -f "$out/with/report.json" ]] || { echo "no $out/with/report.json: run 'with' first" >&2; exit 2; }
fi
# The reports: every entry explains a case; without the file, exactly the XFAIL cases fail.
python3 - "$known" "$out" "$mode" <<'PY'
import json, sys
known, out, mode = sys.argv[1:]
known_entries = json.load(open(known))["known"]
ids = [e["id"] for e in known_entries]
w = json.load(open(f"{out}/with/report.json"))
xfail = {c["name"] for c in w["cases"] if c["verdict"] == "XFAIL"}
# UNSAFE cases an entry describes fail with the file too (gscheck exit 4), but are the file's.
unsafe = {c["name"] for c in w["cases"] if c["verdict"] == "UNSAFE" and c.get("known_failure")}
if unsafe:
    print(f"  {len(unsafe)} UNSAFE cases, each described by an entry (never green): "
          f"{sorted(unsafe)[:5]}")
xfail |= unsafe
used = {}
for c in w["cases"]:
    kf = c.get("known_failure") or {}
    entries = kf.get("entry") or []
    # The report writes the explaining entries as one ", "-separated string.
    for e in entries.split(", ") if isinstance(entries, str) else entries:
        used[e] = used.get(e, 0) + 1
for i in ids:
    print(f"  {i}: explains {used.get(i, 0)} cases")
# A host-dependent entry (its departure shows on some CPUs only) may explain nothing here, but
# only when each case file that shows it where it holds ran and PASSED: this host agrees with
# the reference there, so it does not show the departure (docs/report_format.md).
def verdicts(path):
    return [c["verdict"] for c in w["cases"]
            if c.get("file") and (c["file"] == path or c["file"].endswith("/" + path))]
unused = []
for e in known_entries:
    if used.get(e["id"]):
        continue
    host = e.get("host_dependent")
    if host:
        seen = {p: verdicts(p) for p in host["shown_by"]}
        if all(v == ["PASSED"] for v in seen.values()):
            print(f"  {e['id']}: host-dependent, not shown on this host "
                  f"({', '.join(seen)} PASSED): {host['reason']}")
            continue
        print(f"  {e['id']}: host-dependent, but its case files ran as {seen}")
    unused.append(e["id"])
if unused:
    sys.exit(f"known-failures entries that explained nothing: {unused}")
if mode == "without":
    r = json.load(open(f"{out}/without/report.json"))
    bad = {c["name"] for c in r["cases"] if c["verdict"] not in ("PASSED", "UNIMPLEMENTED", "SKIPPED")}
    if bad != xfail:
        sys.exit(f"failing without the file but not XFAIL with it: {sorted(bad - xfail)[:10]}; "
                 f"XFAIL with it but passing without: {sorted(xfail - bad)[:10]}")
    print(f"  without the file: the {len(bad)} XFAIL cases fail, nothing else")
PY
