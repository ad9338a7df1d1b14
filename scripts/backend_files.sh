# Sourced (not run) by the scripts that grade the shipped Python-hosted backends
# (runtime_backend_check.sh, conformance.sh, bench/python/host_bench.sh): where a backend's
# known failures and venv script are. A variant (plugins/jax/jax_lax_backend.py,
# plugins/tf_xla/tf_xla_kernel_backend.py) uses its own file when it has one, else that of the
# longest prefix of its name cut at a '_' that has one (tf_xla_kernel: tf_xla's known failures,
# scripts/tf_venv.sh).

# backend_known_failures MODULE: prints the known-failures file, or nothing when there is none.
backend_known_failures() {
  local dir stem
  dir="$(dirname "$1")" stem="$(basename "$1" _backend.py)"
  while :; do
    [[ -f "$dir/${stem}_known_failures.json" ]] && { echo "$dir/${stem}_known_failures.json"; return; }
    [[ "$stem" == *_* ]] || return 0
    stem="${stem%_*}"
  done
}

# backend_venv_script ROOT NAME: prints scripts/<stem>_venv.sh, or nothing when there is none.
backend_venv_script() {
  local stem="$2"
  while :; do
    [[ -x "$1/scripts/${stem}_venv.sh" ]] && { echo "$1/scripts/${stem}_venv.sh"; return; }
    [[ "$stem" == *_* ]] || return 0
    stem="${stem%_*}"
  done
}
