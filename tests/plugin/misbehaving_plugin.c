/* Plugins that misbehave in one way each (selected at compile time), to show that gscheck
 * contains them: the crash, hang and stray write stay inside the worker process. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "gscheck/plugin.h"

static int32_t run(const gsc_call* call, gsc_result* result) {
  (void)result;
#if defined(GSC_TEST_NO_OUTPUT)
  (void)call;
  return GSC_OK; /* claims success without ever asking for an output */
#else
  const int64_t dims[1] = {4};
  float* out = call->alloc_output(call->alloc_ctx, GSC_FLOAT32, 1, dims);
#endif
#if defined(GSC_TEST_CRASH)
  raise(SIGSEGV);
#elif defined(GSC_TEST_HANG)
  for (;;) pause();
#elif defined(GSC_TEST_OVERRUN)
  memset(out, 0, 5 * sizeof(float)); /* one element too many */
#elif defined(GSC_TEST_UNWRITTEN)
  out[0] = 1.0f; /* the other three elements keep gscheck's poison */
#endif
#if !defined(GSC_TEST_NO_OUTPUT)
  (void)out;
  return GSC_OK;
#endif
}

const gsc_plugin_v1* gscheck_plugin_v1(void) {
  static const gsc_plugin_v1 plugin = {
#if defined(GSC_TEST_BAD_ABI)
      .abi_version = 99,
#else
      .abi_version = GSCHECK_PLUGIN_ABI_VERSION,
#endif
      .name = "misbehaving",
      .ops = 1u << GSC_GATHER,
      .dtypes = 1ull << GSC_FLOAT32,
      .index_dtypes = 1u << GSC_INT32,
      .semantics = 1u << GSC_TF_GPU,
      .deterministic = 1,
      .run = run,
  };
  return &plugin;
}
