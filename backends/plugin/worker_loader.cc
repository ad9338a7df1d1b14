#include "backends/plugin/worker_loader.h"

#include <dlfcn.h>

#include <cstring>
#include <exception>

#include "backends/plugin/wire.h"
#include "backends/plugin/worker_io.h"

namespace gscheck::worker {
namespace {

// The contract fields ABI v1 and v2 share; the API level and sandbox bits come later.
template <class Plugin>
WireContract wire_contract(const Plugin& p, uint32_t flags) {
  WireContract c{};
  c.abi_version = p.abi_version;
  c.ops = p.ops;
  c.dtypes = p.dtypes;
  c.index_dtypes = p.index_dtypes;
  c.semantics = p.semantics;
  c.deterministic = p.deterministic;
  c.tf_messages = p.tf_messages;
  c.half_in_float = p.half_in_float;
  c.flags = flags;
  c.api = GSC_API_PYTHON;
  return c;
}

// Reads the entry point's contract into c, state.v2 and state.run; "" or why it is unusable.
std::string read_contract(void* h, const std::string& prefix, WorkerState& state, WireContract& c,
                          const char*& name) {
  using V2 = const gsc_plugin_v2* (*)();
  using V1 = const gsc_plugin_v1* (*)();
  auto v2 = reinterpret_cast<V2>(::dlsym(h, "gscheck_plugin_v2"));
  auto v1 = reinterpret_cast<V1>(::dlsym(h, "gscheck_plugin_v1"));
  if (!v2 && !v1) return prefix + "it exports no gscheck_plugin_v2 or gscheck_plugin_v1 symbol";
  if (v2) {
    const gsc_plugin_v2* p = v2();
    if (!p) return prefix + "gscheck_plugin_v2() returned NULL";
    if (p->abi_version != GSCHECK_PLUGIN_ABI_V2)
      return prefix + "gscheck_plugin_v2() says ABI version " + std::to_string(p->abi_version) +
             ", this gscheck reads 1 (gscheck_plugin_v1) and 2 (gscheck_plugin_v2)";
    if (p->flags & ~GSC_DEVICE_POINTERS)
      return prefix + "its flags hold unknown bits " +
             std::to_string(p->flags & ~GSC_DEVICE_POINTERS);
    state.v2 = p;
    state.run = p->run;
    name = p->name;
    c = wire_contract(*p, p->flags);
  } else {
    const gsc_plugin_v1* p = v1();
    if (!p) return prefix + "gscheck_plugin_v1() returned NULL";
    if (p->abi_version != GSCHECK_PLUGIN_ABI_VERSION)
      return prefix + "it implements ABI version " + std::to_string(p->abi_version) +
             ", this gscheck reads 1 (gscheck_plugin_v1) and 2 (gscheck_plugin_v2)";
    state.run = p->run;
    name = p->name;
    c = wire_contract(*p, 0);
  }
  return "";
}

// The plugin's init(), when it has one; "" or why it failed.
std::string run_init(const gsc_plugin_v2* v2) {
  if (!v2 || !v2->init) return "";
  gsc_result r{};
  int32_t code = GSC_INTERNAL;
  try {
    code = v2->init(&r);
  } catch (const std::exception& e) {
    return std::string("plugin's init() threw a C++ exception: ") + e.what();
  } catch (...) {
    return "plugin's init() threw a C++ exception";
  }
  r.message[sizeof r.message - 1] = '\0';
  if (code != GSC_OK)
    return "plugin's init() failed with code " + std::to_string(code) + ": " + r.message;
  return "";
}

}  // namespace

std::string load(const char* path, WorkerState& state) {
  void* h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return std::string("cannot load plugin ") + path + ": " + ::dlerror();
  const std::string prefix = std::string("plugin ") + path + " is not a gscheck plugin: ";
  WireContract c{};
  const char* name = nullptr;
  if (std::string e = read_contract(h, prefix, state, c, name); !e.empty()) return e;
  if (!state.run) return prefix + "its contract has no run function";
  if (!name) return prefix + "its contract has no name";
  using Api = int32_t (*)();
  if (auto api = reinterpret_cast<Api>(::dlsym(h, "gscheck_plugin_api"))) c.api = api();
  c.sandbox = state.seccomp ? kSandboxSeccomp : 0;
  const std::string n(name, strnlen(name, 256));
  send_frame(Msg::kHello, &c, sizeof c, n.data(), n.size());
  state.device = (c.flags & GSC_DEVICE_POINTERS) != 0;
  if (state.device && state.fork_per_call)
    return "plugin " + n +
           " takes device pointers, which cannot cross fork(): run it without "
           "--isolate call";
  if (state.device) {
    if (std::string e = state.cuda.load(); !e.empty()) return e;
  }
  return run_init(state.v2);
}

}  // namespace gscheck::worker
