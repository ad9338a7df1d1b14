#!/usr/bin/env bash
# Cross-check the reference against real TensorFlow (CPU): export seeded random cases with the
# reference's outcome as `expect`, then run them, the golden corpus and corpus/tf through
# TensorFlow with tools/tf_crosscheck.py. See docs/tf_crosscheck.md.
#
# Usage: scripts/tf_crosscheck.sh [--gscheck BIN] [--count N] [--seed S] [--out DIR] [--jobs J]
#                                 [--no-corpus] [PATH...]
#   --gscheck BIN  the gscheck CLI (default: build/default/tools/gscheck)
#   --count N      random cases to export (default 20000; 0 exports none)
#   --seed S       sampling seed (default 1)
#   --out DIR      work folder for exported cases and report.json (default: build/tf_crosscheck)
#   --jobs J       TensorFlow worker processes (default: number of cores, at most 4)
#   --no-corpus    do not add corpus/golden and corpus/tf
#   PATH...        more case files or folders
# Environment:
#   GSCHECK_TF_VENV  the virtual environment (default: ${XDG_CACHE_HOME:-~/.cache}/gscheck/tf-venv);
#                    created and filled from tools/requirements-tf.txt when missing or stale, and
#                    reused otherwise, so only the first run pays for the TensorFlow download.
#   GSCHECK_PYTHON   the Python that creates the venv (default: python3)
# Exit status: 0 agreement, 1 disagreements, 2 setup error, 77 skipped (PyPI not reachable and no
# usable venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

gscheck="$root/build/default/tools/gscheck"
count=20000
seed=1
out="$root/build/tf_crosscheck"
jobs=$(nproc)
if ((jobs > 4)); then jobs=4; fi
corpus=1
extra=()
while (($#)); do
  case "$1" in
    --gscheck) gscheck="$2"; shift 2 ;;
    --count) count="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --no-corpus) corpus=0; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "tf_crosscheck.sh: unknown option $1" >&2; exit 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

t0=$(now)
rc=0
venv_out="$("$root/scripts/tf_venv.sh")" || rc=$?
if ((rc != 0)); then echo "$venv_out"; exit "$rc"; fi
echo "$venv_out" | sed '$d'
venv="$(echo "$venv_out" | tail -n1)"
t1=$(now)
echo "tf_crosscheck: venv ready in $(secs "$t0" "$t1") s"

# The checker's own unit tests first (a second; a broken decoder would fake agreement).
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$root/tests/tools/tf_crosscheck_test.py" -q

paths=()
if ((count > 0)); then
  if [[ ! -x "$gscheck" ]]; then
    echo "tf_crosscheck: no gscheck CLI at $gscheck (build it, or pass --gscheck)" >&2
    exit 2
  fi
  rm -rf "$out/sweep"
  mkdir -p "$out"
  "$gscheck" export --count "$count" --seed "$seed" --include-invalid --out "$out/sweep"
  paths+=("$out/sweep")
fi
t2=$(now)
if ((count > 0)); then echo "tf_crosscheck: exported $count cases (seed $seed) in $(secs "$t1" "$t2") s"; fi

if ((corpus)); then
  for d in "$root/corpus/golden" "$root/corpus/tf"; do
    if [[ -d "$d" ]]; then paths+=("$d"); fi
  done
fi
paths+=("${extra[@]}")
if ((${#paths[@]} == 0)); then
  echo "tf_crosscheck: nothing to check" >&2
  exit 2
fi

mkdir -p "$out"
rc=0
"$venv/bin/python" "$root/tools/tf_crosscheck.py" --jobs "$jobs" --report "$out/report.json" \
  --known "$root/tools/tf_known_bugs.json" "${paths[@]}" || rc=$?
t3=$(now)
echo "tf_crosscheck: TensorFlow run $(secs "$t2" "$t3") s; total $(secs "$t0" "$t3") s"
exit "$rc"
