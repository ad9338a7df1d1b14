/* An example device plugin (ABI v2, GSC_DEVICE_POINTERS): gscheck hands it device pointers
 * (cudaMalloc'ed in the worker), as a CUDA vendor library receives them. It stands in for a
 * real kernel by copying the inputs to the host with cudaMemcpy, running the host example's
 * gather_nd (gather_nd_plugin.c), and copying the result into the device output. No build
 * dependency on CUDA: the runtime is loaded in init(), the same one gscheck loads
 * ($GSCHECK_CUDART, else libcudart.so.13, .12, .so).
 *
 *   cc -shared -fPIC -I include examples/plugins/device_gather_nd_plugin.c -ldl -o libdev.so
 *   gscheck run --backend plugin:./libdev.so */
#define GSC_EXAMPLE_EMBEDDED
#include "gather_nd_plugin.c"

#include <dlfcn.h>
#include <stdlib.h>

enum { kHostToDevice = 1, kDeviceToHost = 2 };
static int (*cuda_memcpy)(void*, const void*, size_t, int);
static const char* (*cuda_error)(int);

static int32_t init(gsc_result* result) {
  const char* env = getenv("GSCHECK_CUDART");
  const char* names[] = {env && *env ? env : "libcudart.so.13", "libcudart.so.12", "libcudart.so"};
  void* h = NULL;
  for (int i = 0; i < 3 && !h; ++i) h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
  if (h) cuda_memcpy = (int (*)(void*, const void*, size_t, int))dlsym(h, "cudaMemcpy");
  if (h) cuda_error = (const char* (*)(int))dlsym(h, "cudaGetErrorString");
  if (!cuda_memcpy) return fail(result, GSC_INTERNAL, "no CUDA runtime with cudaMemcpy");
  return GSC_OK;
}

static size_t tensor_bytes(const gsc_tensor* t) {
  return (size_t)product(t->dims, 0, t->rank) * element_size(t->dtype);
}

/* The host copy of a device tensor (dims stay host memory, as gscheck passes them). */
static int to_host(const gsc_tensor* dev, gsc_tensor* host, void** buffer, gsc_result* result) {
  *host = *dev;
  const size_t bytes = tensor_bytes(dev);
  *buffer = malloc(bytes ? bytes : 1);
  if (!*buffer) return fail(result, GSC_RESOURCE_EXHAUSTED, "host copy refused");
  const int e = bytes ? cuda_memcpy(*buffer, dev->data, bytes, kDeviceToHost) : 0;
  if (e) {
    snprintf(result->message, sizeof result->message, "cudaMemcpy to the host: %s",
             cuda_error ? cuda_error(e) : "error");
    return GSC_INTERNAL;
  }
  host->data = *buffer;
  return GSC_OK;
}

/* alloc_output for the host run: allocates the device output too. */
typedef struct {
  const gsc_call* call;
  void* device;
  void* host;
  size_t bytes;
} output_pair;

static void* alloc_pair(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims) {
  output_pair* p = ctx;
  p->device = p->call->alloc_output(p->call->alloc_ctx, dtype, rank, dims);
  if (!p->device) return NULL;
  p->bytes = (size_t)product(dims, 0, rank) * element_size(dtype);
  p->host = malloc(p->bytes ? p->bytes : 1);
  return p->host;
}

static int32_t run_device(const gsc_call* call, gsc_result* result) {
  if (call->op != GSC_GATHER_ND) return run(call, result); /* its own UNIMPLEMENTED */
  gsc_tensor params, indices;
  void* params_buf = NULL;
  void* indices_buf = NULL;
  int32_t code = to_host(call->params, &params, &params_buf, result);
  if (code == GSC_OK) code = to_host(call->indices, &indices, &indices_buf, result);
  output_pair out = {call, NULL, NULL, 0};
  if (code == GSC_OK) {
    gsc_call host = *call;
    host.params = &params;
    host.indices = &indices;
    host.alloc_output = alloc_pair;
    host.alloc_ctx = &out;
    code = run(&host, result);
  }
  if (code == GSC_OK && out.bytes) {
    const int e = cuda_memcpy(out.device, out.host, out.bytes, kHostToDevice);
    if (e) code = fail(result, GSC_INTERNAL, "cudaMemcpy to the device failed");
  }
  free(params_buf);
  free(indices_buf);
  free(out.host);
  return code;
}

const gsc_plugin_v2* gscheck_plugin_v2(void) {
  static const gsc_plugin_v2 plugin = {
      .abi_version = GSCHECK_PLUGIN_ABI_V2,
      .name = "example device gather_nd (C)",
      .ops = 1u << GSC_GATHER_ND,
      .dtypes = (1ull << GSC_STRING) - 1, /* every dtype but strings, which stay on the host */
      .index_dtypes = (1u << GSC_INT32) | (1u << GSC_INT64),
      .semantics = 1u << GSC_TF_GPU,
      .deterministic = 1,
      .run = run_device,
      .flags = GSC_DEVICE_POINTERS,
      .init = init,
  };
  return &plugin;
}
