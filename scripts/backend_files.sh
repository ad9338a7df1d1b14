# Sourced (not run) by the scripts that grade the shipped Python-hosted backends
# (runtime_backend_check.sh, tests/known_failures/injected_module_check.sh, conformance.sh,
# bench/python/host_bench.sh): where a backend's known failures and venv script are. A variant
# (plugins/jax/jax_lax_backend.py, plugins/tf_xla/tf_xla_kernel_backend.py) uses its own file
# when it has one, else that of the longest prefix of its name cut at a '_' that has one
# (tf_xla_kernel: tf_xla's known failures, scripts/tf_venv.sh).

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

# runtime_backend ROOT NAME: for a shipped Python-hosted backend (NAME, or the path of a
# NAME_backend.py) sets module, name, known and venv, making the venv. Exits the calling script
# with 2 when there is no such backend, or with the venv script's status (77: PyPI unreachable).
runtime_backend() {
  local root="$1" venv_script venv_out rc
  name="$2" module=""
  if [[ "$name" == *_backend.py ]]; then
    module="$name" name="$(basename "$name" _backend.py)"
    [[ -f "$module" ]] || module=""
  else
    module="$(compgen -G "$root/plugins/*/${name}_backend.py" | head -1)"
  fi
  known="$(backend_known_failures "${module:-$root/plugins/$name/${name}_backend.py}")"
  venv_script="$(backend_venv_script "$root" "$name")"
  if [[ -z "$module" || ! -f "$known" || ! -x "$venv_script" ]]; then
    echo "$0: no runtime backend '$name' (plugins/*/${name}_backend.py with its known failures and venv script)" >&2
    exit 2
  fi
  venv_out="$("$venv_script")"
  rc=$?
  if ((rc != 0)); then
    echo "$venv_out"
    exit "$rc"
  fi
  venv="$(tail -1 <<<"$venv_out")"
}

# backend_writable_cache MODULE: JAX's persistent compile cache (plugins/jax/jax_backend.py),
# made if missing, for `--worker-writable`: the workers and later runs share it, and every other
# folder is read-only to a worker. Prints nothing for the other backends.
backend_writable_cache() {
  [[ "$1" == */plugins/jax/* ]] || return 0
  local cache="${GSCHECK_JAX_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/gscheck/jax-compile-cache}"
  [[ -n "$cache" ]] && mkdir -p "$cache" && echo "$cache"
  return 0
}
