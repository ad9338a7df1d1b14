/* A GatherV2 kernel as a vendor writes one: the raw kernel's contract (gscheck_plugin_api()
 * returns GSC_API_KERNEL): the axis is always given and batch_dims is never dropped, so
 * tf.gather's Python rules (axis=None, a constant axis 0 dropping batch_dims) are not its
 * business. TensorFlow's checks and messages in kernel order, tf-cpu semantics, every fixed-size
 * dtype, int32/int64 indices. The CLI test grades it on corpus/golden/kernel and
 * corpus/golden/gather: it must pass every case it is given and none may fail. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gscheck/plugin.h"

static int32_t fail(gsc_result* r, int32_t code, const char* msg) {
  snprintf(r->message, sizeof r->message, "%s", msg);
  return code;
}

static int64_t index_at(const gsc_tensor* t, int64_t i) {
  return t->dtype == GSC_INT32 ? ((const int32_t*)t->data)[i] : ((const int64_t*)t->data)[i];
}

static size_t element_size(int32_t dtype) {
  static const size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, 0};
  return sizes[dtype];
}

static int64_t product(const int64_t* dims, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= dims[i];
  return n;
}

static int32_t run(const gsc_call* call, gsc_result* r) {
  char msg[512];
  const gsc_tensor* params = call->params;
  const gsc_tensor* indices = call->indices;
  const gsc_tensor* axis_t = call->axis;
  if (call->op != GSC_GATHER || !axis_t) return fail(r, GSC_UNIMPLEMENTED, "GatherV2 only");
  int64_t b = call->batch_dims;
  if (b < INT32_MIN || b > INT32_MAX) {
    snprintf(msg, sizeof msg, "Attr batch_dims has value %lld out of range for an int32",
             (long long)b);
    return fail(r, GSC_INVALID_ARGUMENT, msg);
  }
  const int rp = params->rank, ri = indices->rank;
  if (rp < 1) return fail(r, GSC_INVALID_ARGUMENT, "params must be at least 1 dimensional");
  if (axis_t->rank != 0) return fail(r, GSC_INVALID_ARGUMENT, "axis must be scalar");
  if (axis_t->dtype != GSC_INT32 && axis_t->dtype != GSC_INT64)
    return fail(r, GSC_INVALID_ARGUMENT, "axis must be int32 or int64.");
  int64_t axis = index_at(axis_t, 0);
  if (axis == INT64_MAX)
    return fail(r, GSC_INVALID_ARGUMENT,
                "axis must be less than std::numeric_limits<int64_t>::max()");
  if (axis == INT64_MIN)
    return fail(r, GSC_INVALID_ARGUMENT,
                "axis must be greater than std::numeric_limits<int64_t>::min()");
  const int64_t min_rank = axis < 0 ? -axis : axis + 1;
  if (rp < min_rank) {
    snprintf(msg, sizeof msg, "Shape must be at least rank %lld but is rank %d",
             (long long)min_rank, rp);
    return fail(r, GSC_INVALID_ARGUMENT, msg);
  }
  if (axis < 0) axis += rp;
  if (b != 0) {
    if (b < -ri || b > ri) {
      snprintf(msg, sizeof msg, "Expected batch_dims in the range [%d, %d], but got %lld", -ri, ri,
               (long long)b);
      return fail(r, GSC_INVALID_ARGUMENT, msg);
    }
    if (b < 0) b += ri;
    if (b >= rp) {
      snprintf(msg, sizeof msg, "batch_dims (%lld) must be less than rank(params) (%d).",
               (long long)b, rp);
      return fail(r, GSC_INVALID_ARGUMENT, msg);
    }
    if (axis < b) {
      snprintf(msg, sizeof msg, "batch_dims (%lld) must be less than or equal to axis (%lld).",
               (long long)b, (long long)axis);
      return fail(r, GSC_INVALID_ARGUMENT, msg);
    }
    for (int i = 0; i < b; ++i) {
      if (params->dims[i] != indices->dims[i]) {
        snprintf(msg, sizeof msg,
                 "params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld", i,
                 (long long)params->dims[i], i, (long long)indices->dims[i]);
        return fail(r, GSC_INVALID_ARGUMENT, msg);
      }
    }
  }
  const int a = (int)axis, bd = (int)b;
  const int64_t dim = params->dims[a];
  const int64_t imax = indices->dtype == GSC_INT32 ? INT32_MAX : INT64_MAX;
  if (dim > imax) {
    snprintf(msg, sizeof msg, "params.shape[%d] too large for %s indexing: %lld > %lld", a,
             indices->dtype == GSC_INT32 ? "int32" : "int64", (long long)dim, (long long)imax);
    return fail(r, GSC_INVALID_ARGUMENT, msg);
  }
  /* params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:] */
  int64_t out_dims[512];
  int out_rank = 0;
  for (int i = 0; i < a; ++i) out_dims[out_rank++] = params->dims[i];
  for (int i = bd; i < ri; ++i) out_dims[out_rank++] = indices->dims[i];
  for (int i = a + 1; i < rp; ++i) out_dims[out_rank++] = params->dims[i];
  char* out = call->alloc_output(call->alloc_ctx, params->dtype, out_rank, out_dims);
  if (!out) return fail(r, GSC_RESOURCE_EXHAUSTED, "output over gscheck's budget");
  const int64_t batch = product(params->dims, 0, bd), outer = product(params->dims, bd, a);
  const int64_t inner = product(params->dims, a + 1, rp);
  const int64_t n = batch == 0 ? 0 : product(indices->dims, 0, ri) / batch;
  if (batch * outer * n * inner == 0) return GSC_OK; /* no element: no index is read */
  const size_t slice = (size_t)inner * element_size(params->dtype);
  const char* p = params->data;
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t q = 0; q < outer; ++q) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t flat = bi * n + i, v = index_at(indices, flat);
        if (v < 0 || v >= dim) {
          /* "indices[p0,p1,...] = v is not in [0, dim)", the position in indices' shape */
          char pos[256] = "";
          if (ri > 0) {
            int64_t rest = flat, coords[64];
            for (int k = ri - 1; k >= 0; --k) {
              coords[k] = rest % indices->dims[k];
              rest /= indices->dims[k];
            }
            size_t len = 0;
            len += (size_t)snprintf(pos + len, sizeof pos - len, "[");
            for (int k = 0; k < ri; ++k)
              len += (size_t)snprintf(pos + len, sizeof pos - len, k ? ",%lld" : "%lld",
                                      (long long)coords[k]);
            snprintf(pos + len, sizeof pos - len, "]");
          }
          snprintf(msg, sizeof msg, "indices%s = %lld is not in [0, %lld)", pos, (long long)v,
                   (long long)dim);
          return fail(r, GSC_BAD_INDEX, msg);
        }
        memcpy(out + ((bi * outer + q) * n + i) * slice, p + ((bi * outer + q) * dim + v) * slice,
               slice);
      }
    }
  }
  return GSC_OK;
}

const gsc_plugin_v1* gscheck_plugin_v1(void) {
  static const gsc_plugin_v1 plugin = {GSCHECK_PLUGIN_ABI_VERSION,
                                       "test GatherV2 kernel",
                                       1u << GSC_GATHER,
                                       ((1ull << GSC_STRING) - 1), /* every fixed-size dtype */
                                       (1u << GSC_INT32) | (1u << GSC_INT64),
                                       1u << GSC_TF_CPU,
                                       1,
                                       1,
                                       0,
                                       run};
  return &plugin;
}

int32_t gscheck_plugin_api(void) { return GSC_API_KERNEL; }
