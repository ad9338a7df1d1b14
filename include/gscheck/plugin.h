/* gscheck vendor plugin ABI, version 1.
 *
 * A vendor builds its gather/scatter kernels as a shared library that exports one C function,
 * gscheck_plugin_v1(), returning a static description of the contract it claims and a run()
 * entry point. gscheck loads it with dlopen and calls run() in a forked worker process, so a
 * crash or hang in the plugin fails only that case. No C++ type or exception crosses this ABI.
 *
 *   gscheck run --backend plugin:./libvendor.so
 *
 * Enumerations are plain integers; their values never change within an ABI version. */
#ifndef GSCHECK_PLUGIN_H_
#define GSCHECK_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GSCHECK_PLUGIN_ABI_VERSION 1

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

/* Device semantics (see the spec): what bad indices and duplicates do. */
enum gsc_semantics { GSC_TF_CPU = 0, GSC_TF_GPU = 1 };

/* Result codes of run(). */
enum gsc_code {
  GSC_OK = 0,
  GSC_INVALID_ARGUMENT = 1, /* a validation check failed */
  GSC_BAD_INDEX = 2,        /* an index is out of range (tf-cpu semantics) */
  GSC_UNSUPPORTED = 3,      /* TensorFlow has no kernel for this dtype */
  GSC_UNIMPLEMENTED = 4,    /* the plugin does not implement this case */
  GSC_INTERNAL = 5,         /* the plugin failed */
  GSC_RESOURCE_EXHAUSTED = 6
};

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

/* Allocates the output tensor inside gscheck (poisoned, with guard bytes around it). Returns
 * NULL if the shape is refused (too large); the plugin then returns GSC_RESOURCE_EXHAUSTED.
 * For GSC_STRING outputs the buffer is an array of gsc_string whose data the plugin must point
 * at memory that stays valid until run() returns. */
typedef void* (*gsc_alloc_output_fn)(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims);

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
} gsc_call;

/* What run() reports besides its return code: a message for errors. */
typedef struct gsc_result {
  char message[1024];
} gsc_result;

/* The contract a plugin declares; gscheck grades it against exactly this. */
typedef struct gsc_plugin_v1 {
  uint32_t abi_version;  /* GSCHECK_PLUGIN_ABI_VERSION */
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

/* The one symbol a plugin exports. */
const gsc_plugin_v1* gscheck_plugin_v1(void);

/* API level (optional). Calls are TensorFlow Python API calls (tf.gather: axis NULL is
 * axis=None, a scalar axis 0 drops batch_dims; tf.gather_nd: batch_dims is Python's lowering).
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
