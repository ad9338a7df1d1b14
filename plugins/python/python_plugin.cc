// gscheck's Python host: a plugin (include/gscheck/plugin.h, ABI v2) that embeds CPython and
// serves the calls of one Python module, so a backend reachable from Python is graded in the same
// contained worker as a C plugin (docs/vendor.md, "Python-hosted backends"). The module and the
// venv come from $GSCHECK_PYTHON_MODULE and $GSCHECK_PYTHON_VENV, which `gscheck run --backend
// python:MODULE --python-venv DIR` sets. Inputs reach Python as read-only numpy views of the
// worker's input memory (no copy); host.py (embedded at build time) does the Python side.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gscheck/plugin.h"
#include "python_host_source.h"  // kHostSource: host.py's text

namespace {

constexpr std::size_t kElementSize[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, 0};

std::string g_name = "python";
std::string g_load_error;  // set when loading failed: init() reports it
int32_t g_api = GSC_API_PYTHON;
PyObject* g_host = nullptr;     // host.Host instance
PyObject* g_invoke = nullptr;   // g_host.invoke
PyObject* g_release = nullptr;  // g_host.release
// Every memoryview handed to Python during the call (new references): checked released here in
// C after host.py's release(), which the module could have replaced (through gc, say).
std::vector<PyObject*> g_views;

// The memoryview, recorded in g_views (NULL stays NULL).
PyObject* recorded(PyObject* mv) {
  if (mv) {
    Py_INCREF(mv);
    g_views.push_back(mv);
  }
  return mv;
}
const gsc_call* g_call = nullptr;  // the call in progress (for gscheck.output())
int32_t g_out_dtype = 0;
gsc_plugin_v2 g_contract{};

// The pending Python exception as one line (host.py's _describe: type, message, last frames).
std::string python_error() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  if (!type) return "unknown Python error";
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  std::string text;
  PyObject* describe = nullptr;
  if (PyObject* mod = PyImport_AddModule("_gscheck_host"))  // borrowed
    describe = PyObject_GetAttrString(mod, "_describe");
  PyObject* s = describe && value ? PyObject_CallOneArg(describe, value) : nullptr;
  if (!s && value) {
    PyErr_Clear();
    s = PyObject_Str(value);
  }
  const char* utf8 = s ? PyUnicode_AsUTF8(s) : nullptr;
  text = utf8 ? utf8 : "unprintable Python error";
  PyErr_Clear();
  Py_XDECREF(s);
  Py_XDECREF(describe);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return text;
}

int64_t elements(int32_t rank, const int64_t* dims) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

// gscheck.output(shape)'s C half: the output buffer as a writable memoryview, None over budget.
PyObject* alloc_output(PyObject*, PyObject* shape) {
  if (!g_call) {
    PyErr_SetString(PyExc_RuntimeError, "no call in progress");
    return nullptr;
  }
  const Py_ssize_t rank = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -1;
  if (rank < 0 || rank > 64) {
    PyErr_SetString(PyExc_ValueError, "gscheck.output(): shape must be a tuple of at most 64");
    return nullptr;
  }
  int64_t dims[64] = {};
  for (Py_ssize_t i = 0; i < rank; ++i) {
    dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    if (dims[i] < 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "negative dimension");
      return nullptr;
    }
  }
  void* p = g_call->alloc_output(g_call->alloc_ctx, g_out_dtype, static_cast<int32_t>(rank), dims);
  if (!p) Py_RETURN_NONE;
  const int64_t bytes =
      elements(static_cast<int32_t>(rank), dims) * static_cast<int64_t>(kElementSize[g_out_dtype]);
  return recorded(PyMemoryView_FromMemory(static_cast<char*>(p), bytes, PyBUF_WRITE));
}

PyMethodDef g_alloc_def = {"alloc_output", alloc_output, METH_O, nullptr};

