/* gscheck vendor plugin ABI, version 2 (version 1 plugins still load unchanged).
 *
 * A vendor builds its gather/scatter kernels as a shared library exporting one C function,
 * gscheck_plugin_v2() (or, ABI v1, gscheck_plugin_v1()), that returns a static description of
 * the contract it claims and its entry points. No C++ type or exception crosses this ABI.
 *
 *   gscheck run --backend plugin:./libvendor.so [--jobs N] [--timeout S] [--isolate call]
 *
 * LIFE CYCLE. The library is never loaded into gscheck's own process. gscheck starts one worker
 * process per job (--jobs N, default: the number of cores); each worker dlopen()s the library
 * once, calls gscheck_plugin_v2() once, then init() once, then run() once per call, one call at a
 * time, always from the worker's main thread, and finalize() once before a clean exit. After a
 * failed call (crash, abort, timeout, exit(), an escaping C++ exception, a write outside the
 * output, a child process left running) the worker's whole process group is killed and a fresh
 * worker (load, init) serves the next call; finalize() is not called then. Such a call, and a
 * gather or update output holding an element that is in no input (the poison, a read out of
 * bounds), is UNSAFE: a known-failures entry may describe it, never make it pass. With
 * --isolate call, every run() happens in a child forked from the worker after init(), so no
 * state (and no thread created in init) carries from one call to the next.
 *
 * THREADS. init() may start threads (thread pools, OpenMP, Eigen); they live as long as the
 * worker. Only the thread running run() may call alloc_output() and set_string(), and only
 * until run() returns.
 *
 * MEMORY. Input tensors are read-only (a write faults) and valid only during run(). The output
 * comes from alloc_output(): call it at most once per call; a second call returns NULL, and so
 * does a shape whose bytes exceed call->max_bytes. A plugin given NULL returns
 * GSC_RESOURCE_EXHAUSTED. Only gscheck decides a case is over budget: GSC_RESOURCE_EXHAUSTED
 * for a case whose output the reference computes within max_bytes fails it. Unwritten output bytes
 * read as a poison byte (for gathers one whose pattern is no element of params, else 0xCD); 256 or
 * more guard bytes (0xFD) and an inaccessible page lie on both sides, and a write into either fails
 * the call. After init() the worker's address space is capped (RLIMIT_AS) at what it uses then plus
 * four times max_bytes plus 1 GiB: a runaway allocation fails instead of exhausting the machine
 * (not for GSC_DEVICE_POINTERS plugins: the CUDA driver maps device memory into the address space).
 *
 * FILES AND PRIVILEGES. The worker sees a read-only file system (the whole root), with "/" as
 * its working directory, without capabilities, in a session of its own. Its writable places
 * are a private /dev/shm ($TMPDIR, max(max_bytes, 64 MiB), gone with the worker) and the
 * folders the user names with --worker-writable. The run's case files, known-failures file,
 * report and failed-case folders are hidden from it. It may open no device node but /dev/null,
 * /dev/zero, /dev/full, /dev/random, /dev/urandom and the GPU's (/dev/nvidia*), create no unix
 * socket (socketpair() works) and sees SysV IPC objects of its own only.
 *
 * TIME. call->deadline_ns is when the worker is killed (CLOCK_MONOTONIC, nanoseconds); the
 * default allows 10 s plus 1 s per 64 MiB of inputs and output (--timeout S overrides it).
 *
 * STRINGS. Input gsc_string data are valid during run(). For an output string element, call
 * set_string() (ABI v2): it copies the bytes at once, so they may be freed right after. A
 * plugin that fills the gsc_string elements itself (all ABI v1 plugins) must point them at
 * memory still valid after run() returns, its own or the call's input strings: gscheck copies
 * them right after run() returns, before it releases the inputs or makes the next call.
 *
 * MESSAGES AND OUTPUT STREAMS. result->message is NUL-terminated text; gscheck shows control
 * bytes in it as \xNN. Whatever the worker writes to stdout or stderr goes to a pipe gscheck
 * reads: never to gscheck's own output; the last lines (control bytes escaped) are attached to a
 * failed call's report.
 *
 * DEVICE MEMORY. A plugin setting GSC_DEVICE_POINTERS in flags gets device pointers: gscheck
 * loads the CUDA runtime in the worker at run time (libcudart.so.13, .12 or .so, or the library
 * named by $GSCHECK_CUDART), cudaMalloc()s every non-string input and the output (poisoned, with
 * 256 guard bytes each side), and calls cudaDeviceSynchronize() after run() returns, so work on
 * any stream finishes. String tensors stay in host memory (such plugins are not graded on
 * strings). The worker creates its CUDA context before init() and keeps it across calls; such
 * plugins cannot run with --isolate call (CUDA does not survive fork).
 *
 * PYTHON-LEVEL RULES. Unless the plugin exports gscheck_plugin_api() returning GSC_API_KERNEL
 * (API LEVEL, at the end), a call is a TensorFlow Python API call (tf.gather, tf.gather_nd,
 * tf.scatter_nd, tf.tensor_scatter_nd_*), as the cases in corpus/ are, not a raw kernel call:
 * gather's axis == NULL is axis=None, meaning axis = batch_dims; a scalar axis 0 drops
 * batch_dims (tf.gather then calls GatherV2 without it); gather_nd's batch_dims > 0 is Python's
 * lowering (indices reshaped to [prod(params.shape[:b])] + indices.shape[b:], the batch
 * coordinate prepended to every index row), with Python's checks and messages first.
 * docs/vendor.md has the details.
 *
 * Enumerations are plain integers; their values never change. */
