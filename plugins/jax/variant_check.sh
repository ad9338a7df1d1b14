#!/usr/bin/env bash
# scripts/runtime_backend_check.sh for the JAX backends beside plugins/jax/jax_backend.py (that
# script takes plugins/NAME/NAME_backend.py only): plugins/jax/MODULE_backend.py graded with and
# without plugins/jax/MODULE_known_failures.json in the JAX venv (scripts/jax_venv.sh).
#   with:    passes when gscheck exits 0 and every entry explained a case.
#   without: passes when gscheck exits 1 and the failing cases are exactly the `with` run's XFAIL.
# Usage: variant_check.sh MODULE with|without GSCHECK --out DIR [gscheck run options...]
#        (MODULE: jax_lax, jax_clip, ...)
# Exit status: 0 pass, 1 fail, 2 setup error, 77 skipped (no venv can be had).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if (($# < 5)) || [[ "$4" != --out ]] || [[ "$2" != with && "$2" != without ]]; then
  echo "usage: $0 MODULE with|without GSCHECK --out DIR [gscheck run options...]" >&2
  exit 2
fi
name="$1" mode="$2" gscheck="$3" out="$5"
shift 5
module="$here/${name}_backend.py" known="$here/${name}_known_failures.json"
[[ -f "$module" && -f "$known" ]] || { echo "$0: no $module or $known" >&2; exit 2; }
venv_out="$("$root/scripts/jax_venv.sh")"
rc=$?
((rc == 0)) || { echo "$venv_out"; exit "$rc"; }
venv="$(tail -1 <<<"$venv_out")"
mkdir -p "$out/$mode"
args=(run --backend "python:$module" --python-venv "$venv" --seed 1 --quiet
      --report "$out/$mode/report.json" "$@")
[[ "$mode" == with ]] && args+=(--known-failures "$known")
start=$SECONDS
"$gscheck" "${args[@]}" >"$out/$mode/run.txt" 2>&1
rc=$?
tail -3 "$out/$mode/run.txt"
echo "$name $mode: gscheck exit $rc in $((SECONDS - start)) s ($out/$mode/run.txt)"
if [[ "$mode" == with ]]; then
  ((rc == 0)) || { grep -E '^(FAILED|DECLINED|NONDETERMINISTIC|MISTRUSTED) ' "$out/$mode/run.txt" | head -20; exit 1; }
else
  ((rc == 1)) || { echo "$name without its known failures: expected gscheck exit 1"; exit 1; }
  [[ -f "$out/with/report.json" ]] || { echo "no $out/with/report.json: run 'with' first" >&2; exit 2; }
fi
python3 - "$known" "$out" "$mode" <<'PY'
import json, sys
known, out, mode = sys.argv[1:]
ids = [e["id"] for e in json.load(open(known))["known"]]
w = json.load(open(f"{out}/with/report.json"))
xfail = {c["name"] for c in w["cases"] if c["verdict"] == "XFAIL"}
used = {}
for c in w["cases"]:
    entries = (c.get("known_failure") or {}).get("entry") or []
    for e in [entries] if isinstance(entries, str) else entries:
        used[e] = used.get(e, 0) + 1
for i in ids:
    print(f"  {i}: explains {used.get(i, 0)} cases")
unused = [i for i in ids if not used.get(i)]
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
