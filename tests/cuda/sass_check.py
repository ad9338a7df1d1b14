#!/usr/bin/env python3
"""Checks the sm_90 machine code of the cuda kernels without a GPU (ctest cuda_sass_check).

Reads the objects of libgscheck_cuda.a with cuobjdump (NVIDIA's, from PyPI via scripts/setup.sh
when the toolkit lacks it) and fails when
  - any kernel_entry<...> kernel uses a stack frame or local memory (a spill, or a functor
    copied to local memory);
  - any of them uses a generic LD / ST / ATOM (a pointer that lost its global address space,
    e.g. a functor read through local memory, or an address rebuilt from an integer);
  - the gather rows kernel has no 16-byte global load / store (LDG.E.128 / STG.E.128);
  - float32 scatter add (the V=4 reduce kernel) has no F32x4 vector reduction, or the packed
    half / bfloat16 adds no F16x2 / BF16x2 global reduction.
--table prints the register / stack table of every kernel (docs/cuda.md).
  sass_check.py LIBGSCHECK_CUDA_A [--table]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

def find_tool(name):
    """$GSCHECK_CUOBJDUMP, PATH, the toolkit, or the PyPI copy scripts/setup.sh installs."""
    import glob
    env = os.environ.get("GSCHECK_" + name.upper())
    if env:
        return env
    cands = [shutil.which(name), "/usr/local/cuda/bin/" + name]
    cands += sorted(glob.glob("/opt/gscheck-cuda-tools/lib/python3*/site-packages/nvidia/*/bin/"
                              + name))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                             check=True).stdout.splitlines()
        return dict(zip(names, out))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def short(name):
    """kernel_entry<gscheck::cuda::GatherRowsKernel<...>> -> GatherRowsKernel<...> (namespaces
    and the entry wrapper dropped)."""
    s = name.replace("gscheck::cuda::", "").replace("void kernel_entry<", "")
    s = re.sub(r"\(.*\)$", "", s).strip()
    s = s[:-1].strip() if s.endswith(">") else s  # the kernel_entry<...> bracket
    s = s.replace("unsigned int", "u32").replace("unsigned long", "u64")
    return s.replace(" ", "")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    lib = sys.argv[1]
    table = "--table" in sys.argv
    cuobjdump = find_tool("cuobjdump")
    if not cuobjdump:
        print("sass_check: cuobjdump not found (scripts/setup.sh installs it from PyPI)")
        return 1
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run(["ar", "x", os.path.abspath(lib)], cwd=tmp, check=True)
        objs = sorted(f for f in os.listdir(tmp) if f.endswith(".o"))
        usage, sass = {}, {}
        for o in objs:
            path = os.path.join(tmp, o)
            ru = subprocess.run([cuobjdump, "--dump-resource-usage", path], capture_output=True,
                                text=True).stdout
            fn = None
            for line in ru.splitlines():
                m = re.match(r"\s*Function (\S+):", line)
                if m:
                    fn = m.group(1)
                    continue
                m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", line)
                if m and fn:
                    usage[fn] = (o, *map(int, m.groups()))
            sd = subprocess.run([cuobjdump, "--dump-sass", path], capture_output=True,
                                text=True).stdout
            fn = None
            for line in sd.splitlines():
                m = re.match(r"\s*Function : (\S+)", line)
                if m:
                    fn = m.group(1)
                    sass[fn] = []
                elif fn:
                    sass[fn].append(line)
    finally:
        shutil.rmtree(tmp)
    ours = sorted(n for n in usage if "kernel_entry" in n)
    if not ours:
        print("sass_check: no kernel_entry kernels in %s (not an sm_90 build?)" % lib)
        return 1
    names = demangle(ours)
    problems = []
    for n in ours:
        o, reg, stack, shared, local = usage[n]
        if stack or local:
            problems.append("%s: STACK %d LOCAL %d (local memory: a spill or a copied functor)"
                            % (short(names[n]), stack, local))
        generic = sorted({m.group(0) for l in sass.get(n, [])
                          for m in [re.search(r"\b(LD|ST|ATOM)\.E\S*", l)] if m})
        if generic:
            problems.append("%s: generic memory instructions %s" % (short(names[n]),
                                                                   ", ".join(generic[:4])))

    def kernels(pattern):
        return [n for n in ours if re.search(pattern, names[n])]

    def has(n, regex):
        return any(re.search(regex, l) for l in sass.get(n, []))

    rows_k = kernels(r"GatherRowsKernel")
    if not rows_k:
        problems.append("no GatherRowsKernel instantiation found")
    for n in rows_k:
        if not has(n, r"LDG\.E\.128"):
            problems.append("%s: no LDG.E.128 (16-byte global load)" % short(names[n]))
        if not has(n, r"STG\.E\.128"):
            problems.append("%s: no STG.E.128 (16-byte global store)" % short(names[n]))
    checks = [(r"ScatterReduceKernel<float, u\w* int, 4>|ScatterReduceKernel<float, unsigned int, 4>",
               r"RED\S*F32x4", "float32 add: F32x4 vector reduction"),
              (r"ScatterReduceKernel<float, unsigned int, 2>", r"RED\S*F32x2",
               "float32 add: F32x2 vector reduction"),
              (r"ScatterReduceKernel<half_t, unsigned int, 2>", r"RED\S*F16x2",
               "half add: F16x2 global reduction"),
              (r"ScatterReduceKernel<bf16_t, unsigned int, 2>", r"RED\S*BF16x2",
               "bfloat16 add: BF16x2 global reduction")]
    for kpat, ipat, what in checks:
        ks = [n for n in ours if re.search(kpat, names[n].replace("gscheck::cuda::", ""))]
        if not ks:
            problems.append("no kernel matching %s (for %s)" % (kpat, what))
        for n in ks:
            if not has(n, ipat):
                problems.append("%s: %s missing (no %s in its SASS)" % (short(names[n]), what,
                                                                       ipat))
    if table:
        print("| kernel (sm_90) | object | REG | STACK | LOCAL |")
        print("|---|---|---|---|---|")
        for n in ours:
            o, reg, stack, shared, local = usage[n]
            print("| `%s` | %s | %d | %d | %d |" % (short(names[n]), o.replace(".cu.o", ""), reg,
                                                   stack, local))
    print("sass_check: %d kernels, %d gather-rows, %d problems" % (len(ours), len(rows_k),
                                                                  len(problems)))
    for p in problems:
        print("  FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
