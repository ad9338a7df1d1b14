#!/usr/bin/env python3
"""Packs an installed gscheck (`cmake --install BUILD --prefix PREFIX`) into a Python wheel, so
`pip install gscheck-*.whl` puts `gscheck` on PATH in any venv (docs/vendor.md, "Install
gscheck"). The wheel holds PREFIX's libexec/gscheck, share/gscheck and include/gscheck under the
`gscheck` package, in the same relative layout, so the binary finds its worker, the Python host,
the corpus and the bench problems as an install does. The binaries link Debian's shared
libraries (RE2, OpenSSL, libseccomp, Google Benchmark): the wheel is for the platform it was
built on (tag py3-none-<platform>), not a manylinux wheel.

Written with the standard library only (PEP 427: a zip with a dist-info folder and a RECORD of
sha256 digests), so making it needs no PyPI.

usage: make_wheel.py --prefix PREFIX --out DIR   (prints the wheel's path)
"""
import argparse
import base64
import hashlib
import os
import re
import sys
import sysconfig
import zipfile

INIT = '''"""gscheck's command line, installed by pip. `gscheck ...` runs the bundled binary."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def executable():
    """The gscheck binary of this package (its worker and Python host lie beside it)."""
    return os.path.join(_HERE, "libexec", "gscheck", "gscheck")


def include_dir():
    """The folder holding gscheck/plugin.h, to build a plugin against."""
    return os.path.join(_HERE, "include")


def data_dir():
    """share/gscheck: the corpus, bench problems, schemas and examples."""
    return os.path.join(_HERE, "share", "gscheck")


def main():
    exe = executable()
    os.execv(exe, [exe] + sys.argv[1:])
'''

MAIN = "from gscheck import main\n\nmain()\n"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def version_of(prefix):
    for root, _, files in os.walk(prefix):
        if "gscheckConfigVersion.cmake" in files:
            with open(os.path.join(root, "gscheckConfigVersion.cmake")) as f:
                m = re.search(r'set\(PACKAGE_VERSION "([0-9.]+)"\)', f.read())
            if m:
                return m.group(1)
    sys.exit(f"make_wheel: no gscheckConfigVersion.cmake under {prefix}: not a gscheck install")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", required=True, help="an installed gscheck")
    ap.add_argument("--out", required=True, help="folder for the wheel")
    args = ap.parse_args()
    prefix = os.path.abspath(args.prefix)
    if not os.access(os.path.join(prefix, "libexec", "gscheck", "gscheck"), os.X_OK):
        sys.exit(f"make_wheel: {prefix}/libexec/gscheck/gscheck is missing: not a gscheck install")
    version = version_of(prefix)
    tag = "py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform())
    dist = f"gscheck-{version}.dist-info"
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"gscheck-{version}-{tag}.whl")
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(name, data, mode=0o644):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(record_line(name, data))

        add("gscheck/__init__.py", INIT.encode())
        add("gscheck/__main__.py", MAIN.encode())
        for top in ("libexec/gscheck", "share/gscheck", "include/gscheck"):
            base = os.path.join(prefix, top)
            for root, dirs, files in os.walk(base):
                dirs.sort()
                for f in sorted(files):
                    full = os.path.join(root, f)
                    with open(full, "rb") as fh:
                        data = fh.read()
                    mode = 0o755 if os.access(full, os.X_OK) else 0o644
                    add("gscheck/" + os.path.relpath(full, prefix), data, mode)
        add(f"{dist}/METADATA", (
            "Metadata-Version: 2.1\n"
            "Name: gscheck\n"
            f"Version: {version}\n"
            "Summary: Conformance and fuzzing harness for TensorFlow's gather and scatter ops\n"
            "Requires-Python: >=3.8\n").encode())
        add(f"{dist}/WHEEL", ("Wheel-Version: 1.0\n"
                              "Generator: gscheck scripts/make_wheel.py\n"
                              "Root-Is-Purelib: false\n"
                              f"Tag: {tag}\n").encode())
        add(f"{dist}/entry_points.txt", b"[console_scripts]\ngscheck = gscheck:main\n")
        add(f"{dist}/top_level.txt", b"gscheck\n")
        records.append(f"{dist}/RECORD,,")
        z.writestr(f"{dist}/RECORD", "\n".join(records) + "\n")
    print(path)


if __name__ == "__main__":
    main()
