#!/usr/bin/env bash
# The conformance table: the same seeded sweep plus the corpus (corpus/golden, corpus/regressions,
# corpus/tf) through `gscheck run` on every implementation installed here, each with its
# known-failures file, then tools/conformance.py merges the reports into docs/conformance.md (the
# text between its markers) and a self-contained HTML page. See docs/conformance.md.
#
# Implementations (names for --only, comma-separated):
#   reference      the reference; its sweep draws each semantics it claims (tf-cpu, tf-gpu, the
#                  profiles), each a column of the table
#   cuda-emu       the CUDA kernels on the CPU grid executor (when this build has it)
#   tf             TensorFlow's CPU kernels (plugins/tensorflow, venv scripts/tf_venv.sh)
#   torch          PyTorch (plugins/pytorch, venv scripts/torch_venv.sh)
#   <name>         each Python-hosted backend plugins/*/<name>_backend.py, in the venv that
#                  scripts/<name>_venv.sh makes, with plugins/*/<name>_known_failures.json (a
#                  variant without them: those of a prefix of <name>, scripts/backend_files.sh)
# An implementation whose plugin, venv or build is missing is skipped with the reason printed.
#
# Usage: scripts/conformance.sh [--sweep N] [--seed S] [--out DIR] [--only NAMES] [--md FILE]
#                               [--html FILE] [--gscheck BIN] [--build-dir DIR] [--no-build]
#                               [--max-bytes B] [--cases-per-cell K] [--reuse]
#   --sweep N      sweep positions per implementation (default 2000)
#   --seed S       the sweep's seed, the same for every implementation (default 20261202)
#   --out DIR      reports, logs and failed cases, DIR/<name>/ (default build/conformance)
#   --only NAMES   run only these implementations; the markdown then goes to DIR/conformance.md
#                  unless --md says otherwise
#   --md FILE      markdown (default docs/conformance.md)
#   --html FILE    HTML page (default DIR/conformance.html)
#   --gscheck BIN  the gscheck CLI (default build/default/tools/gscheck)
#   --build-dir DIR the CMake build holding the plugins (default: the CLI's build folder)
#   --no-build     skip an implementation whose plugin is not built rather than build it
#   --max-bytes B  gscheck's --max-bytes for every run (default 1073741824: PyTorch and others
#                  build 4 GiB outputs no TensorFlow limit stops under gscheck's 4 GiB default)
#   --cases-per-cell K  failing cases per cell and kind kept on the page (default 10)
#   --reuse        keep an implementation's report from an earlier run into the same DIR when
#                  that run had the same gscheck, corpus, backend file, arguments and known
#                  failures (its DIR/<name>/run.args says so): add one implementation to a
#                  table without running the others again
# Exit status: 0 table written, 1 an implementation could not be run to a report, 2 bad usage.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
gscheck="$root/build/default/tools/gscheck"
build=""
sweep=2000
seed=20261202
out="$root/build/conformance"
only=""
md=""
html=""
build_plugins=1
max_bytes=1073741824
per_cell=10
reuse=0
reused=0
# Seconds a plugin call may take (gscheck's default: 10 s plus 1 s per 64 MiB): a runtime that
# allocates a 8 GiB output before refusing it takes longer than that on a loaded machine.
call_timeout=60
args=("$@")
while (($#)); do
  case "$1" in
    --sweep) sweep="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --md) md="$2"; shift 2 ;;
    --html) html="$2"; shift 2 ;;
    --gscheck) gscheck="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --no-build) build_plugins=0; shift ;;
    --max-bytes) max_bytes="$2"; shift 2 ;;
    --cases-per-cell) per_cell="$2"; shift 2 ;;
    --reuse) reuse=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "conformance.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ ! -x "$gscheck" ]]; then
  echo "conformance.sh: no gscheck CLI at $gscheck (build it, or pass --gscheck)" >&2
  exit 2
fi
gscheck="$(cd "$(dirname "$gscheck")" && pwd)/$(basename "$gscheck")"
[[ -n "$build" ]] || build="$(cd "$(dirname "$gscheck")/.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [[ -z "$md" ]]; then
  if [[ -n "$only" ]]; then md="$out/conformance.md"; else md="$root/docs/conformance.md"; fi
fi
[[ -n "$html" ]] || html="$out/conformance.html"
corpus=("$root/corpus/golden" "$root/corpus/regressions" "$root/corpus/tf")
# The corpus every run reads, as one hash (computed once): part of each report's --reuse stamp.
corpus_hash="$(find "${corpus[@]}" -type f -name '*.json' -print0 | sort -z | xargs -0 sha256sum |
  sha256sum | cut -c1-16)"

