/* An example vendor plugin: tf.gather_nd with tf-gpu semantics, in plain C against
 * include/gscheck/plugin.h. It copies slices as bytes, so it claims every dtype, and leaves
 * batch_dims and the ERROR policy unimplemented (gscheck reports those cases UNIMPLEMENTED).
 *
 *   cc -shared -fPIC -I include examples/plugins/gather_nd_plugin.c -o libgather_nd_plugin.so
 *   gscheck run --backend plugin:./libgather_nd_plugin.so */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gscheck/plugin.h"

static int64_t product(const int64_t* dims, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= dims[i];
  return n;
}

static size_t element_size(int32_t dtype) {
  static const size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, sizeof(gsc_string)};
  return sizes[dtype];
}

static int64_t index_at(const gsc_tensor* indices, int64_t i) {
  if (indices->dtype == GSC_INT32) return ((const int32_t*)indices->data)[i];
  return ((const int64_t*)indices->data)[i];
}

static int32_t fail(gsc_result* result, int32_t code, const char* message) {
  snprintf(result->message, sizeof result->message, "%s", message);
  return code;
}

static int32_t run(const gsc_call* call, gsc_result* result) {
  const gsc_tensor* params = call->params;
  const gsc_tensor* indices = call->indices;
  const char* policy = call->bad_indices_policy;
  /* batch_dims is checked by TensorFlow's Python before any kernel: leave it to gscheck's
   * UNIMPLEMENTED rather than answer in the wrong order. */
  if (call->op != GSC_GATHER_ND || call->batch_dims != 0)
    return fail(result, GSC_UNIMPLEMENTED, "only gather_nd without batch_dims");
  if (strcmp(policy, "") && strcmp(policy, "DEFAULT") && strcmp(policy, "IGNORE")) {
    if (!strcmp(policy, "ERROR")) return fail(result, GSC_UNIMPLEMENTED, "no ERROR policy");
    /* TensorFlow registers GatherNd only for the known policies: no kernel, no op. */
    snprintf(result->message, sizeof result->message,
             "no gather_nd kernel for bad_indices_policy \"%s\"", policy);
    return GSC_UNSUPPORTED;
  }
  if (params->rank < 1)
    return fail(result, GSC_INVALID_ARGUMENT, "params must be at least a vector");
  if (indices->rank < 1)
    return fail(result, GSC_INVALID_ARGUMENT, "indices must be at least a vector");
  const int depth = (int)indices->dims[indices->rank - 1];
  if (indices->dims[indices->rank - 1] > params->rank)
    return fail(result, GSC_INVALID_ARGUMENT,
                "index innermost dimension length must be <= params rank");
  const int64_t rows = product(indices->dims, 0, indices->rank - 1);
  const int64_t index_max = indices->dtype == GSC_INT32 ? INT32_MAX : INT64_MAX;
  if (rows > INT32_MAX) return fail(result, GSC_INVALID_ARGUMENT, "indices has too many elements");
  if (product(params->dims, 0, params->rank) > index_max)
    return fail(result, GSC_INVALID_ARGUMENT, "params too large for the index type");
  const int64_t slice = product(params->dims, depth, params->rank);
  if (slice > index_max) return fail(result, GSC_INVALID_ARGUMENT, "slice size is too large");
  if (rows > 0 && product(params->dims, 0, params->rank) == 0)
    return fail(result, GSC_INVALID_ARGUMENT,
                "Requested more than 0 entries, but params is empty.");
  if (rows > 0 && depth > 7)
    return fail(result, GSC_INVALID_ARGUMENT, "Only indices.shape[-1] values between 1 and 7");

  int64_t out_dims[2 * 254];
  int out_rank = 0;
  for (int i = 0; i < indices->rank - 1; ++i) out_dims[out_rank++] = indices->dims[i];
  for (int i = depth; i < params->rank; ++i) out_dims[out_rank++] = params->dims[i];
  char* out = call->alloc_output(call->alloc_ctx, params->dtype, out_rank, out_dims);
  if (!out) return fail(result, GSC_RESOURCE_EXHAUSTED, "output refused by gscheck");

  const size_t slice_bytes = (size_t)slice * element_size(params->dtype);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    int in_range = 1;
#ifdef GSC_EXAMPLE_LAST_ROW_BUG
    /* A planted bug for gscheck's own tests (shrinking, the installed package): past 20 rows,
     * the last row reads the index row before it. */
    const int64_t row = rows > 20 && r == rows - 1 ? r - 1 : r;
#elif defined(GSC_EXAMPLE_NESTED_BUG)
    /* A planted bug behind five nested conditions, for the coverage-guided fuzzing test
     * (docs/fuzzing.md, "Fuzz your own kernel"): int16 data, depth 2, a row count of 7 modulo
     * 11, a first element of 0x2a17 (a value no random sweep draws), and a last row whose first
     * coordinate is the last of params' first dimension: that row reads row 0. Each condition
     * is a branch of its own, so the plugin's counters reward each step, and its compares
     * (trace-cmp) hand the fuzzer the magic value. */
    int64_t row = r;
    if (params->dtype == GSC_INT16)
      if (depth == 2)
        if (rows % 11 == 7)
          if (((const int16_t*)params->data)[0] == 0x2a17)
            if (r == rows - 1 && index_at(indices, r * depth) == params->dims[0] - 1) row = 0;
#else
    const int64_t row = r;
#endif
    for (int j = 0; j < depth; ++j) {
      const int64_t v = index_at(indices, row * depth + j);
      /* Stop at the first bad coordinate: folding INT64_MAX into the offset overflows (UB). */
      if (v < 0 || v >= params->dims[j]) {
        in_range = 0;
        break;
      }
      offset = offset * params->dims[j] + v;
    }
    char* dst = out + (size_t)r * slice_bytes;
    if (!in_range) {
      if (params->dtype == GSC_STRING) {
        gsc_string* s = (gsc_string*)dst;
        for (int64_t k = 0; k < slice; ++k) s[k] = (gsc_string){"", 0};
      } else {
        memset(dst, 0, slice_bytes); /* tf-gpu: a bad row's slice is zero */
      }
      continue;
    }
    memcpy(dst, (const char*)params->data + (size_t)offset * slice_bytes, slice_bytes);
  }
  return GSC_OK;
}

#ifndef GSC_EXAMPLE_EMBEDDED /* device_gather_nd_plugin.c reuses run() under its own entry */
const gsc_plugin_v1* gscheck_plugin_v1(void) {
  static const gsc_plugin_v1 plugin = {
      .abi_version = GSCHECK_PLUGIN_ABI_VERSION,
      .name = "example gather_nd (C)",
      .ops = 1u << GSC_GATHER_ND,
      .dtypes = (1ull << (GSC_STRING + 1)) - 1,
      .index_dtypes = (1u << GSC_INT32) | (1u << GSC_INT64),
      .semantics = 1u << GSC_TF_GPU,
      .deterministic = 1,
      .tf_messages = 0,
      .half_in_float = 0,
      .run = run,
  };
  return &plugin;
}
#endif
