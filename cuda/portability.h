// The portability layer, one header per concern: what lets one kernel source compile for the
// GPU (nvcc) and as plain C++ (g++) for the cuda-emu grid executor. Device code includes only
// these (and the op x dtype table, cuda/kernel_table.h).
#pragma once

#include "cuda/portability/atomics.h"        // atomic add/min/max/store, the bad-index record
#include "cuda/portability/element_types.h"  // storage types, TensorFlow's element semantics
#include "cuda/portability/fast_division.h"  // FastDivU32, DivBy
#include "cuda/portability/qualifiers.h"     // GSCHECK_HD, GSCHECK_UNROLL, ThreadIndex, bit_cast
#include "cuda/portability/vector_units.h"   // VecUnit<W>
