// TensorFlow's own CPU kernels as a gscheck plugin: every call runs the raw kernel (GatherV2,
// GatherNd, ScatterNd, TensorScatter*) through TensorFlow's eager C API (TFE_Execute), from the
// libtensorflow_cc.so.2 inside the pinned tensorflow-cpu wheel. It declares the kernel API level
// (gscheck_plugin_api), tf-cpu semantics, every dtype (strings too) and TensorFlow's messages.
// See docs/vendor.md ("TensorFlow plugin"). No C++ exception leaves this file.
#include <tensorflow/c/c_api.h>
#include <tensorflow/c/eager/c_api.h>
#include <tensorflow/c/tf_tstring.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "gscheck/plugin.h"

namespace {

// gsc_dtype order -> TensorFlow's DataType.
constexpr TF_DataType kTfDtype[] = {
    TF_BOOL,   TF_INT8, TF_INT16,    TF_INT32, TF_INT64,  TF_UINT8,     TF_UINT16,     TF_UINT32,
    TF_UINT64, TF_HALF, TF_BFLOAT16, TF_FLOAT, TF_DOUBLE, TF_COMPLEX64, TF_COMPLEX128, TF_STRING};
constexpr int kDtypes = static_cast<int>(sizeof kTfDtype / sizeof kTfDtype[0]);

int gsc_dtype_of(TF_DataType t) {
  for (int i = 0; i < kDtypes; ++i)
    if (kTfDtype[i] == t) return i;
  return -1;
}

struct StatusDeleter {
  void operator()(TF_Status* s) const { TF_DeleteStatus(s); }
};
struct TensorDeleter {
  void operator()(TF_Tensor* t) const { TF_DeleteTensor(t); }
};
struct HandleDeleter {
  void operator()(TFE_TensorHandle* h) const { TFE_DeleteTensorHandle(h); }
};
struct OpDeleter {
  void operator()(TFE_Op* op) const { TFE_DeleteOp(op); }
};
using Status = std::unique_ptr<TF_Status, StatusDeleter>;
using TensorPtr = std::unique_ptr<TF_Tensor, TensorDeleter>;
using Handle = std::unique_ptr<TFE_TensorHandle, HandleDeleter>;

TFE_Context* g_context = nullptr;
std::string g_context_error;
// String output bytes stay valid until the next run(): ABI v1 reads them after run() returns.
std::vector<std::string> g_strings;

// Threads of TensorFlow's pools (intra- and inter-op). gscheck's ABI v1 runs each call in a
// child forked from the process that created the context, where pool threads do not exist, so
// the default is 1 (work runs inline); GSCHECK_TF_THREADS=0 asks for TensorFlow's defaults.
int thread_count() {
  const char* v = std::getenv("GSCHECK_TF_THREADS");
  if (!v || !*v) return 1;
  return std::atoi(v);
}

// A ConfigProto with intra_op_parallelism_threads (field 2) and inter_op_parallelism_threads
// (field 5) set: two varints, written by hand to need no protobuf headers.
std::string config_proto(int threads) {
  std::string p;
  if (threads <= 0) return p;
  for (char field : {char(0x10), char(0x28)}) {
    p += field;
    for (uint32_t v = static_cast<uint32_t>(threads);; v >>= 7) {
      if (v < 0x80) {
        p += static_cast<char>(v);
        break;
      }
      p += static_cast<char>((v & 0x7f) | 0x80);
    }
  }
  return p;
}

bool make_context() {
  if (g_context) return true;
  Status s(TF_NewStatus());
  TFE_ContextOptions* opts = TFE_NewContextOptions();
  const std::string config = config_proto(thread_count());
  TFE_ContextOptionsSetConfig(opts, config.data(), config.size(), s.get());
  if (TF_GetCode(s.get()) == TF_OK) g_context = TFE_NewContext(opts, s.get());
  TFE_DeleteContextOptions(opts);
  if (TF_GetCode(s.get()) != TF_OK) {
    g_context = nullptr;
    g_context_error =
        std::string("cannot create a TensorFlow eager context: ") + TF_Message(s.get());
    return false;
  }
  return true;
}

int64_t product(const gsc_tensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

std::size_t element_size(int32_t dtype) {
  static const std::size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, 0};
  return sizes[dtype];
}

// The input as a TensorFlow tensor (copied: TensorFlow owns what it is given).
TensorPtr to_tf(const gsc_tensor& t) {
  const int64_t n = product(t);
  const TF_DataType dt = kTfDtype[t.dtype];
  if (t.dtype == GSC_STRING) {
    TensorPtr out(
        TF_AllocateTensor(dt, t.dims, t.rank, static_cast<size_t>(n) * sizeof(TF_TString)));
    auto* dst = static_cast<TF_TString*>(TF_TensorData(out.get()));
    const auto* src = static_cast<const gsc_string*>(t.data);
    for (int64_t i = 0; i < n; ++i) {
      TF_StringInit(&dst[i]);
      TF_StringCopy(&dst[i], src[i].data, static_cast<size_t>(src[i].size));
    }
    return out;
  }
  const std::size_t bytes = static_cast<std::size_t>(n) * element_size(t.dtype);
  TensorPtr out(TF_AllocateTensor(dt, t.dims, t.rank, bytes));
  if (bytes) std::memcpy(TF_TensorData(out.get()), t.data, bytes);
  return out;
}

// TensorFlow's text without what eager execution adds around the kernel's message: the
// "{{function_node ...}} " prefix, " [Op:X]" and ", node name: X" suffixes (as
// tools/tf_crosscheck.py cleans them, so both grade the same text).
std::string clean_message(std::string m) {
  static const std::regex prefix(R"(^\{\{function_node [^}]*\}\}\s*)");
  static const std::regex op_suffix(R"( \[Op:[A-Za-z0-9_]+\]( name: .*)?$)");
  static const std::regex node_suffix(R"(, node name: [A-Za-z0-9_/]+$)");
  m = std::regex_replace(m, prefix, "");
  m = std::regex_replace(m, op_suffix, "");
  m = std::regex_replace(m, node_suffix, "");
  return m;
}

int32_t fail(gsc_result* result, int32_t code, const std::string& message) {
  std::snprintf(result->message, sizeof result->message, "%s", message.c_str());
  return code;
}

// TensorFlow's status as a gscheck outcome class (the same mapping as tools/tf_crosscheck.py).
int32_t tf_error(TF_Status* s, gsc_result* result) {
  const std::string text = clean_message(TF_Message(s));
  switch (TF_GetCode(s)) {
    case TF_INVALID_ARGUMENT:
      if (text.find("is not in the list of allowed values") != std::string::npos)
        return fail(result, GSC_UNSUPPORTED, text);
      if (text.find("is not in [") != std::string::npos ||
          text.find("does not index into") != std::string::npos)
        return fail(result, GSC_BAD_INDEX, text);
      return fail(result, GSC_INVALID_ARGUMENT, text);
    case TF_NOT_FOUND:
    case TF_UNIMPLEMENTED:  // no kernel registered for this dtype / attribute value
      return fail(result, GSC_UNSUPPORTED, text.substr(0, text.find('\n')));
    case TF_RESOURCE_EXHAUSTED:
      return fail(result, GSC_RESOURCE_EXHAUSTED, text);
    default:
      return fail(result, GSC_INTERNAL,
                  "TensorFlow status " + std::to_string(TF_GetCode(s)) + ": " + text);
  }
}

const char* kernel_of(int32_t op) {
  static const char* names[] = {
      "GatherV2",         "GatherNd",         "ScatterNd",        "TensorScatterUpdate",
      "TensorScatterAdd", "TensorScatterSub", "TensorScatterMin", "TensorScatterMax"};
  return op >= 0 && op < 8 ? names[op] : nullptr;
}

int32_t run_call(const gsc_call* call, gsc_result* result) {
  if (call->semantics != GSC_TF_CPU)
    return fail(result, GSC_UNIMPLEMENTED, "TensorFlow's CPU kernels follow tf-cpu semantics");
  const char* kernel = kernel_of(call->op);
  if (!kernel) return fail(result, GSC_UNIMPLEMENTED, "unknown op");
  if (call->op == GSC_GATHER && !call->axis)
    return fail(result, GSC_UNIMPLEMENTED, "GatherV2 needs its axis input (axis=None is Python's)");
  if (call->op == GSC_GATHER_ND && call->batch_dims != 0)
    return fail(result, GSC_UNIMPLEMENTED, "GatherNd has no batch_dims (Python's lowering)");
  if (!make_context()) return fail(result, GSC_INTERNAL, g_context_error);

  Status s(TF_NewStatus());
  std::unique_ptr<TFE_Op, OpDeleter> op(TFE_NewOp(g_context, kernel, s.get()));
  if (TF_GetCode(s.get()) != TF_OK) return tf_error(s.get(), result);
  // Inputs in the kernel's order.
  std::vector<const gsc_tensor*> inputs;
  switch (call->op) {
    case GSC_GATHER:
      inputs = {call->params, call->indices, call->axis};
      break;
    case GSC_GATHER_ND:
      inputs = {call->params, call->indices};
      break;
    case GSC_SCATTER_ND:
      inputs = {call->indices, call->updates, call->shape};
      break;
    default:
      inputs = {call->tensor, call->indices, call->updates};
  }
  std::vector<TensorPtr> tensors;
  std::vector<Handle> handles;
  for (const gsc_tensor* in : inputs) {
    if (!in) return fail(result, GSC_INTERNAL, std::string(kernel) + ": an input is missing");
    tensors.push_back(to_tf(*in));
    handles.emplace_back(TFE_NewTensorHandle(tensors.back().get(), s.get()));
    if (TF_GetCode(s.get()) != TF_OK) return tf_error(s.get(), result);
    // The kernel's type attributes are inferred from the inputs; a dtype outside the op's
    // allowed list fails here with TensorFlow's own text.
    TFE_OpAddInput(op.get(), handles.back().get(), s.get());
    if (TF_GetCode(s.get()) != TF_OK) return tf_error(s.get(), result);
  }
  if (call->op == GSC_GATHER) {
    TFE_OpSetAttrInt(op.get(), "batch_dims", call->batch_dims);
  } else {
    const char* policy = call->bad_indices_policy ? call->bad_indices_policy : "";
    TFE_OpSetAttrString(op.get(), "bad_indices_policy", policy, std::strlen(policy));
  }
  TFE_TensorHandle* raw_out[1] = {nullptr};
  int n_out = 1;
  TFE_Execute(op.get(), raw_out, &n_out, s.get());
  if (TF_GetCode(s.get()) != TF_OK) return tf_error(s.get(), result);
  Handle out(raw_out[0]);
  TensorPtr t(TFE_TensorHandleResolve(out.get(), s.get()));
  if (TF_GetCode(s.get()) != TF_OK) return tf_error(s.get(), result);

  const int dtype = gsc_dtype_of(TF_TensorType(t.get()));
  if (dtype < 0) return fail(result, GSC_INTERNAL, "TensorFlow returned an unknown dtype");
  const int rank = TF_NumDims(t.get());
  std::vector<int64_t> dims(static_cast<std::size_t>(rank));
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[static_cast<std::size_t>(i)] = TF_Dim(t.get(), i);
  void* dst = call->alloc_output(call->alloc_ctx, dtype, rank, dims.data());
  if (!dst) return fail(result, GSC_RESOURCE_EXHAUSTED, "gscheck refused the output's size");
  if (dtype == GSC_STRING) {
    const auto* src = static_cast<const TF_TString*>(TF_TensorData(t.get()));
    g_strings.assign(static_cast<std::size_t>(n), std::string());
    auto* o = static_cast<gsc_string*>(dst);
    for (int64_t i = 0; i < n; ++i) {
      std::string& keep = g_strings[static_cast<std::size_t>(i)];
      keep.assign(TF_StringGetDataPointer(&src[i]), TF_StringGetSize(&src[i]));
      o[i].data = keep.data();
      o[i].size = static_cast<int64_t>(keep.size());
    }
  } else if (n > 0) {
    std::memcpy(dst, TF_TensorData(t.get()), static_cast<std::size_t>(n) * element_size(dtype));
  }
  return GSC_OK;
}

int32_t run(const gsc_call* call, gsc_result* result) {
  try {
    return run_call(call, result);
  } catch (const std::exception& e) {
    return fail(result, GSC_INTERNAL, std::string("tf plugin: ") + e.what());
  } catch (...) {
    return fail(result, GSC_INTERNAL, "tf plugin: unknown exception");
  }
}

// The contract, shared by both ABI entry points.
const gsc_plugin_v1* describe_v1() {
  static gsc_plugin_v1 plugin = [] {
    gsc_plugin_v1 p{};
    p.abi_version = GSCHECK_PLUGIN_ABI_VERSION;
    p.name = "tensorflow-cpu 2.21 kernels (eager C API)";
    p.ops = (1u << 8) - 1;
    p.dtypes = (1ull << kDtypes) - 1;
    // Every integer type: TensorFlow answers "no kernel" itself for those it does not register.
    p.index_dtypes = (1u << GSC_INT8) | (1u << GSC_INT16) | (1u << GSC_INT32) | (1u << GSC_INT64) |
                     (1u << GSC_UINT8) | (1u << GSC_UINT16) | (1u << GSC_UINT32) |
                     (1u << GSC_UINT64);
    p.semantics = 1u << GSC_TF_CPU;
    p.deterministic = 1;  // CPU scatters apply rows in order
    p.tf_messages = 1;
    p.half_in_float = 0;
    p.run = run;
    return p;
  }();
  return &plugin;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const gsc_plugin_v1* gscheck_plugin_v1(void) {
  // Quiet TensorFlow's start-up banners; a user's own setting wins.
  setenv("TF_CPP_MIN_LOG_LEVEL", "2", 0);
  // One context for the process, made where gscheck loads the plugin, so every forked call
  // inherits it instead of paying ~65 ms to make its own (a failure is reported per call).
  try {
    make_context();
  } catch (...) {
    g_context_error = "cannot create a TensorFlow eager context (exception)";
  }
  return describe_v1();
}

__attribute__((visibility("default"))) int32_t gscheck_plugin_api(void) { return GSC_API_KERNEL; }

#ifdef GSCHECK_PLUGIN_ABI_V2
// ABI v2: a persistent worker calls init() once and run() in the same process, so the context
// is made there with TensorFlow's default thread pools (GSCHECK_TF_THREADS=N to pin them).
static int32_t tf_init(gsc_result* result) {
  try {
    if (!std::getenv("GSCHECK_TF_THREADS")) setenv("GSCHECK_TF_THREADS", "0", 1);
    if (!make_context()) return fail(result, GSC_INTERNAL, g_context_error);
    return GSC_OK;
  } catch (...) {
    return fail(result, GSC_INTERNAL, "tf plugin: exception in init");
  }
}

static void tf_finalize(void) {
  if (g_context) TFE_DeleteContext(g_context);
  g_context = nullptr;
}

__attribute__((visibility("default"))) const gsc_plugin_v2* gscheck_plugin_v2(void) {
  static gsc_plugin_v2 plugin;
  static bool ready = false;
  if (!ready) {
    setenv("TF_CPP_MIN_LOG_LEVEL", "2", 0);
    const gsc_plugin_v1& v1 = *describe_v1();
    plugin.abi_version = GSCHECK_PLUGIN_ABI_V2;
    plugin.name = v1.name;
    plugin.ops = v1.ops;
    plugin.dtypes = v1.dtypes;
    plugin.index_dtypes = v1.index_dtypes;
    plugin.semantics = v1.semantics;
    plugin.deterministic = v1.deterministic;
    plugin.tf_messages = v1.tf_messages;
    plugin.half_in_float = v1.half_in_float;
    plugin.run = v1.run;
    plugin.flags = 0;
    plugin.init = tf_init;
    plugin.finalize = tf_finalize;
    ready = true;
  }
  return &plugin;
}
#endif

}  // extern "C"
