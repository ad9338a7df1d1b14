/* A forwarding plugin that injects one bug into a real library's plugin (the TensorFlow or
 * PyTorch plugin): what a vendor's regression looks like. A known-failures file that explains
 * the library's real departures must not forgive it (tests/known_failures/injected_check.sh).
 *   GSCHECK_INJECT_TARGET  the plugin to forward to (its ABI v2 or v1 contract, its API level)
 *   GSCHECK_INJECT         abort        abort() after a valid int32 gather
 *                          wrong_value  +1000 (+1) on element 0 of a min/max output
 *                          bad_index    a bad_index error for a non-empty valid gather
 *                          flush16      float16 subnormal outputs of the scatters flushed to 0
 *                          declined     GSC_UNIMPLEMENTED for every tensor_scatter_nd_add
 *                          wrapped_garbage  +1000 (+1) on element 0 of an output computed with a
 *                                       negative index (where a library wraps it: a value the
 *                                       wrap rule predicts, now wrong)
 *                          flush_untouched  every float32 subnormal of a tensor_scatter_nd_{add,
 *                                       sub,min,max} output flushed, touched by a row or not
 *                          large_one_element  the low bit of one element flipped (one ulp, one
 *                                       unit, true/false) in the middle of an output of 100,000
 *                                       elements or more */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gscheck/plugin.h"

static gsc_plugin_v2 self;
static const gsc_plugin_v2* target_v2;
static int32_t (*target_run)(const gsc_call*, gsc_result*);
static int32_t (*target_api)(void);
static const char* inject = "";

typedef struct {
  const gsc_call* call;
  void* data;
  int32_t dtype;
  int64_t elements;
} output_spy;

static void* spy_alloc(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims) {
  output_spy* spy = ctx;
  spy->data = spy->call->alloc_output(spy->call->alloc_ctx, dtype, rank, dims);
  spy->dtype = dtype;
  spy->elements = 1;
  for (int32_t i = 0; i < rank; ++i) spy->elements *= dims[i];
  return spy->data;
}

static int32_t fail(gsc_result* result, int32_t code, const char* text) {
  snprintf(result->message, sizeof result->message, "%s", text);
  return code;
}

static void add_to_first(output_spy* spy) {
  switch (spy->dtype) {
    case GSC_FLOAT32:
      ((float*)spy->data)[0] += 1000.0f;
      break;
    case GSC_FLOAT64:
      ((double*)spy->data)[0] += 1000.0;
      break;
    case GSC_INT32:
      ((int32_t*)spy->data)[0] += 1;
      break;
    case GSC_INT64:
      ((int64_t*)spy->data)[0] += 1;
      break;
    case GSC_FLOAT16:
    case GSC_BFLOAT16:
      ((uint16_t*)spy->data)[0] ^= 0x4000;
      break; /* a far other value */
    default:
      ((unsigned char*)spy->data)[0] ^= 1;
      break;
  }
}

static void flush_half_subnormals(output_spy* spy) {
  uint16_t* h = spy->data;
  for (int64_t i = 0; i < spy->elements; ++i)
    if ((h[i] & 0x7c00) == 0 && (h[i] & 0x03ff) != 0) h[i] &= 0x8000; /* keep the sign */
}

static int has_negative_index(const gsc_tensor* t) {
  if (!t || !t->data) return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i) n *= t->dims[i];
  for (int64_t i = 0; i < n; ++i) {
    if (t->dtype == GSC_INT32 && ((const int32_t*)t->data)[i] < 0) return 1;
    if (t->dtype == GSC_INT64 && ((const int64_t*)t->data)[i] < 0) return 1;
    if (t->dtype == GSC_INT16 && ((const int16_t*)t->data)[i] < 0) return 1;
  }
  return 0;
}

static void flush_float_subnormals(output_spy* spy) {
  uint32_t* f = spy->data;
  for (int64_t i = 0; i < spy->elements; ++i)
    if ((f[i] & 0x7f800000u) == 0 && (f[i] & 0x007fffffu) != 0) f[i] &= 0x80000000u;
}

static int64_t element_bytes(int32_t dtype) {
  switch (dtype) {
    case GSC_BOOL:
    case GSC_INT8:
    case GSC_UINT8:
      return 1;
    case GSC_INT16:
    case GSC_UINT16:
    case GSC_FLOAT16:
    case GSC_BFLOAT16:
      return 2;
    case GSC_INT32:
    case GSC_UINT32:
    case GSC_FLOAT32:
      return 4;
    case GSC_COMPLEX128:
      return 16;
    default:
      return 8;
  }
}

