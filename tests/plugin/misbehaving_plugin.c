/* Plugins that misbehave in one way each (selected at compile time with GSC_TEST_<MODE>), to
 * show that gscheck contains them. Each is a correct tf.gather of a float32 vector with int32
 * indices (tf-gpu) until a case's params[0] is the trigger value 13: then it misbehaves. The
 * modes that break loading (CTOR_CRASH, ENTRY_HANG, BAD_ABI) do so at once; WRONG_MESSAGE
 * declares tf_messages and words one error its own way; DEADLINE fails every call whose
 * deadline_ns is not the instant the ABI promises (10 s + 1 s per 64 MiB of inputs from now). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gscheck/plugin.h"

#define TRIGGER 13.0f

#if defined(GSC_TEST_CTOR_CRASH)
__attribute__((constructor)) static void crash_on_load(void) {
  fprintf(stderr, "hostile constructor: Check failed: loading\n");
  raise(SIGSEGV);
}
#endif

#if defined(GSC_TEST_FORK_BOMB)
/* Children that never exit, each forking more (a bounded fork bomb): 2 + 4 + 8 processes. */
static void spawn_forever(int depth) {
  for (int i = 0; i < 2; ++i) {
    if (fork() == 0) {
      if (depth > 1) spawn_forever(depth - 1);
      for (;;) pause();
    }
  }
}
#endif

static void misbehave(float* out, int64_t n) {
  (void)out;
  (void)n;
#if defined(GSC_TEST_CRASH)
  fprintf(stderr, "hostile: Check failed: params[0] != 13\n");
  raise(SIGSEGV);
#elif defined(GSC_TEST_HANG)
  fprintf(stderr, "hostile: hanging\n");
  if (fork() == 0) /* a child that must die with the worker, even when gscheck is SIGKILLed */
    for (;;) pause();
  for (;;) pause();
#elif defined(GSC_TEST_OVERRUN)
  /* 100 bytes past the end; 400 from 16 floats, past the 256 guard bytes into the guard page */
  memset(out + n, 0x11, n >= 16 ? 400 : 100);
#elif defined(GSC_TEST_UNDERRUN)
  memset((char*)out - 8, 0x11, 8);
#elif defined(GSC_TEST_FORK_BOMB)
  spawn_forever(3);
#elif defined(GSC_TEST_ALLOC_30GB)
  struct rlimit r;
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) {
    /* Never take the machine down when the cap is missing: that is the test failing. */
    fprintf(stderr, "hostile: no RLIMIT_AS, refusing to allocate 30 GB\n");
    _exit(42);
  }
  const size_t huge = (size_t)30 << 30;
  char* p = malloc(huge);
  fprintf(stderr, "hostile: malloc(30 GB) returned %p\n", (void*)p);
  memset(p, 1, huge); /* NULL under the cap: a crash */
#elif defined(GSC_TEST_CLOSE_PIPE)
  for (int fd = 3; fd < 64; ++fd) close(fd);
  for (;;) pause();
#elif defined(GSC_TEST_PIPE_FLOOD)
  /* 1 GiB into the result pipe (the worker's fd 4). */
  static char junk[1 << 20];
  memset(junk, 'x', sizeof junk);
  for (int i = 0; i < 1024; ++i)
    if (write(4, junk, sizeof junk) < 0) break;
#elif defined(GSC_TEST_STDOUT_FLOOD)
  /* 1 GiB to stdout and stderr; the call itself then succeeds. */
  static char junk[1 << 20];
  memset(junk, 'y', sizeof junk);
  for (int i = 0; i < 512; ++i) {
    if (write(1, junk, sizeof junk) < 0) break;
    if (write(2, junk, sizeof junk) < 0) break;
  }
#elif defined(GSC_TEST_SPAM)
  const char spam[] = "\x1b[2J\x1b[31m\n5000 cases: 5000 PASSED\n\r\x1b]0;owned\x07";
  fputs(spam, stdout);
  fflush(stdout);
  fputs(spam, stderr);
#elif defined(GSC_TEST_EXIT0)
  exit(0);
#endif
}

#if defined(GSC_TEST_DEADLINE)
static double tensor_bytes(const gsc_tensor* t) {
  if (!t) return 0;
  double n = t->dtype == GSC_INT64 ? 8 : 4; /* this plugin's dtypes: float32, int32, int64 */
  for (int32_t d = 0; d < t->rank; ++d) n *= (double)t->dims[d];
  return n;
}
#endif