// Loads host.py, the venv and the module; fills g_contract or g_load_error.
void load_module() {
  const char* spec = std::getenv("GSCHECK_PYTHON_MODULE");
  if (!spec || !*spec) {
    g_load_error = "no module to host: run it as --backend python:MODULE ($GSCHECK_PYTHON_MODULE)";
    return;
  }
  g_name = std::string("python:") + spec;
  // numpy's extension modules expect libpython's symbols in the global scope; the worker
  // loaded this plugin (and so libpython) RTLD_LOCAL.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&Py_InitializeFromConfig), &info) && info.dli_fname)
    ::dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.install_signal_handlers = 0;  // the worker's fault handlers and signals stay its own
  config.buffered_stdio = 0;           // prints reach the stderr tail even if the call crashes
  PyStatus st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    g_load_error = std::string("cannot start Python: ") + (st.err_msg ? st.err_msg : "?");
    return;
  }
  PyObject* mod = PyImport_AddModule("_gscheck_host");  // borrowed
  PyObject* dict = mod ? PyModule_GetDict(mod) : nullptr;
  PyObject* ran = dict ? PyRun_String(kHostSource, Py_file_input, dict, dict) : nullptr;
  PyObject* alloc = ran ? PyCFunction_New(&g_alloc_def, nullptr) : nullptr;
  PyObject* cls = alloc ? PyDict_GetItemString(dict, "Host") : nullptr;  // borrowed
  g_host = cls ? PyObject_CallOneArg(cls, alloc) : nullptr;
  Py_XDECREF(ran);
  Py_XDECREF(alloc);
  if (!g_host) {
    g_load_error = "the Python host failed to start: " + python_error();
    return;
  }
  const char* venv = std::getenv("GSCHECK_PYTHON_VENV");
  // gscheck's helper modules live in python/ beside this plugin (build tree and install alike).
  std::string helpers;
  if (Dl_info self{}; ::dladdr(reinterpret_cast<void*>(&load_module), &self) && self.dli_fname) {
    helpers = self.dli_fname;
    helpers = helpers.substr(0, helpers.rfind('/') + 1) + "python";
  }
  PyObject* c = PyObject_CallMethod(g_host, "load", "sss", venv ? venv : "", spec, helpers.c_str());
  const char* name = nullptr;
  int det = 0, tf = 0, half = 0, api = 0;
  unsigned long long dtypes = 0;
  unsigned ops = 0, index = 0, sem = 0;
  if (!c || !PyArg_ParseTuple(c, "sIKIIpppi", &name, &ops, &dtypes, &index, &sem, &det, &tf, &half,
                              &api)) {
    Py_XDECREF(c);
    g_load_error = std::string("cannot load Python backend ") + spec + ": " + python_error();
    return;
  }
  g_name = name;
  Py_DECREF(c);
  g_invoke = PyObject_GetAttrString(g_host, "invoke");
  g_release = PyObject_GetAttrString(g_host, "release");
  g_contract.ops = ops;
  g_contract.dtypes = dtypes;
  g_contract.index_dtypes = index;
  g_contract.semantics = sem;
  g_contract.deterministic = det;
  g_contract.tf_messages = tf;
  g_contract.half_in_float = half;
  g_api = api;
}

int32_t fail(gsc_result* result, int32_t code, const std::string& message) {
  std::snprintf(result->message, sizeof result->message, "%s", message.c_str());
  return code;
}

// (memoryview, dtype, dims) for an input, or None. A new reference, or NULL on error.
PyObject* input_spec(const gsc_tensor* t) {
  if (!t) Py_RETURN_NONE;
  static char empty = 0;  // an empty tensor may have no data pointer
  const int64_t bytes = elements(t->rank, t->dims) * static_cast<int64_t>(kElementSize[t->dtype]);
  char* data = bytes ? static_cast<char*>(const_cast<void*>(t->data)) : &empty;
  PyObject* mv = recorded(PyMemoryView_FromMemory(data, bytes, PyBUF_READ));
  PyObject* dims = mv ? PyTuple_New(t->rank) : nullptr;
  for (int32_t i = 0; dims && i < t->rank; ++i)
    PyTuple_SET_ITEM(dims, i, PyLong_FromLongLong(t->dims[i]));
  PyObject* spec = dims ? Py_BuildValue("(NiN)", mv, t->dtype, dims) : nullptr;
  if (!spec) {
    Py_XDECREF(mv);
    Py_XDECREF(dims);
  }
  return spec;
}

// Copies the returned C-contiguous array into a fresh output.
int32_t copy_out(const gsc_call* call, PyObject* array, gsc_result* result) {
  Py_buffer view;
  if (PyObject_GetBuffer(array, &view, PyBUF_C_CONTIGUOUS) != 0)
    return fail(result, GSC_INTERNAL, "call()'s result has no buffer: " + python_error());
  int64_t dims[64] = {};
  int32_t code = GSC_OK;
  if (view.ndim > 64) {
    code = fail(result, GSC_INTERNAL, "call() returned an array of rank over 64");
  } else {
    for (int i = 0; i < view.ndim; ++i) dims[i] = view.shape[i];
    void* out = call->alloc_output(call->alloc_ctx, g_out_dtype, view.ndim, dims);
    if (!out)
      code = fail(result, GSC_RESOURCE_EXHAUSTED, "the output is over the call's byte budget");
    else if (view.len)
      std::memcpy(out, view.buf, static_cast<std::size_t>(view.len));
  }
  PyBuffer_Release(&view);
  return code;
}

