#!/usr/bin/env bash
# `gscheck report diff` and `report merge` on big reports: wall time and peak memory (RSS), the
# figures docs/report_format.md quotes. Two N-case reports are made from the cases of one real
# run (names made unique, K planted PASSED -> FAILED changes, K removed, K added), then each
# command runs RUNS times under /usr/bin/time.
# Usage: report_bench.sh BUILD_DIR [N=1000000] [K=1000] [RUNS=1]
set -euo pipefail
if (($# < 1)); then
  echo "usage: $0 BUILD_DIR [N=1000000] [K=1000] [RUNS=1]" >&2
  exit 2
fi
g="$(cd "$1" && pwd)/tools/gscheck" n="${2:-1000000}" k="${3:-1000}" runs="${4:-1}"
[[ -x "$g" ]] || { echo "$0: no $g (build first)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/none"
"$g" run --backend reference --sweep 200 --seed 1 --quiet --report "$tmp/seed.json" "$tmp/none" \
  >/dev/null
python3 - "$tmp/seed.json" "$tmp" "$n" "$k" <<'PY'
import json, sys
seed_path, out, n, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
seed = json.load(open(seed_path))
cases = [c for c in seed["cases"] if c["verdict"] == "PASSED"]
head = {key: value for key, value in seed.items() if key not in ("cases", "totals", "matrix")}
def write(path, changed):
    # The report's head, then the cases one per line (the reader streams them, order kept).
    with open(path, "w") as f:
        f.write(json.dumps(head)[:-1] + ', "cases": [\n')
        first = True
        for i in range(n + k):
            if changed and i < k:
                continue  # removed in the new report
            if not changed and i >= n:
                continue  # added in the new report
            c = dict(cases[i % len(cases)])
            c["name"] = "bench/%07d" % i
            if changed and k <= i < 2 * k:
                c["verdict"], c["reason"] = "FAILED", "planted"
            f.write(("" if first else ",\n") + json.dumps(c))
            first = False
        f.write("\n]}\n")
write(out + "/old.json", False)
write(out + "/new.json", True)
PY
echo "report_bench: $(date -u +%F) $(nproc) cores, N=$n, K=$k; old $(du -m "$tmp/old.json" | cut -f1) MB"
measure() {  # LABEL COMMAND...: wall seconds and peak RSS of each run
  local label=$1 i
  shift
  for i in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >"$tmp/out" 2>&1 || true
    read -r wall kb < <(tail -n1 "$tmp/time")  # after "Command exited with ..." if any
    echo "$label: ${wall} s, peak RSS $((kb / 1024)) MB, $(grep -m1 -E 'unchanged|error' "$tmp/out")"
  done
}
measure "report diff" "$g" report diff "$tmp/old.json" "$tmp/new.json" --max-cases 3
measure "report merge" "$g" report merge --force -o "$tmp/merged.json" "$tmp/old.json"
