#!/bin/sh
# The reference's row loops keep up with the per-row memcpy loop only through their software
# prefetch (docs/performance.md), and a compiler can drop it without a warning: GCC 12 at -O2
# deleted calls to a prefetch-only callback. Each row-loop object of the library must therefore
# contain prefetch instructions.
# Usage: prefetch_check.sh OBJDUMP LIBRARY (x86-64 mnemonics)
objdump=$1
lib=$2
"$objdump" -d --no-show-raw-insn "$lib" | awk '
  / file format / { member = $1; sub(/:$/, "", member) }
  /^[[:space:]]*[0-9a-f]+:[[:space:]]+prefetch/ { n[member]++ }
  END {
    split("gather.cc.o gather_nd.cc.o scatter_nd.cc.o", want, " ")
    bad = 0
    for (i = 1; i <= 3; ++i) {
      printf "%s: %d prefetch instructions\n", want[i], n[want[i]]
      if (n[want[i]] == 0) bad = 1
    }
    if (bad) print "FAIL: a row loop lost its software prefetch"
    exit bad
  }'
