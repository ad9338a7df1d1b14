/* A test plugin with two "releases", for `gscheck report diff`: tf.gather of a float32 vector
 * (axis 0, tf-cpu) by int32 or int64 indices. GSCHECK_RELEASE=1 (default) is correct; 2 plants
 * two regressions: an out-of-range index reads the last element instead of failing, and int64
 * indices are no longer claimed. Used by tests/tools/report_test.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gscheck/plugin.h"

static int release(void) {
  const char* r = getenv("GSCHECK_RELEASE");
  return r && strcmp(r, "2") == 0 ? 2 : 1;
}

static int32_t fail(gsc_result* result, int32_t code, const char* message) {
  snprintf(result->message, sizeof result->message, "%s", message);
  return code;
}

static int32_t run(const gsc_call* call, gsc_result* result) {
  const gsc_tensor* params = call->params;
  const gsc_tensor* indices = call->indices;
  if (call->op != GSC_GATHER || !params || !indices || params->rank != 1 || call->batch_dims != 0 ||
      params->dtype != GSC_FLOAT32 ||
      (indices->dtype != GSC_INT32 && indices->dtype != GSC_INT64) ||
      (call->bad_indices_policy[0] && strcmp(call->bad_indices_policy, "DEFAULT") != 0))
    return fail(result, GSC_UNIMPLEMENTED, "only float32 vectors, default policy");
  if (call->axis) {
    if (call->axis->rank != 0) return fail(result, GSC_UNIMPLEMENTED, "only a scalar axis");
    const int64_t axis = call->axis->dtype == GSC_INT64 ? *(const int64_t*)call->axis->data
                                                        : *(const int32_t*)call->axis->data;
    if (axis != 0 && axis != -1) return fail(result, GSC_UNIMPLEMENTED, "only axis 0");
  }
  int64_t n = 1;
  for (int32_t d = 0; d < indices->rank; ++d) n *= indices->dims[d];
  const int64_t rows = params->dims[0];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ix = indices->dtype == GSC_INT64 ? ((const int64_t*)indices->data)[i]
                                                   : ((const int32_t*)indices->data)[i];
    if ((ix < 0 || ix >= rows) && (release() == 1 || rows == 0))
      return fail(result, GSC_BAD_INDEX, "index out of range");
  }
  float* out = call->alloc_output(call->alloc_ctx, GSC_FLOAT32, indices->rank, indices->dims);
  if (!out && n > 0) return fail(result, GSC_RESOURCE_EXHAUSTED, "output refused by gscheck");
  const float* p = (const float*)params->data;
  for (int64_t i = 0; i < n; ++i) {
    int64_t ix = indices->dtype == GSC_INT64 ? ((const int64_t*)indices->data)[i]
                                             : ((const int32_t*)indices->data)[i];
    if (ix < 0 || ix >= rows) ix = rows - 1; /* release 2's planted bug */
    out[i] = p[ix];
  }
  return GSC_OK;
}

const gsc_plugin_v1* gscheck_plugin_v1(void) {
  static gsc_plugin_v1 plugin = {
      .abi_version = GSCHECK_PLUGIN_ABI_VERSION,
      .name = "release gather (test)",
      .ops = 1u << GSC_GATHER,
      .dtypes = 1ull << GSC_FLOAT32,
      .index_dtypes = (1u << GSC_INT32) | (1u << GSC_INT64),
      .semantics = 1u << GSC_TF_CPU,
      .deterministic = 1,
      .tf_messages = 0,
      .half_in_float = 0,
      .run = run,
  };
  if (release() == 2) plugin.index_dtypes = 1u << GSC_INT32;
  return &plugin;
}
