/* A plugin's gather_nd timed in this process, with no worker, no sealed inputs, no poison and
 * no check: what the same code costs without gscheck, to hold `gscheck bench`'s figure for the
 * same problem against (docs/performance.md "gscheck's cost per call"). Not a grader: the
 * plugin runs unconfined and its answer is not looked at.
 *
 *   call_in_process PLUGIN.so ROWS WIDTH TABLE_ROWS CALLS [SETS]
 *
 * float32 params [TABLE_ROWS, WIDTH] gathered by int32 indices [ROWS, 1], uniform (seed 1); the
 * output buffer is allocated once and reused. Prints the median and minimum seconds per call.
 * With SETS, the calls take SETS tables in turn and indices drawn afresh before each call
 * (outside the clock), as `gscheck bench` gives them (its default: 3 sets): without, the same
 * rows are read every call and stay in the cache, which no bench call enjoys. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gscheck/plugin.h"

static void* g_out;
static size_t g_out_bytes;

static void* alloc_output(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims) {
  (void)ctx;
  size_t bytes = dtype == GSC_FLOAT32 ? 4 : 0;
  for (int32_t i = 0; i < rank; ++i) bytes *= (size_t)dims[i];
  return bytes <= g_out_bytes ? g_out : NULL;
}

/* Uniform rows of [0, table) from a 64-bit LCG whose state *x carries on from call to call. */
static void draw_indices(int32_t* indices, int64_t rows, int64_t table, uint64_t* x) {
  for (int64_t r = 0; r < rows; ++r) {
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    indices[r] = (int32_t)((*x >> 33) % (uint64_t)table);
  }
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    fprintf(stderr, "usage: call_in_process PLUGIN.so ROWS WIDTH TABLE_ROWS CALLS [SETS]\n");
    return 2;
  }
  const int64_t rows = atoll(argv[2]), width = atoll(argv[3]), table = atoll(argv[4]);
  const int calls = atoi(argv[5]);
  const int sets = argc == 7 ? atoi(argv[6]) : 0; /* 0: one table, the same indices */
  if (argc == 7 && (sets < 1 || sets > 64)) {
    fprintf(stderr, "call_in_process: SETS must be 1 to 64, got '%s'\n", argv[6]);
    return 2;
  }
  if (rows < 1 || width < 1 || table < 1 || table > 2147483647 || calls < 1) {
    fprintf(stderr, "call_in_process: ROWS, WIDTH, TABLE_ROWS and CALLS must be positive\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "call_in_process: %s\n", dlerror());
    return 2;
  }
  const gsc_plugin_v1* (*v1)(void) =
      (const gsc_plugin_v1* (*)(void))dlsym(lib, "gscheck_plugin_v1");
  const gsc_plugin_v2* (*v2)(void) =
      (const gsc_plugin_v2* (*)(void))dlsym(lib, "gscheck_plugin_v2");
  int32_t (*run)(const gsc_call*, gsc_result*) = NULL;
  gsc_result result;
  memset(&result, 0, sizeof result);
  if (v2) {
    const gsc_plugin_v2* p = v2();
    if (p->init && p->init(&result) != GSC_OK) {
      fprintf(stderr, "call_in_process: init() failed: %s\n", result.message);
      return 1;
    }
    run = p->run;
  } else if (v1) {
    run = v1()->run;
  } else {
    fprintf(stderr, "call_in_process: %s exports no gscheck_plugin_v1/v2\n", argv[1]);
    return 2;
  }
  const int tables = sets > 0 ? sets : 1;
  float* params = malloc((size_t)(table * width * tables) * sizeof(float));
  int32_t* indices = malloc((size_t)rows * sizeof(int32_t));
  g_out_bytes = (size_t)(rows * width) * sizeof(float);
  g_out = malloc(g_out_bytes);
  double* took = malloc((size_t)calls * sizeof(double));
  if (!params || !indices || !g_out || !took) {
    fprintf(stderr, "call_in_process: out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < table * width * tables; ++i) params[i] = (float)i;
  uint64_t x = 1;
  draw_indices(indices, rows, table, &x);
  memset(g_out, 0x55, g_out_bytes);
  const int64_t params_dims[2] = {table, width}, indices_dims[2] = {rows, 1};
  gsc_tensor p = {GSC_FLOAT32, 2, params_dims, params};
  const gsc_tensor ix = {GSC_INT32, 2, indices_dims, indices};
  gsc_call call;
  memset(&call, 0, sizeof call);
  call.op = GSC_GATHER_ND;
  call.params = &p;
  call.indices = &ix;
  call.bad_indices_policy = "";
  call.alloc_output = alloc_output;
  call.max_bytes = (int64_t)g_out_bytes;
  call.deadline_ns = INT64_MAX;
  for (int i = 0; i < calls; ++i) {
    if (sets > 0) { /* the next table, fresh indices */
      p.data = params + (size_t)(i % sets) * (size_t)(table * width);
      draw_indices(indices, rows, table, &x);
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    const int32_t code = run(&call, &result);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (code != GSC_OK) {
      fprintf(stderr, "call_in_process: run() answered %d: %s\n", code, result.message);
      return 1;
    }
    took[i] = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
  }
  qsort(took, (size_t)calls, sizeof(double), by_value);
  printf("median_s %.9f min_s %.9f calls %d\n", took[calls / 2], took[0], calls);
  return 0;
}