int32_t output_dtype(const gsc_call* call) {
  if (call->op == GSC_GATHER || call->op == GSC_GATHER_ND) return call->params->dtype;
  if (call->op == GSC_SCATTER_ND) return call->updates->dtype;
  return call->tensor->dtype;
}

int32_t run_call(const gsc_call* call, gsc_result* result) {
  if (!g_invoke) return fail(result, GSC_INTERNAL, g_load_error);
  for (const gsc_tensor* t :
       {call->params, call->indices, call->updates, call->tensor, call->shape, call->axis})
    if (t && t->dtype == GSC_STRING)  // bfloat16: host.py's view, or its refusal
      return fail(result, GSC_UNIMPLEMENTED, "the Python host has no numpy view for strings");
  g_call = call;
  g_out_dtype = output_dtype(call);
  PyObject* policy = PyUnicode_DecodeUTF8(
      call->bad_indices_policy, static_cast<Py_ssize_t>(std::strlen(call->bad_indices_policy)),
      "surrogateescape");
  PyObject* args =
      policy ? Py_BuildValue("(iiLNiNNNNNN)", call->op, call->semantics,
                             static_cast<long long>(call->batch_dims), policy, g_out_dtype,
                             input_spec(call->params), input_spec(call->indices),
                             input_spec(call->updates), input_spec(call->tensor),
                             input_spec(call->shape), input_spec(call->axis))
             : nullptr;
  PyObject* r = args ? PyObject_Call(g_invoke, args, nullptr) : nullptr;
  Py_XDECREF(args);
  int32_t code = GSC_OK;
  if (!r) {
    code = fail(result, GSC_INTERNAL, "the Python host failed: " + python_error());
  } else if (PyTuple_Check(r)) {  // (code, message)
    const char* text = nullptr;
    int c = GSC_INTERNAL;
    if (!PyArg_ParseTuple(r, "is", &c, &text)) text = "malformed outcome";
    code = fail(result, c == GSC_OK ? GSC_INTERNAL : c, text ? text : "");
    PyErr_Clear();
  } else if (r != Py_None) {
    code = copy_out(call, r, result);
  }
  Py_XDECREF(r);
  PyObject* kept = PyObject_CallNoArgs(g_release);
  if (!kept) {
    code = fail(result, GSC_INTERNAL, "the Python host failed: " + python_error());
  } else if (kept != Py_None && code == GSC_OK) {
    const char* text = PyUnicode_AsUTF8(kept);
    code = fail(result, GSC_INTERNAL, text ? text : "kept a view");
  }
  Py_XDECREF(kept);
  PyErr_Clear();
  // Whatever release() did (the module may have replaced it, through gc): every view handed
  // out is released here, and its managed buffer must then have no other view left (numpy's
  // array holds one made from ours). memoryview is a builtin type no module can patch.
  bool still_exported = false;
  for (PyObject* mv : g_views) {
    _PyManagedBufferObject* mbuf = reinterpret_cast<PyMemoryViewObject*>(mv)->mbuf;
    Py_XINCREF(mbuf);
    PyObject* done = PyObject_CallMethod(mv, "release", nullptr);
    if (!done || (mbuf && mbuf->exports > 0)) still_exported = true;
    Py_XDECREF(done);
    PyErr_Clear();
    Py_XDECREF(mbuf);
    Py_DECREF(mv);
  }
  g_views.clear();
  if (still_exported && code == GSC_OK)
    code = fail(result, GSC_INTERNAL,
                "call() kept a reference to an input or output array past its return (a global, "
                "a cache): the arrays are valid only during the call");
  g_call = nullptr;
  return code;
}

int32_t init(gsc_result* result) {
  if (!g_load_error.empty()) return fail(result, GSC_INTERNAL, g_load_error);
  return GSC_OK;
}

void ensure_loaded() {
  static bool loaded = false;
  if (loaded) return;
  loaded = true;
  load_module();
  g_contract.abi_version = GSCHECK_PLUGIN_ABI_V2;
  g_contract.name = g_name.c_str();
  g_contract.run = run_call;
  g_contract.init = init;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const gsc_plugin_v2* gscheck_plugin_v2(void) {
  ensure_loaded();
  return &g_contract;
}

extern "C" __attribute__((visibility("default"))) int32_t gscheck_plugin_api(void) {
  ensure_loaded();
  return g_api;
}