#ifndef GSCHECK_PLUGIN_H_
#define GSCHECK_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GSCHECK_PLUGIN_ABI_VERSION 1 /* what a gsc_plugin_v1 carries, forever */
#define GSCHECK_PLUGIN_ABI_V2 2      /* what a gsc_plugin_v2 carries */

/* Element types, named as TensorFlow names them. */
enum gsc_dtype {
  GSC_BOOL = 0,
  GSC_INT8,
  GSC_INT16,
  GSC_INT32,
  GSC_INT64,
  GSC_UINT8,
  GSC_UINT16,
  GSC_UINT32,
  GSC_UINT64,
  GSC_FLOAT16,
  GSC_BFLOAT16,
  GSC_FLOAT32,
  GSC_FLOAT64,
  GSC_COMPLEX64,
  GSC_COMPLEX128,
  GSC_STRING
};

/* Ops. */
enum gsc_op {
  GSC_GATHER = 0,
  GSC_GATHER_ND,
  GSC_SCATTER_ND,
  GSC_TENSOR_SCATTER_UPDATE,
  GSC_TENSOR_SCATTER_ADD,
  GSC_TENSOR_SCATTER_SUB,
  GSC_TENSOR_SCATTER_MIN,
  GSC_TENSOR_SCATTER_MAX
};

/* Semantics (see the spec and docs/spec_notes.md): what bad indices and duplicates do.
 * GSC_XLA: TensorFlow under jit_compile and jax.lax (gathers clamp each coordinate, scatters drop
 * the row); GSC_JAX: jax.numpy indexing (a negative coordinate wraps once, then GSC_XLA's rule).
 * Any ABI version may claim GSC_XLA and GSC_JAX (added without a new ABI version). */
enum gsc_semantics { GSC_TF_CPU = 0, GSC_TF_GPU = 1, GSC_XLA = 2, GSC_JAX = 3 };

/* Result codes of run() and init(). */
enum gsc_code {
  GSC_OK = 0,
  GSC_INVALID_ARGUMENT = 1, /* a validation check failed */
  GSC_BAD_INDEX = 2,        /* an index is out of range (tf-cpu semantics) */
  GSC_UNSUPPORTED = 3,      /* TensorFlow has no kernel for this dtype */
  GSC_UNIMPLEMENTED = 4,    /* the plugin does not implement this case */
  GSC_INTERNAL = 5,         /* the plugin failed */
  GSC_RESOURCE_EXHAUSTED = 6
};

/* gsc_plugin_v2.flags */
#define GSC_DEVICE_POINTERS 1u /* tensor data (strings excepted) are CUDA device pointers */

/* One string element (dtype GSC_STRING tensors hold arrays of these). */
typedef struct gsc_string {
  const char* data;
  int64_t size;
} gsc_string;

/* A dense row-major tensor. data is little-endian elements, or gsc_string[] for strings. */
typedef struct gsc_tensor {
  int32_t dtype; /* enum gsc_dtype */
  int32_t rank;
  const int64_t* dims;
  const void* data;
} gsc_tensor;

/* The output tensor (see MEMORY): NULL for a second call or a shape over the budget. For
 * GSC_STRING it is a gsc_string array, every element {NULL, -1} (unwritten) until set. */
typedef void* (*gsc_alloc_output_fn)(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims);

/* Copies size bytes into output string element index (see STRINGS). Returns GSC_OK, or
 * GSC_RESOURCE_EXHAUSTED past the byte budget, GSC_INVALID_ARGUMENT for a bad index or size. */