wanted() {  # wanted NAME: is NAME selected by --only?
  [[ -z "$only" ]] && return 0
  local n picks
  IFS=, read -ra picks <<<"$only"
  for n in "${picks[@]}"; do [[ "$1" == "$n" ]] && return 0; done
  return 1
}

reports=()
skipped=()
failed=()
summary=()
skip() { skipped+=("$1: $2"); echo "conformance: SKIPPED $1: $2"; }

# run_impl NAME BACKEND KNOWN_FAILURES [gscheck run options...]: one report, DIR/NAME/report.json.
run_impl() {
  local name="$1" backend="$2" known="$3"
  shift 3
  local dir="$out/$name" rc=0
  local kf=()
  [[ -n "$known" ]] && kf=(--known-failures "$known")
  # What makes a report reusable: the CLI, the run's arguments and the known-failures file.
  local stamp
  stamp="$(sha256sum "$gscheck" | cut -c1-16) $corpus_hash $backend $seed $sweep $max_bytes $call_timeout $* ${known:+$(sha256sum "$known" | cut -c1-16)}"
  [[ -f "${backend#*:}" ]] && stamp+=" $(sha256sum "${backend#*:}" | cut -c1-16)"  # the module or .so
  if ((reuse)) && [[ -f "$dir/report.json" && -f "$dir/run.args" && "$(cat "$dir/run.args")" == "$stamp" ]]; then
    reports+=("$name=$dir/report.json")
    reused=$((reused + 1))
    summary+=("$(printf '%-22s %7s    %-8s %s' "$name" "-" "reused" "$(grep -E '^[0-9]+ cases:' "$dir/run.txt" | tail -1)")")
    echo "conformance: $name: reusing $dir/report.json (--reuse: same CLI, arguments and known failures)"
    return
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "conformance: $name: gscheck run --backend ${backend/"$root"\//} --seed $seed" \
    "--sweep $sweep --timeout $call_timeout${known:+ --known-failures ${known#"$root"/}}${*:+ $*}"
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$dir" && TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}" "$gscheck" run \
    --backend "$backend" --seed "$seed" --sweep "$sweep" --max-bytes "$max_bytes" --quiet \
    --timeout "$call_timeout" \
    "${kf[@]}" "$@" --report "$dir/report.json" "${corpus[@]}" >"$dir/run.txt" 2>&1) || rc=$?
  t1=$(date +%s.%N)
  local took
  took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  local line
  line="$(grep -E '^[0-9]+ cases:' "$dir/run.txt" | tail -1)"
  summary+=("$(printf '%-22s %7s s  exit %-3s %s' "$name" "$took" "$rc" "$line")")
  echo "conformance: $name: ${line:-no summary} (exit $rc, $took s; log $dir/run.txt)"
  # 0: all agree or are explained; 1: some case failed (that is what the table shows); 4: the
  # only failures are UNSAFE cases entries describe (the table shows them as unsafe). A report
  # of an interrupted run still holds what ran and says so.
  if [[ -f "$dir/report.json" ]] && ((rc == 0 || rc == 1 || rc == 4 || rc >= 128)); then
    reports+=("$name=$dir/report.json")
    ((rc >= 128)) || echo "$stamp" >"$dir/run.args"
  else
    failed+=("$name: gscheck exited $rc without a report: $(head -n1 "$dir/run.txt")")
    echo "conformance: FAILED $name: gscheck exited $rc: $(head -n1 "$dir/run.txt")" >&2
  fi
}

# venv_for SCRIPT: the venv's path on stdout, or the skip reason on stderr and non-zero.
venv_for() {
  local script="$1" log rc=0
  log="$("$script" 2>&1)" || rc=$?
  if ((rc != 0)); then
    echo "${script#"$root"/} failed (exit $rc): $(tail -n1 <<<"$log")" >&2
    return 1
  fi
  tail -n1 <<<"$log"
}

# pin_of NAME VENV REQUIREMENTS: records what NAME runs, the first pin of REQUIREMENTS as the venv
# has it installed (the product: onnxruntime, openvino, ai-edge-litert, tensorflow-cpu, torch).
versions=()
pin_of() {
  local dist have
  dist="$(grep -m1 -oE '^[A-Za-z0-9_.-]+' "$3" 2>/dev/null)" || return 0
  have="$("$2/bin/python" -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' \
    "$dist" 2>/dev/null)" || have="not installed"
  versions+=(--version "$1=$dist $have")
}