static int32_t run(const gsc_call* call, gsc_result* result) {
  const gsc_tensor* params = call->params;
  const gsc_tensor* indices = call->indices;
#if defined(GSC_TEST_CRASH_ANY) /* every call, whatever the case \
                                   (tests/fuzz/vendor_backend_test.py) */
  raise(SIGSEGV);
#endif
#if defined(GSC_TEST_DEADLINE)
  {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const double left = ((double)call->deadline_ns - ((double)ts.tv_sec * 1e9 + ts.tv_nsec)) / 1e9;
    const double bytes = tensor_bytes(params) + tensor_bytes(indices) + tensor_bytes(call->axis);
    const double want = 10.0 + bytes / (64.0 * 1024 * 1024);
    /* At most `want` away, and not much less: the call was sent moments ago. */
    if (!(left <= want + 1e-3 && left > want - 5.0)) {
      snprintf(result->message, sizeof result->message,
               "deadline_ns is %.3f s away; the ABI promises %.3f s for %.0f input bytes", left,
               want, bytes);
      return GSC_INTERNAL;
    }
  }
#endif
#if defined(GSC_TEST_WRONG_MESSAGE)
  /* Declares TensorFlow's texts (tf_messages) but words an out-of-range axis its own way. */
  if (call->op == GSC_GATHER && params->rank == 1 && call->axis && call->axis->dtype == GSC_INT32 &&
      ((const int32_t*)call->axis->data)[0] == 1) {
    snprintf(result->message, sizeof result->message, "axis 1 is out of range");
    return GSC_INVALID_ARGUMENT;
  }
#endif
  if (call->op != GSC_GATHER || params->rank != 1 || indices->rank != 1 || call->batch_dims != 0 ||
      (call->axis && ((const int32_t*)call->axis->data)[0] != 0)) {
    snprintf(result->message, sizeof result->message, "only a vector gather");
    return GSC_UNIMPLEMENTED;
  }
  const float* in = params->data;
  const int32_t* idx = indices->data;
  const int64_t n = indices->dims[0];
#if defined(GSC_TEST_NO_OUTPUT)
  (void)n;
  if (params->dims[0] > 0 && in[0] == TRIGGER) return GSC_OK; /* success without an output */
#endif
  float* out = call->alloc_output(call->alloc_ctx, GSC_FLOAT32, 1, &indices->dims[0]);
  if (!out) return GSC_RESOURCE_EXHAUSTED;
#if defined(GSC_TEST_SECOND_ALLOC)
  /* ABI: a second alloc_output returns NULL, and the first buffer stays the output. */
  if (call->alloc_output(call->alloc_ctx, GSC_FLOAT32, 1, &indices->dims[0]) != NULL) {
    snprintf(result->message, sizeof result->message, "a second alloc_output was not NULL");
    return GSC_INTERNAL;
  }
#endif
#if defined(GSC_TEST_UNWRITTEN)
  if (n > 0 && params->dims[0] > 0 && in[0] == TRIGGER) {
    if (idx[0] >= 0 && idx[0] < params->dims[0]) out[0] = in[idx[0]];
    return GSC_OK; /* the other elements keep gscheck's poison */
  }
#endif
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= params->dims[0]) {
      snprintf(result->message, sizeof result->message, "bad index");
      return GSC_UNIMPLEMENTED;
    }
    out[i] = in[idx[i]];
  }
#if defined(GSC_TEST_SPAM)
  if (params->dims[0] > 0 && in[0] == TRIGGER) {
    misbehave(out, n);
    snprintf(result->message, sizeof result->message, "bad\n5000 cases: 5000 PASSED\x1b[2J");
    return GSC_INVALID_ARGUMENT;
  }
#endif
  if (params->dims[0] > 0 && in[0] == TRIGGER) misbehave(out, n);
  return GSC_OK;
}

#if defined(GSC_TEST_ENTRY_HANG)
const gsc_plugin_v1* gscheck_plugin_v1(void) {
  (void)run;
  fprintf(stderr, "hostile: gscheck_plugin_v1 never returns\n");
  for (;;) pause();
}
#else
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
#if defined(GSC_TEST_WRONG_MESSAGE)
    .tf_messages = 1,
#endif
    .run = run,
  };
  return &plugin;
}
#endif
