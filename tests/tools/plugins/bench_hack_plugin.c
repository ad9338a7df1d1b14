/* A test plugin for `gscheck bench`: tf.gather_nd of float32 rows by int32 [N,1] indices (tf-cpu,
 * in-bounds only). GSCHECK_BENCH_HACK picks a published timing hack, each of which bench must
 * catch (tests/tools/bench_test.py):
 *   honest  (default) computes every call;
 *   cache   computes the first call of each output shape and replays that output afterwards
 *           (a result cache keyed by shape);
 *   replay  keeps the outputs of 8 calls keyed by a cheap fingerprint of the table (its size
 *           and first bytes) and replays one when the fingerprint comes again (input sets in
 *           turn repeat their tables; only fresh indices on every call make this wrong);
 *   poke    tries to make its indices writable (mprotect, and write() through a reopened
 *           /proc/self/fd of the "in" memfd) and answers INTERNAL naming the way that worked:
 *           the bench's fresh indices are written by gscheck alone;
 *   copy    writes the first rows of params as the output (input copied to output);
 *   thread  answers at once and gathers on a thread started by the call (the output is not
 *           there when gscheck reads it);
 *   linger  gathers, then starts a thread that gathers again 200 ms later (right output, work
 *           left running past the call);
 *   slow    computes every call, then spins for GSCHECK_BENCH_SLOW_US microseconds (default:
 *           a fifth of the time the gather took): a kernel made slower, which `gscheck report
 *           diff` must flag. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
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

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float* cached = NULL;
static int64_t cached_elems = -1;

struct kept {
  unsigned char key[40];
  float* out;
  int64_t elems;
};
static struct kept replays[8];
static int next_replay = 0;

/* The table's size and its first 32 bytes. */
static void fingerprint(const gsc_tensor* p, unsigned char key[40]) {
  const int64_t n = p->dims[0] * p->dims[1] * (int64_t)sizeof(float);
  memcpy(key, &n, 8);
  memset(key + 8, 0, 32);
  memcpy(key + 8, p->data, n < 32 ? (size_t)n : 32);
}

/* "" when the inputs could not be written, else the way that worked. */
static const char* poke(const gsc_tensor* ix) {
  const long page = sysconf(_SC_PAGESIZE);
  void* at = (void*)((uintptr_t)ix->data & ~(uintptr_t)(page - 1));
  if (mprotect(at, (size_t)page, PROT_READ | PROT_WRITE) == 0) return "mprotect";
  DIR* d = opendir("/proc/self/fd");
  if (!d) return "";
  const char* how = "";
  struct dirent* e;
  while ((e = readdir(d)) != NULL && !*how) {
    char path[300], link[300];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    const ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = '\0';
    if (!strstr(link, "gscheck-in")) continue;
    const int fd = open(path, O_RDWR);
    if (fd < 0) continue;
    unsigned char b;
    if (pread(fd, &b, 1, 0) == 1 && pwrite(fd, &b, 1, 0) == 1) how = "write() on a reopened fd";
    void* m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
      munmap(m, (size_t)page);
      if (!*how) how = "a writable shared mapping";
    }
    close(fd);
  }
  closedir(d);
  return how;
}

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
  } else if (strcmp(h, "replay") == 0) {
    unsigned char key[40];
    fingerprint(p, key);
    for (int k = 0; k < 8; ++k)
      if (replays[k].out && replays[k].elems == rows * width &&
          memcmp(replays[k].key, key, sizeof key) == 0) {
        memcpy(out, replays[k].out, (size_t)(rows * width) * sizeof(float));
        return GSC_OK;
      }
    gather(&j);
    struct kept* slot = &replays[next_replay++ % 8];
    free(slot->out);
    slot->out = malloc((size_t)(rows * width) * sizeof(float) + 1);
    memcpy(slot->out, out, (size_t)(rows * width) * sizeof(float));
    memcpy(slot->key, key, sizeof key);
    slot->elems = rows * width;
  } else if (strcmp(h, "poke") == 0) {
    const char* how = poke(ix);
    if (*how) {
      snprintf(result->message, sizeof result->message, "wrote its inputs by %s", how);
      return GSC_INTERNAL;
    }
    gather(&j);
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
  } else if (strcmp(h, "linger") == 0) {
    gather(&j);
    struct job* copy = malloc(sizeof *copy);
    *copy = j;
    pthread_t t;
    if (pthread_create(&t, NULL, late, copy) != 0)
      free(copy);
    else
      pthread_detach(t);
  } else if (strcmp(h, "slow") == 0) {
    const double start = now();
    gather(&j);
    const char* us = getenv("GSCHECK_BENCH_SLOW_US");
    const double until = us ? now() + 1e-6 * atof(us) : now() + 0.2 * (now() - start);
    while (now() < until) {
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
