/* A test plugin whose answers change between runs: tf.gather of a float32 vector by int32
 * indices (axis 0, tf-cpu), correct on odd-numbered calls and zeroed in element 0 (or its zero's
 * sign flipped) on even-numbered ones. The call count lives in the file named by GSCHECK_FLAKY_COUNTER, since
 * each call may run in a fresh worker process. GSCHECK_FLAKY_DETERMINISTIC=1 makes it declare
 * itself deterministic (the contract it then breaks). Used by tests/tools/cli_test.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gscheck/plugin.h"

static int32_t fail(gsc_result* result, int32_t code, const char* message) {
  snprintf(result->message, sizeof result->message, "%s", message);
  return code;
}

/* The number of earlier calls, counted in the file; -1 when it cannot be kept. */
static long next_call(void) {
  const char* path = getenv("GSCHECK_FLAKY_COUNTER");
  if (!path) return -1;
  long n = 0;
  FILE* f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%ld", &n) != 1) n = 0;
    fclose(f);
  }
  f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "%ld\n", n + 1);
  fclose(f);
  return n;
}

static int32_t run(const gsc_call* call, gsc_result* result) {
  const gsc_tensor* params = call->params;
  const gsc_tensor* indices = call->indices;
  if (call->op != GSC_GATHER || !params || !indices || params->rank != 1 || indices->rank != 1 ||
      call->batch_dims != 0 || params->dtype != GSC_FLOAT32 || indices->dtype != GSC_INT32)
    return fail(result, GSC_UNIMPLEMENTED, "only float32 vectors gathered by int32 vectors");
  if (call->axis) {
    const int64_t axis = call->axis->dtype == GSC_INT64 ? *(const int64_t*)call->axis->data
                                                        : *(const int32_t*)call->axis->data;
    if (axis != 0 && axis != -1) return fail(result, GSC_UNIMPLEMENTED, "only axis 0");
  }
  const int32_t* idx = (const int32_t*)indices->data;
  for (int64_t i = 0; i < indices->dims[0]; ++i)
    if (idx[i] < 0 || idx[i] >= params->dims[0])
      return fail(result, GSC_UNIMPLEMENTED, "bad indices are not handled");
  const long n = next_call();
  if (n < 0) return fail(result, GSC_INTERNAL, "GSCHECK_FLAKY_COUNTER is not a writable file");
  float* out = call->alloc_output(call->alloc_ctx, GSC_FLOAT32, 1, indices->dims);
  if (!out) return fail(result, GSC_RESOURCE_EXHAUSTED, "output refused by gscheck");
  const float* p = (const float*)params->data;
  for (int64_t i = 0; i < indices->dims[0]; ++i) out[i] = p[idx[i]];
  /* A zero where it read a value (a race reading a row not yet written), or the other zero: a
   * wrong answer that varies, never a value in no input (that would be UNSAFE, not flaky). */
  if (n % 2 == 1 && indices->dims[0] > 0) out[0] = out[0] == 0.0f ? -out[0] : 0.0f;
  return GSC_OK;
}

const gsc_plugin_v1* gscheck_plugin_v1(void) {
  static gsc_plugin_v1 plugin = {
      .abi_version = GSCHECK_PLUGIN_ABI_VERSION,
      .name = "flaky gather (test)",
      .ops = 1u << GSC_GATHER,
      .dtypes = 1ull << GSC_FLOAT32,
      .index_dtypes = 1u << GSC_INT32,
      .semantics = 1u << GSC_TF_CPU,
      .deterministic = 0,
      .tf_messages = 0,
      .half_in_float = 0,
      .run = run,
  };
  const char* det = getenv("GSCHECK_FLAKY_DETERMINISTIC");
  plugin.deterministic = det && strcmp(det, "1") == 0;
  return &plugin;
}