typedef int32_t (*gsc_set_string_fn)(void* ctx, int64_t index, const char* data, int64_t size);

/* One op call. Inputs a given op does not take are NULL. */
typedef struct gsc_call {
  int32_t op;                /* enum gsc_op */
  int32_t semantics;         /* enum gsc_semantics */
  const gsc_tensor* params;  /* gather, gather_nd */
  const gsc_tensor* indices; /* every op */
  const gsc_tensor* updates; /* scatter ops */
  const gsc_tensor* tensor;  /* tensor_scatter_nd_* */
  const gsc_tensor* shape;   /* scatter_nd: the output shape, an integer vector */
  const gsc_tensor* axis;    /* gather: the axis tensor; NULL is Python's axis=None */
  int64_t batch_dims;
  const char* bad_indices_policy; /* "", "DEFAULT", "ERROR", "IGNORE" (or anything: reject it) */
  gsc_alloc_output_fn alloc_output;
  void* alloc_ctx;
  /* ABI v2 (also filled for v1 plugins, which never read past alloc_ctx). */
  int64_t max_bytes;            /* byte budget: the output plus its string bytes */
  int64_t deadline_ns;          /* CLOCK_MONOTONIC time at which the worker is killed */
  gsc_set_string_fn set_string; /* ctx is alloc_ctx */
} gsc_call;

/* What run() and init() report besides their code: a message for errors. */
typedef struct gsc_result {
  char message[1024];
} gsc_result;

/* The contract a plugin declares; gscheck grades it against exactly this. */
typedef struct gsc_plugin_v1 {
  uint32_t abi_version;  /* GSCHECK_PLUGIN_ABI_VERSION (1) */
  const char* name;      /* e.g. "acme-gather 2.3" */
  uint32_t ops;          /* bit (1u << gsc_op) per op implemented */
  uint64_t dtypes;       /* bit (1ull << gsc_dtype) per element dtype implemented */
  uint32_t index_dtypes; /* bit (1u << gsc_dtype) per index dtype (GSC_INT32, GSC_INT64) */
  uint32_t semantics;    /* bit (1u << gsc_semantics) per semantics claimed */
  int32_t deterministic; /* nonzero: identical outputs on every run */
  int32_t tf_messages;   /* nonzero: error messages match TensorFlow's text */
  int32_t half_in_float; /* nonzero: float16/bfloat16 sums accumulate in float32 */
  /* Run one call; return an enum gsc_code, filling result->message on errors. */
  int32_t (*run)(const gsc_call* call, gsc_result* result);
} gsc_plugin_v1;

/* ABI v2: the v1 fields, in the same order, then the life cycle and flags. */
typedef struct gsc_plugin_v2 {
  uint32_t abi_version; /* GSCHECK_PLUGIN_ABI_V2 */
  const char* name;
  uint32_t ops;
  uint64_t dtypes;
  uint32_t index_dtypes;
  uint32_t semantics;
  int32_t deterministic;
  int32_t tf_messages;
  int32_t half_in_float;
  int32_t (*run)(const gsc_call* call, gsc_result* result);
  uint32_t flags; /* GSC_DEVICE_POINTERS or 0 */
  /* Once per worker before the first run(); NULL if nothing to do. Anything but GSC_OK fails
   * the load with result->message. */
  int32_t (*init)(gsc_result* result);
  /* Once before a clean worker exit; NULL if nothing to do. */
  void (*finalize)(void);
} gsc_plugin_v2;

/* The one symbol a plugin exports: gscheck_plugin_v2, or gscheck_plugin_v1 (v1 contract). */
const gsc_plugin_v2* gscheck_plugin_v2(void);
const gsc_plugin_v1* gscheck_plugin_v1(void);

/* API LEVEL (optional, ABI v1 and v2). Calls are TensorFlow Python API calls (tf.gather: axis NULL
 * is axis=None, a scalar axis 0 drops batch_dims; tf.gather_nd: batch_dims is Python's lowering).
 * A plugin implementing the raw kernels instead (GatherV2, GatherNd, ScatterNd, TensorScatter*:
 * axis always given, batch_dims never dropped, gather_nd's batch_dims always 0) also exports
 * gscheck_plugin_api() returning GSC_API_KERNEL; gscheck then grades it on kernel-level cases and
 * on the cases no Python rule touches (docs/vendor.md, "API level"). */
enum gsc_api { GSC_API_PYTHON = 0, GSC_API_KERNEL = 1 };
int32_t gscheck_plugin_api(void);

#ifdef __cplusplus
}
#endif

#endif /* GSCHECK_PLUGIN_H_ */
