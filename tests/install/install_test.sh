#!/usr/bin/env bash
# gscheck installed like any tool (cmake/gscheck_install.cmake, docs/vendor.md "Install gscheck"):
#   1. `cmake --install` into a temporary prefix: the layout, and the installed gscheck run from
#      elsewhere grades with its installed corpus;
#   2. a vendor's own project (tests/install/vendor_project) finds it with find_package(gscheck),
#      builds a plugin against gscheck::plugin and registers gscheck_add_test ctests, which pass;
#      the same project with a planted bug fails them, and the failure is saved shrunk;
#   3. CPack makes a .tar.gz (unpacked elsewhere, it runs) and a .deb (its files and Depends);
#   4. scripts/make_wheel.py makes a wheel; installed into a fresh venv, its `gscheck` grades the
#      vendor's plugin.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
source=$(realpath "$2")
tmp=$(mktemp -d /tmp/gscheck_install_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() {
  echo "install_test: FAIL: $*" >&2
  exit 1
}
step() { echo "install_test: $*"; }

step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || fail "cmake --install: $(tail -5 "$tmp/install.log")"
for f in bin/gscheck libexec/gscheck/gscheck libexec/gscheck/gscheck-worker \
  include/gscheck/plugin.h lib/cmake/gscheck/gscheckConfig.cmake \
  lib/cmake/gscheck/gscheckConfigVersion.cmake share/gscheck/schemas/case.schema.json \
  share/gscheck/schemas/report.schema.json share/gscheck/corpus/golden \
  share/gscheck/bench/problems/default.json share/gscheck/examples/gather_nd_plugin.c \
  share/doc/gscheck/vendor.md; do
  [[ -e $prefix/$f ]] || fail "$f is not installed"
done
[[ -L $prefix/bin/gscheck ]] || fail "bin/gscheck is not a symlink into libexec/gscheck"
if [[ -e $build/tools/libgscheck_python_plugin.so ]]; then
  [[ -e $prefix/libexec/gscheck/libgscheck_python_plugin.so ]] || fail "the Python host is not installed"
  [[ -e $prefix/libexec/gscheck/python/tf_checks.py ]] || fail "tf_checks.py is not installed"
fi

step "the installed gscheck, run from an empty folder, grades with its installed corpus"
mkdir "$tmp/elsewhere"
(cd "$tmp/elsewhere" && "$prefix/bin/gscheck" run --backend reference --sweep 20 --seed 1 \
  --quiet --report out/report.json >"$tmp/run.log" 2>&1) || fail "gscheck run: $(tail -5 "$tmp/run.log")"
python3 - "$tmp/elsewhere/out/report.json" "$prefix" <<'EOF' || fail "report of the installed run"
import json, sys
r = json.load(open(sys.argv[1]))
files = [c["file"] for c in r["cases"] if c["file"]]
assert len(files) > 100, len(files)
outside = [f for f in files if not f.startswith(sys.argv[2] + "/share/gscheck/corpus/")]
assert not outside, outside[:3]
assert all(c["verdict"] in ("PASSED", "UNIMPLEMENTED") for c in r["cases"])
EOF

step "a vendor project: find_package(gscheck), gscheck::plugin, gscheck_add_test"
vendor() { # build dir, extra cmake args...
  local dir=$1
  shift
  cmake -S "$source/tests/install/vendor_project" -B "$dir" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" "$@" >"$dir.configure.log" 2>&1 ||
    fail "configure: $(tail -20 "$dir.configure.log")"
  cmake --build "$dir" >"$dir.build.log" 2>&1 || fail "build: $(tail -20 "$dir.build.log")"
}
vendor "$tmp/vendor"
ctest --test-dir "$tmp/vendor" --output-on-failure >"$tmp/vendor.ctest.log" 2>&1 ||
  fail "the vendor's ctests fail on a correct plugin: $(tail -30 "$tmp/vendor.ctest.log")"
grep -q "100% tests passed, 0 tests failed out of 2" "$tmp/vendor.ctest.log" ||
  fail "expected 2 passing vendor tests: $(tail -10 "$tmp/vendor.ctest.log")"

vendor "$tmp/vendor_bug" -DVENDOR_PLANT_BUG=ON
if ctest --test-dir "$tmp/vendor_bug" -R vendor.cases >"$tmp/vendor_bug.ctest.log" 2>&1; then
  fail "vendor.cases passed on the plugin with a planted bug"
fi
python3 - "$tmp/vendor_bug/cases_report/report.json" <<'EOF' || fail "the planted bug's report"
import json, sys
(c,) = json.load(open(sys.argv[1]))["cases"]
assert c["verdict"] == "FAILED", c["verdict"]
assert c["shrunk"]["inputs"]["indices"]["shape"] == [21, 1], c["shrunk"]
EOF

step "cpack: .tar.gz and .deb"
(cd "$tmp" && cpack -G "TGZ;DEB" --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) ||
  fail "cpack: $(tail -20 "$tmp/cpack.log")"
tgz=$(ls "$tmp"/pkg/gscheck-*.tar.gz)
deb=$(ls "$tmp"/pkg/gscheck*.deb)
mkdir "$tmp/unpacked"
tar -xzf "$tgz" -C "$tmp/unpacked"
unpacked_gscheck=$(ls "$tmp"/unpacked/*/bin/gscheck)
(cd "$tmp/elsewhere" && "$unpacked_gscheck" list-backends >"$tmp/tgz.log" 2>&1) ||
  fail "the unpacked .tar.gz's gscheck: $(cat "$tmp/tgz.log")"
grep -q reference "$tmp/tgz.log" || fail "list-backends from the .tar.gz: $(cat "$tmp/tgz.log")"
dpkg-deb -c "$deb" >"$tmp/deb.list"
for f in ./usr/bin/gscheck ./usr/libexec/gscheck/gscheck-worker ./usr/include/gscheck/plugin.h \
  ./usr/lib/cmake/gscheck/gscheckConfig.cmake ./usr/share/gscheck/corpus/golden/; do
  grep -q " $f" "$tmp/deb.list" || fail "$f is not in the .deb"
done
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *libre2* && $depends == *libssl* ]] || fail "the .deb's Depends lacks RE2 or OpenSSL: $depends"

step "a wheel, installed into a fresh venv"
wheel=$(python3 "$source/scripts/make_wheel.py" --prefix "$prefix" --out "$tmp/wheel")
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-index --no-deps "$wheel" >"$tmp/pip.log" 2>&1 ||
  fail "pip install: $(cat "$tmp/pip.log")"
(cd "$tmp/elsewhere" && "$tmp/venv/bin/gscheck" run --backend "plugin:$tmp/vendor/libvendor_gather_nd.so" \
  --sweep 100 --seed 3 --quiet --known-failures \
  "$tmp/venv/lib/$(ls "$tmp/venv/lib")/site-packages/gscheck/share/gscheck/examples/gather_nd_plugin_declines.json" \
  >"$tmp/wheel_run.log" 2>&1) || fail "the wheel's gscheck: $(tail -5 "$tmp/wheel_run.log")"
grep -q "XFAIL" "$tmp/wheel_run.log" || fail "the wheel's run graded nothing: $(tail -5 "$tmp/wheel_run.log")"
if (cd "$tmp/elsewhere" && "$tmp/venv/bin/gscheck" run --backend "plugin:$tmp/vendor_bug/libvendor_gather_nd.so" \
  --sweep 0 --quiet "$source/tests/install/vendor_project/cases" >"$tmp/wheel_bug.log" 2>&1); then
  fail "the wheel's gscheck passed the planted bug"
fi
"$tmp/venv/bin/python" -c "import gscheck, os; assert os.path.isfile(os.path.join(gscheck.include_dir(), 'gscheck', 'plugin.h'))" ||
  fail "gscheck.include_dir()"
step "PASSED"