static int32_t run(const gsc_call* call, gsc_result* result) {
  if (!strcmp(inject, "declined") && call->op == GSC_TENSOR_SCATTER_ADD)
    return fail(result, GSC_UNIMPLEMENTED, "declined by the injecting plugin");
  output_spy spy = {call, NULL, -1, 0};
  gsc_call forwarded = *call;
  forwarded.alloc_output = spy_alloc;
  forwarded.alloc_ctx = &spy;
  const int32_t code = target_run(&forwarded, result);
  if (code != GSC_OK || !spy.data) return code;
  if (!strcmp(inject, "abort") && call->op == GSC_GATHER && call->params->dtype == GSC_INT32)
    abort();
  if (!strcmp(inject, "bad_index") && call->op == GSC_GATHER && spy.elements > 0)
    return fail(result, GSC_BAD_INDEX, "indices[0] = 0 is not in [0, 0) (injected)");
  if (!strcmp(inject, "wrong_value") && spy.elements > 0 && spy.dtype != GSC_STRING &&
      (call->op == GSC_TENSOR_SCATTER_MIN || call->op == GSC_TENSOR_SCATTER_MAX))
    add_to_first(&spy);
  if (!strcmp(inject, "flush16") && spy.dtype == GSC_FLOAT16 && call->op != GSC_GATHER &&
      call->op != GSC_GATHER_ND)
    flush_half_subnormals(&spy);
  if (!strcmp(inject, "wrapped_garbage") && spy.elements > 0 && spy.dtype != GSC_STRING &&
      has_negative_index(call->indices))
    add_to_first(&spy);
  if (!strcmp(inject, "large_one_element") && spy.elements >= 100000 && spy.dtype != GSC_STRING)
    ((unsigned char*)spy.data)[spy.elements / 2 * element_bytes(spy.dtype)] ^= 1;
  if (!strcmp(inject, "flush_untouched") && spy.dtype == GSC_FLOAT32 &&
      (call->op == GSC_TENSOR_SCATTER_ADD || call->op == GSC_TENSOR_SCATTER_SUB ||
       call->op == GSC_TENSOR_SCATTER_MIN || call->op == GSC_TENSOR_SCATTER_MAX))
    flush_float_subnormals(&spy);
  return code;
}

static int32_t init(gsc_result* result) {
  return target_v2 && target_v2->init ? target_v2->init(result) : GSC_OK;
}

static void finalize(void) {
  if (target_v2 && target_v2->finalize) target_v2->finalize();
}

/* Loads the target once; NULL when it cannot (gscheck then reports a plugin without a contract). */
static const gsc_plugin_v2* load(void) {
  static int tried;
  static const gsc_plugin_v2* loaded;
  if (tried) return loaded;
  tried = 1;
  const char* path = getenv("GSCHECK_INJECT_TARGET");
  const char* kind = getenv("GSCHECK_INJECT");
  if (!path || !kind) return NULL;
  inject = kind;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return NULL;
  const gsc_plugin_v2* (*v2)(void) = (const gsc_plugin_v2* (*)(void))dlsym(h, "gscheck_plugin_v2");
  const gsc_plugin_v1* (*v1)(void) = (const gsc_plugin_v1* (*)(void))dlsym(h, "gscheck_plugin_v1");
  target_api = (int32_t(*)(void))dlsym(h, "gscheck_plugin_api");
  if (v2) {
    target_v2 = v2();
    if (!target_v2) return NULL;
    self = *target_v2;
  } else if (v1) {
    const gsc_plugin_v1* d = v1();
    if (!d) return NULL;
    memcpy(&self, d, sizeof *d);
  } else {
    return NULL;
  }
  target_run = self.run;
  self.abi_version = GSCHECK_PLUGIN_ABI_V2;
  self.run = run;
  self.init = init;
  self.finalize = finalize;
  loaded = &self;
  return loaded;
}

const gsc_plugin_v2* gscheck_plugin_v2(void) { return load(); }

int32_t gscheck_plugin_api(void) {
  load();
  return target_api ? target_api() : GSC_API_PYTHON;
}
