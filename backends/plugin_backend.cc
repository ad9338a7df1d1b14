#include "backends/plugin_backend.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "gscheck/plugin.h"

namespace gscheck {
namespace {

// The C enums mirror the C++ ones value for value; a reorder on either side must fail to build.
static_assert(GSC_BOOL == static_cast<int>(DType::kBool));
static_assert(GSC_FLOAT16 == static_cast<int>(DType::kFloat16));
static_assert(GSC_STRING == static_cast<int>(DType::kString));
static_assert(GSC_GATHER == static_cast<int>(Op::kGather));
static_assert(GSC_TENSOR_SCATTER_MAX == static_cast<int>(Op::kTensorScatterMax));
static_assert(GSC_TF_CPU == static_cast<int>(Semantics::kTfCpu));
static_assert(GSC_TF_GPU == static_cast<int>(Semantics::kTfGpu));

constexpr std::size_t kGuardBytes = 64;
constexpr unsigned char kGuardByte = 0xA5;
// Poison for fixed-size outputs: an element the plugin leaves unwritten reads as 0xCDCD...,
// which no self-describing expected value equals, so the comparison names it.
constexpr unsigned char kPoisonByte = 0xCD;

// The output buffer handed to the plugin, with guard bytes on both sides.
struct OutputSlot {
  int64_t max_bytes = 0;
  bool called = false;
  bool allocated = false;
  DType dtype = DType::kFloat32;
  Shape shape;
  std::size_t payload_bytes = 0;
  std::vector<unsigned char> buffer;  // guard | payload | guard
  unsigned char* payload() { return buffer.data() + kGuardBytes; }
};

void* alloc_output(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims) {
  auto* slot = static_cast<OutputSlot*>(ctx);
  if (slot->called || dtype < 0 || dtype > GSC_STRING || rank < 0 || rank > kMaxRank ||
      (rank > 0 && dims == nullptr)) {
    return nullptr;
  }
  slot->called = true;
  slot->dtype = static_cast<DType>(dtype);
  slot->shape = Shape(std::vector<int64_t>(dims, dims + rank));
  auto n = slot->shape.num_elements();
  if (!n) return nullptr;
  const int64_t elem = slot->dtype == DType::kString
                           ? static_cast<int64_t>(sizeof(gsc_string))
                           : static_cast<int64_t>(dtype_size(slot->dtype));
  auto bytes = checked_mul(*n, elem);
  if (!bytes || *bytes > slot->max_bytes) return nullptr;
  slot->payload_bytes = static_cast<std::size_t>(*bytes);
  slot->allocated = true;
  slot->buffer.assign(slot->payload_bytes + 2 * kGuardBytes, kGuardByte);
  if (slot->dtype == DType::kString) {
    auto* s = reinterpret_cast<gsc_string*>(slot->payload());
    for (int64_t i = 0; i < *n; ++i) s[i] = gsc_string{nullptr, -1};  // -1: unwritten
  } else {
    std::memset(slot->payload(), kPoisonByte, slot->payload_bytes);
  }
  return slot->payload();
}

// Keeps the C views of one input tensor alive for the call.
struct InputView {
  std::vector<int64_t> dims;
  std::vector<gsc_string> strings;
  gsc_tensor t{};
  const gsc_tensor* bind(const std::optional<Tensor>& x) {
    if (!x) return nullptr;
    dims = x->shape().dims();
    t.dtype = static_cast<int32_t>(x->dtype());
    t.rank = x->rank();
    t.dims = dims.data();
    if (x->dtype() == DType::kString) {
      strings.clear();
      for (const auto& s : x->strings())
        strings.push_back(gsc_string{s.data(), static_cast<int64_t>(s.size())});
      t.data = strings.data();
    } else {
      t.data = x->data();
    }
    return &t;
  }
};

Error internal(std::string msg) { return Error{ErrorClass::kInternal, std::move(msg)}; }

Outcome code_to_outcome(int32_t code, const gsc_result& result) {
  const std::string msg(result.message, strnlen(result.message, sizeof(result.message)));
  switch (code) {
    case GSC_INVALID_ARGUMENT:
      return invalid_argument(msg);
    case GSC_BAD_INDEX:
      return bad_index(msg);
    case GSC_UNSUPPORTED:
      return Error{ErrorClass::kUnsupported, msg};
    case GSC_UNIMPLEMENTED:
      return Error{ErrorClass::kUnimplemented, msg};
    case GSC_INTERNAL:
      return internal(msg);
    case GSC_RESOURCE_EXHAUSTED:
      return Error{ErrorClass::kResourceExhausted, msg};
    default:
      return internal("plugin returned unknown code " + std::to_string(code));
  }
}

// Calls the plugin in this process and turns what it did into an outcome.
Outcome invoke(const gsc_plugin_v1& plugin, const Case& c, int64_t max_output_bytes) {
  InputView params, indices, updates, tensor, shape, axis;
  OutputSlot slot;
  slot.max_bytes = max_output_bytes;
  gsc_call call{};
  call.op = static_cast<int32_t>(c.op);
  call.semantics = static_cast<int32_t>(c.semantics);
  call.params = params.bind(c.params);
  call.indices = indices.bind(c.indices);
  call.updates = updates.bind(c.updates);
  call.tensor = tensor.bind(c.tensor);
  call.shape = shape.bind(c.shape);
  call.axis = axis.bind(c.axis);
  call.batch_dims = c.batch_dims;
  call.bad_indices_policy = c.bad_indices_policy.c_str();
  call.alloc_output = &alloc_output;
  call.alloc_ctx = &slot;
  gsc_result result{};
  const int32_t code = plugin.run(&call, &result);
  if (code != GSC_OK) return code_to_outcome(code, result);
  if (!slot.called) return internal("plugin returned OK without allocating its output");
  if (!slot.allocated)
    return internal("plugin returned OK although its output allocation was refused");
  for (std::size_t i = 0; i < kGuardBytes; ++i) {
    if (slot.buffer[i] != kGuardByte)
      return internal("plugin wrote before its output buffer (guard byte " +
                      std::to_string(kGuardBytes - i) + " before the start)");
    if (slot.buffer[kGuardBytes + slot.payload_bytes + i] != kGuardByte)
      return internal("plugin wrote past the end of its output buffer (guard byte " +
                      std::to_string(i) + " after the end)");
  }
  auto out = Tensor::zeros(slot.dtype, slot.shape, max_output_bytes);
  if (!out.ok()) return out.error();
  if (slot.dtype == DType::kString) {
    const auto* s = reinterpret_cast<const gsc_string*>(slot.payload());
    for (int64_t i = 0; i < out->num_elements(); ++i) {
      if (s[i].size < 0 || (s[i].size > 0 && s[i].data == nullptr))
        return internal("plugin left string element " + std::to_string(i) + " unwritten");
      out->strings()[static_cast<std::size_t>(i)].assign(s[i].data,
                                                         static_cast<std::size_t>(s[i].size));
    }
  } else if (slot.payload_bytes > 0) {
    std::memcpy(out->data(), slot.payload(), slot.payload_bytes);
  }
  return out;
}

// Outcome <-> bytes, for the trip from the worker process back to the parent.
void put(std::string& b, const void* p, std::size_t n) { b.append(static_cast<const char*>(p), n); }
template <class T>
void put_value(std::string& b, T v) {
  put(b, &v, sizeof v);
}

std::string serialize(const Outcome& o) {
  std::string b;
  put_value<uint8_t>(b, o.ok() ? 1 : 0);
  if (!o.ok()) {
    put_value<uint8_t>(b, static_cast<uint8_t>(o.error().cls));
    put_value<uint64_t>(b, o.error().message.size());
    put(b, o.error().message.data(), o.error().message.size());
    return b;
  }
  const Tensor& t = o.value();
  put_value<uint8_t>(b, static_cast<uint8_t>(t.dtype()));
  put_value<uint32_t>(b, static_cast<uint32_t>(t.rank()));
  for (int64_t d : t.shape().dims()) put_value<int64_t>(b, d);
  if (t.dtype() == DType::kString) {
    for (const auto& s : t.strings()) {
      put_value<uint64_t>(b, s.size());
      put(b, s.data(), s.size());
    }
  } else {
    put(b, t.data(), t.byte_size());
  }
  return b;
}

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  bool get(void* p, std::size_t n) {
    if (b_.size() - pos_ < n) return false;
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  template <class T>
  bool get_value(T& v) {
    return get(&v, sizeof v);
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  const std::string& b_;
  std::size_t pos_ = 0;
};

Outcome deserialize(const std::string& b, int64_t max_output_bytes) {
  const Error corrupt = internal("plugin worker sent a malformed result");
  Reader r(b);
  uint8_t ok = 0;
  if (!r.get_value(ok)) return corrupt;
  if (!ok) {
    uint8_t cls = 0;
    uint64_t len = 0;
    if (!r.get_value(cls) || !r.get_value(len) || len > b.size() ||
        cls > static_cast<uint8_t>(ErrorClass::kParse))
      return corrupt;
    std::string msg(len, '\0');
    if (!r.get(msg.data(), len)) return corrupt;
    return Error{static_cast<ErrorClass>(cls), std::move(msg)};
  }
  uint8_t dtype = 0;
  uint32_t rank = 0;
  if (!r.get_value(dtype) || !r.get_value(rank) || dtype > static_cast<uint8_t>(DType::kString) ||
      rank > static_cast<uint32_t>(kMaxRank))
    return corrupt;
  std::vector<int64_t> dims(rank);
  for (auto& d : dims)
    if (!r.get_value(d)) return corrupt;
  auto t = Tensor::zeros(static_cast<DType>(dtype), Shape(std::move(dims)), max_output_bytes);
  if (!t.ok()) return t.error();
  if (t->dtype() == DType::kString) {
    for (auto& s : t->strings()) {
      uint64_t len = 0;
      if (!r.get_value(len) || len > b.size()) return corrupt;
      s.resize(len);
      if (!r.get(s.data(), len)) return corrupt;
    }
  } else if (t->byte_size() > 0 && !r.get(t->data(), t->byte_size())) {
    return corrupt;
  }
  if (!r.done()) return corrupt;
  return t;
}

bool write_all(int fd, const std::string& b) {
  std::size_t off = 0;
  while (off < b.size()) {
    const ssize_t n = ::write(fd, b.data() + off, b.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// Runs invoke() in a forked child; reads its result through a pipe under a deadline.
Outcome invoke_isolated(const gsc_plugin_v1& plugin, const Case& c, const PluginOptions& opt) {
  int fds[2];
  if (::pipe(fds) != 0) return internal(std::string("pipe failed: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return internal(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    const bool sent = write_all(fds[1], serialize(invoke(plugin, c, opt.max_output_bytes)));
    ::_exit(sent ? 0 : 3);
  }
  ::close(fds[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(opt.timeout_seconds);
  std::string bytes;
  bool timed_out = false;
  char buf[1 << 16];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or died)
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return internal("plugin timed out after " + std::to_string(opt.timeout_seconds) +
                    " s and was killed");
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return internal("plugin crashed with signal " + std::to_string(sig) + " (" +
                    std::string(strsignal(sig)) + ")");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return internal("plugin worker exited with status " + std::to_string(WEXITSTATUS(status)) +
                    " before reporting a result");
  return deserialize(bytes, opt.max_output_bytes);
}

template <class E>
std::vector<E> from_mask(uint64_t mask, int count) {
  std::vector<E> out;
  for (int i = 0; i < count; ++i)
    if (mask & (uint64_t{1} << i)) out.push_back(static_cast<E>(i));
  return out;
}

class PluginBackend final : public Backend {
 public:
  PluginBackend(void* handle, const gsc_plugin_v1* plugin, Capabilities caps, PluginOptions opt)
      : handle_(handle), plugin_(plugin), caps_(std::move(caps)), opt_(opt) {}
  ~PluginBackend() override { ::dlclose(handle_); }
  const Capabilities& capabilities() const override { return caps_; }
  Outcome run(const Case& c) override {
    if (!caps_.supports(c))
      return Error{ErrorClass::kUnimplemented, caps_.name + " does not claim " +
                                                   std::string(op_name(c.op)) +
                                                   " with these "
                                                   "dtypes under " +
                                                   std::string(semantics_name(c.semantics))};
    return opt_.isolate ? invoke_isolated(*plugin_, c, opt_)
                        : invoke(*plugin_, c, opt_.max_output_bytes);
  }

 private:
  void* handle_;
  const gsc_plugin_v1* plugin_;
  Capabilities caps_;
  PluginOptions opt_;
};

}  // namespace

Expected<std::unique_ptr<Backend>> make_plugin_backend(const std::string& path,
                                                       const PluginOptions& options) {
  // A bare file name would make dlopen search the library path; plugins are named by path.
  const std::string where = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = ::dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return parse_error("cannot load plugin " + path + ": " + ::dlerror());
  using Entry = const gsc_plugin_v1* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, "gscheck_plugin_v1"));
  const gsc_plugin_v1* p = entry ? entry() : nullptr;
  std::string problem;
  if (!entry) {
    problem = "it exports no gscheck_plugin_v1 symbol";
  } else if (!p) {
    problem = "gscheck_plugin_v1() returned NULL";
  } else if (p->abi_version != GSCHECK_PLUGIN_ABI_VERSION) {
    problem = "it implements ABI version " + std::to_string(p->abi_version) + ", this gscheck " +
              std::to_string(GSCHECK_PLUGIN_ABI_VERSION);
  } else if (!p->run) {
    problem = "its contract has no run function";
  } else if (!p->name) {
    problem = "its contract has no name";
  }
  if (!problem.empty()) {
    ::dlclose(handle);
    return parse_error("plugin " + path + " is not a gscheck plugin: " + problem);
  }
  Capabilities caps;
  caps.name = "plugin:" + path;
  caps.ops = from_mask<Op>(p->ops, static_cast<int>(std::size(kAllOps)));
  caps.dtypes = from_mask<DType>(p->dtypes, static_cast<int>(std::size(kAllDTypes)));
  caps.index_dtypes = from_mask<DType>(p->index_dtypes, static_cast<int>(std::size(kAllDTypes)));
  caps.semantics = from_mask<Semantics>(p->semantics, 2);
  caps.deterministic = p->deterministic != 0;
  caps.tf_messages = p->tf_messages != 0;
  caps.accumulates_half_in_float = p->half_in_float != 0;
  // The optional API-level hook: kernel-level plugins say so; the rest implement Python's API.
  using ApiEntry = int32_t (*)();
  caps.apis = {Api::kPython};
  if (auto api = reinterpret_cast<ApiEntry>(::dlsym(handle, "gscheck_plugin_api"))) {
    const int32_t level = api();
    if (level != GSC_API_PYTHON && level != GSC_API_KERNEL) {
      ::dlclose(handle);
      return parse_error("plugin " + path + ": gscheck_plugin_api() returned " +
                         std::to_string(level) + " (expected GSC_API_PYTHON or GSC_API_KERNEL)");
    }
    if (level == GSC_API_KERNEL) caps.apis = {Api::kKernel};
  }
  return std::unique_ptr<Backend>(new PluginBackend(handle, p, std::move(caps), options));
}

}  // namespace gscheck
