/* A C plugin that declines every call (GSC_UNIMPLEMENTED) under the contract of
 * bench/python/decline_backend.py: the two see the same calls and gscheck does the same work
 * for each, so the difference of their run times over the calls is the Python host's own cost
 * per call (the inputs viewed, call() entered and its exception turned into a code, the views
 * checked and released). bench/python/host_bench.sh times them. */
#include <stdio.h>

#include "gscheck/plugin.h"

static int32_t run(const gsc_call* call, gsc_result* result) {
  (void)call;
  snprintf(result->message, sizeof result->message, "declines every case");
  return GSC_UNIMPLEMENTED;
}

const gsc_plugin_v1* gscheck_plugin_v1(void) {
  static const gsc_plugin_v1 plugin = {
      .abi_version = GSCHECK_PLUGIN_ABI_VERSION,
      .name = "decline",
      .ops = (1u << (GSC_TENSOR_SCATTER_MAX + 1)) - 1, /* every op */
      /* Every dtype with a numpy view (not bfloat16 or string), as the Python module. */
      .dtypes = ((1ull << GSC_STRING) - 1) & ~(1ull << GSC_BFLOAT16),
      .index_dtypes = (1u << GSC_INT32) | (1u << GSC_INT64),
      .semantics = 1u << GSC_TF_CPU,
      .deterministic = 1,
      .run = run,
  };
  return &plugin;
}
