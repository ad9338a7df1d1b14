/* A test plugin for `gscheck bench`: tf.gather_nd of float32 rows by int32 [N,1] indices (tf-cpu,
 * in-bounds only). GSCHECK_BENCH_HACK picks a published timing hack, each of which bench must
 * catch (tests/tools/bench_test.py):
 *   honest  (default) computes every call;
 *   cache   computes the first call of each output shape and replays that output afterwards
 *           (a result cache keyed by shape);
 *   copy    writes the first rows of params as the output (input copied to output);
 *   thread  answers at once and gathers on a thread started by the call (work left running
 *           past the call). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gscheck/plugin.h"

static const char* hack(void) {
  const char* h = getenv("GSCHECK_BENCH_HACK");
  return h ? h : "honest";
}

struct job {
  const float* params;
  const int32_t* indices;
  float* out;
  int64_t rows, width;
};

static void gather(const struct job* j) {
  for (int64_t r = 0; r < j->rows; ++r)
    memcpy(j->out + r * j->width, j->params + (int64_t)j->indices[r] * j->width,
           (size_t)j->width * sizeof(float));
}

static void* late(void* arg) {
  usleep(200000); /* long after the call answered */
  gather((const struct job*)arg);
  free(arg);
  return NULL;
}

static float* cached = NULL;
static int64_t cached_elems = -1;

static int32_t run(const gsc_call* call, gsc_result* result) {
  const gsc_tensor* p = call->params;
  const gsc_tensor* ix = call->indices;
  if (call->op != GSC_GATHER_ND || p->dtype != GSC_FLOAT32 || p->rank != 2 ||
      ix->dtype != GSC_INT32 || ix->rank != 2 || ix->dims[1] != 1 || call->batch_dims != 0) {
    strcpy(result->message, "only float32 [R,W] params by int32 [N,1] indices");
    return GSC_UNIMPLEMENTED;
  }
  const int64_t rows = ix->dims[0], width = p->dims[1];
  const int32_t* indices = (const int32_t*)ix->data;
  for (int64_t r = 0; r < rows; ++r)
    if (indices[r] < 0 || indices[r] >= p->dims[0]) {
      strcpy(result->message, "only in-bounds indices");
      return GSC_UNIMPLEMENTED;
    }
  const int64_t out_dims[2] = {rows, width};
  float* out = call->alloc_output(call->alloc_ctx, GSC_FLOAT32, 2, out_dims);
  if (!out && rows * width != 0) return GSC_RESOURCE_EXHAUSTED;
  struct job j = {(const float*)p->data, indices, out, rows, width};
  const char* h = hack();
  if (strcmp(h, "cache") == 0) {
    if (cached_elems == rows * width) {
      memcpy(out, cached, (size_t)(rows * width) * sizeof(float));
      return GSC_OK;
    }
    gather(&j);
    free(cached);
    cached = malloc((size_t)(rows * width) * sizeof(float) + 1);
    memcpy(cached, out, (size_t)(rows * width) * sizeof(float));
    cached_elems = rows * width;
  } else if (strcmp(h, "copy") == 0) {
    const int64_t n = rows * width < p->dims[0] * width ? rows * width : p->dims[0] * width;
    memcpy(out, p->data, (size_t)n * sizeof(float));
  } else if (strcmp(h, "thread") == 0) {
    struct job* copy = malloc(sizeof *copy);
    *copy = j;
    pthread_t t;
    if (pthread_create(&t, NULL, late, copy) != 0) {
      free(copy);
      gather(&j);
    } else {
      pthread_detach(t);
    }
  } else {
    gather(&j);
  }
  return GSC_OK;
}

const gsc_plugin_v1* gscheck_plugin_v1(void) {
  static const gsc_plugin_v1 plugin = {
      .abi_version = GSCHECK_PLUGIN_ABI_VERSION,
      .name = "bench hacks (test)",
      .ops = 1u << GSC_GATHER_ND,
      .dtypes = 1ull << GSC_FLOAT32,
      .index_dtypes = 1u << GSC_INT32,
      .semantics = 1u << GSC_TF_CPU,
      .deterministic = 1,
      .tf_messages = 0,
      .half_in_float = 0,
      .run = run,
  };
  return &plugin;
}