# plugin_lib TARGET: the plugin's path, built when missing (unless --no-build).
plugin_lib() {
  local lib="$build/plugins/lib$1.so"
  if [[ ! -f "$lib" && $build_plugins == 1 ]]; then
    echo "conformance: building $1 (CMake ran before its venv existed)" >&2
    cmake "$build" >/dev/null 2>&1 && cmake --build "$build" --target "$1" >/dev/null 2>&1
  fi
  [[ -f "$lib" ]] && echo "$lib"
}

t_start=$(date +%s.%N)
listing="$("$gscheck" list-backends 2>&1)"
# The semantics a backend of this build claims: the "semantics:" line under its name.
claims() {
  awk -v b="$1" '$0 == b { on = 1; next } /^[^ ]/ { on = 0 }
                 on && $1 == "semantics:" { $1 = ""; gsub(/,/, ""); print }' <<<"$listing"
}

# One run of the reference: its sweep draws every semantics it claims (tf-cpu, tf-gpu and the
# profiles), and the table gives each its column.
wanted reference && run_impl reference reference ""

if wanted cuda-emu; then
  if grep -qx "cuda-emu" <<<"$listing" && [[ -n "$(claims cuda-emu)" ]]; then
    run_impl cuda-emu cuda-emu ""
  else
    skip cuda-emu "this gscheck has no cuda-emu backend"
  fi
fi

# The C++ framework plugins: NAME TARGET VENV_SCRIPT KNOWN_FAILURES.
for spec in "tf gscheck_tf_plugin tf_venv.sh plugins/tensorflow/tf_2_21_known_failures.json" \
            "torch gscheck_torch_plugin torch_venv.sh plugins/pytorch/torch_known_failures.json"; do
  read -r name target venv_script known <<<"$spec"
  wanted "$name" || continue
  if [[ $build_plugins == 0 && ! -f "$build/plugins/lib$target.so" ]]; then
    skip "$name" "no $build/plugins/lib$target.so (--no-build)"
    continue
  fi
  if ! venv="$(venv_for "$root/scripts/$venv_script" 2>/tmp/conformance.$$.why)"; then
    skip "$name" "$(cat /tmp/conformance.$$.why)"
    rm -f /tmp/conformance.$$.why
    continue
  fi
  rm -f /tmp/conformance.$$.why
  if ! lib="$(plugin_lib "$target")"; then
    skip "$name" "no $build/plugins/lib$target.so after building it"
    continue
  fi
  pin_of "$name" "$venv" "$root/tools/requirements-${venv_script%_venv.sh}.txt"
  run_impl "$name" "plugin:$lib" "$root/$known"
done

# Python-hosted backends: plugins/*/<name>_backend.py.
source "$root/scripts/backend_files.sh"
shopt -s nullglob
for module in "$root"/plugins/*/*_backend.py; do
  name="$(basename "$module" _backend.py)"
  wanted "$name" || continue
  script="$(backend_venv_script "$root" "$name")"
  if [[ -z "$script" ]]; then
    skip "$name" "no scripts/${name}_venv.sh (nor one of a prefix of it) to make its venv"
    continue
  fi
  if ! venv="$(venv_for "$script" 2>/tmp/conformance.$$.why)"; then
    skip "$name" "$(cat /tmp/conformance.$$.why)"
    rm -f /tmp/conformance.$$.why
    continue
  fi
  rm -f /tmp/conformance.$$.why
  known="$(backend_known_failures "$module")"
  venv_name="$(basename "$script" _venv.sh)"
  pin_of "$name" "$venv" "$root/tools/requirements-$venv_name.txt"
  run_impl "$name" "python:$module" "$known" --python-venv "$venv"
done
t_end=$(date +%s.%N)
took=$(awk -v a="$t_start" -v b="$t_end" 'BEGIN { printf "%.0f", b - a }')

echo
echo "conformance: runs (name, wall time, exit, totals):"
printf '  %s\n' "${summary[@]}"
((${#skipped[@]})) && printf '  skipped %s\n' "${skipped[@]}"
((${#failed[@]})) && printf '  no report: %s\n' "${failed[@]}"
echo "conformance: all runs took $took s"
if ((${#reports[@]} == 0)); then
  echo "conformance.sh: no implementation produced a report" >&2
  exit 1
fi
note="$(date -u +%Y-%m-%d) on $(nproc) cores: the runs took $took s"
((reused)) && note+=" ($reused reports reused from earlier runs: each implementation's own time is in its row)"
((${#skipped[@]})) && note+="; skipped: $(printf '%s; ' "${skipped[@]}")"
python3 "$root/tools/conformance.py" --md "$md" --html "$html" --cases-per-cell "$per_cell" \
  --root "$root" "${versions[@]}" \
  --note "$note" --command "scripts/conformance.sh${args[*]:+ ${args[*]}}" "${reports[@]}" || exit 1
((${#failed[@]} == 0))
