#include "backends/plugin/host_codec.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "gscheck/plugin.h"

namespace gscheck::plugin {
namespace {

namespace w = worker;

uint64_t align64(uint64_t v) { return w::round_up(v, w::kAlign); }

Error internal(std::string msg) { return Error{ErrorClass::kInternal, std::move(msg)}; }

Decoded fail(std::string msg, bool restart) { return Decoded{internal(std::move(msg)), restart}; }

Outcome code_to_outcome(int32_t code, const std::string& raw) {
  const std::string msg = sanitize(raw);
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

// The bytes of one input in "in" after those before it, from `at`.
uint64_t laid_out(const Tensor& t, uint64_t at) {
  at = align64(at + 8 * t.rank());
  if (t.dtype() != DType::kString) return align64(at + t.byte_size());
  at += w::kStringEntryBytes * t.strings().size();
  for (const auto& s : t.strings()) at += s.size();
  return align64(at);
}

// Writes one input's dims and data at `at`; returns where the next one starts.
uint64_t put_tensor(unsigned char* base, uint64_t at, const Tensor& t, w::WireTensor& wt) {
  wt.present = 1;
  wt.dtype = static_cast<int32_t>(t.dtype());
  wt.rank = t.rank();
  wt.dims_offset = at;
  std::memcpy(base + at, t.shape().dims().data(), 8 * t.rank());
  at = align64(at + 8 * t.rank());
  wt.data_offset = at;
  if (t.dtype() == DType::kString) {
    const auto& strs = t.strings();
    wt.data_bytes = w::kStringEntryBytes * strs.size();
    uint64_t bytes_at = at + wt.data_bytes;
    for (std::size_t i = 0; i < strs.size(); ++i) {
      const uint64_t e[2] = {bytes_at, strs[i].size()};
      std::memcpy(base + at + w::kStringEntryBytes * i, e, sizeof e);
      std::memcpy(base + bytes_at, strs[i].data(), strs[i].size());
      bytes_at += strs[i].size();
    }
    return align64(bytes_at);
  }
  wt.data_bytes = t.byte_size();
  if (t.byte_size()) std::memcpy(base + at, t.data(), t.byte_size());
  return align64(at + t.byte_size());
}

// Copies the output the result names, [lo, lo + n) of "out" (`size` bytes), into `out`.
Decoded copy_output(int out_mem, uint64_t size, bool strings, uint64_t lo, uint64_t n, Tensor out) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t map_at = lo / page * page;
  void* m =
      ::mmap(nullptr, lo + n - map_at, PROT_READ, MAP_SHARED, out_mem, static_cast<off_t>(map_at));
  if (m == MAP_FAILED)
    return fail(std::string("cannot map the output: ") + std::strerror(errno), false);
  const auto* p = static_cast<const unsigned char*>(m) + (lo - map_at);
  std::string bad;
  if (!strings) {
    std::memcpy(out.data(), p, n);
  } else {
    for (int64_t i = 0; i < out.num_elements() && bad.empty(); ++i) {
      uint64_t e[2];
      std::memcpy(e, p + w::kStringEntryBytes * i, sizeof e);
      if (e[0] < lo || !w::inside(e[0], e[1], size) || e[0] + e[1] > lo + n) {
        bad = "plugin worker sent a malformed string output";
        break;
      }
      out.strings()[static_cast<std::size_t>(i)].assign(
          reinterpret_cast<const char*>(p + (e[0] - lo)), e[1]);
    }
  }
  ::munmap(m, lo + n - map_at);
  release_pages(out_mem, n);
  if (!bad.empty()) return fail(std::move(bad), true);
  return Decoded{std::move(out), false};
}

}  // namespace

uint64_t input_bytes(const Case& c) {
  uint64_t bytes = 0;
  for (const auto* t : {&c.params, &c.indices, &c.updates, &c.tensor, &c.shape, &c.axis})
    if (*t) bytes += (*t)->dtype() == DType::kString ? 0 : (*t)->byte_size();
  return bytes;
}

std::string write_inputs(int in_mem, const Case& c, int64_t max_output_bytes,
                         Clock::time_point deadline, uint64_t& total) {
  const std::optional<Tensor>* inputs[w::kInputs] = {&c.params, &c.indices, &c.updates,
                                                     &c.tensor, &c.shape,   &c.axis};
  total = align64(sizeof(w::WireCall));
  const uint64_t policy_at = total;
  total = align64(total + c.bad_indices_policy.size());
  for (const auto* t : inputs)
    if (*t) total = laid_out(**t, total);
  if (!w::grow_memfd(in_mem, total))
    return std::string("cannot size the input memory: ") + std::strerror(errno);
  void* m = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, in_mem, 0);
  if (m == MAP_FAILED) return std::string("cannot map the input memory: ") + std::strerror(errno);
  auto* base = static_cast<unsigned char*>(m);
  w::WireCall wc{};
  wc.magic = w::kMagic;
  wc.op = static_cast<int32_t>(c.op);
  wc.semantics = static_cast<int32_t>(c.semantics);
  wc.batch_dims = c.batch_dims;
  wc.max_bytes = max_output_bytes;
  wc.deadline_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  wc.policy_offset = policy_at;
  wc.policy_size = c.bad_indices_policy.size();
  std::memcpy(base + policy_at, c.bad_indices_policy.data(), c.bad_indices_policy.size());
  uint64_t at = align64(policy_at + c.bad_indices_policy.size());
  for (int k = 0; k < w::kInputs; ++k)
    if (*inputs[k]) at = put_tensor(base, at, **inputs[k], wc.inputs[k]);
  std::memcpy(base, &wc, sizeof wc);
  ::munmap(m, total);
  return "";
}

Decoded read_result(const std::string& payload, const std::string& fault, int out_mem,
                    const LogTail& log) {
  w::WireResult r{};
  if (payload.size() < sizeof r) return fail("plugin worker sent a malformed result", true);
  std::memcpy(&r, payload.data(), sizeof r);
  const uint64_t dims_bytes = r.has_output ? 8ull * static_cast<uint32_t>(r.rank) : 0;
  if ((r.has_output && (r.rank < 0 || r.rank > kMaxRank || r.dtype < 0 || r.dtype > GSC_STRING)) ||
      payload.size() != sizeof r + dims_bytes + r.message_size)
    return fail("plugin worker sent a malformed result", true);
  const std::string message = payload.substr(sizeof r + dims_bytes);
  const auto ending = static_cast<w::Ending>(r.ending);
  if (ending != w::Ending::kReturned) {
    return fail(sanitize(message) + (fault.empty() ? "" : ": " + fault) + log.tail(),
                ending == w::Ending::kFailedRestart);
  }
  if (r.code != GSC_OK) return Decoded{code_to_outcome(r.code, message), false};
  if (!r.has_output) return fail("plugin returned OK without an output", false);
  std::vector<int64_t> dims(static_cast<std::size_t>(r.rank));
  std::memcpy(dims.data(), payload.data() + sizeof r, dims_bytes);
  for (int64_t d : dims)
    if (d < 0) return fail("plugin worker sent a malformed result", false);
  const auto dtype = static_cast<DType>(r.dtype);
  const bool strings = dtype == DType::kString;
  // Check the claimed shape against the shared memory before allocating anything for it:
  // bytes in the pipe (a plugin may write there) must not make gscheck allocate.
  Shape shape(std::move(dims));
  const auto count = shape.num_elements();
  struct stat st {};
  if (::fstat(out_mem, &st) != 0) return fail("cannot stat the output memory", false);
  const auto size = static_cast<uint64_t>(st.st_size);
  const uint64_t lo = strings ? r.strings_offset : r.payload_offset;
  const uint64_t n = strings ? r.strings_bytes : r.payload_bytes;
  const uint64_t elem = strings ? w::kStringEntryBytes : dtype_size(dtype);
  if (!count || !w::inside(lo, n, size) || static_cast<uint64_t>(*count) > size / elem ||
      (!strings && n != static_cast<uint64_t>(*count) * elem) ||
      (strings && n < static_cast<uint64_t>(*count) * elem))
    return fail("plugin worker sent a malformed result (output out of bounds)", true);
  auto out = Tensor::uninitialized(dtype, std::move(shape), INT64_MAX);
  if (!out.ok()) return Decoded{out.error(), false};
  if (n == 0) return Decoded{std::move(out), false};
  return copy_output(out_mem, size, strings, lo, n, std::move(*out));
}

void release_pages(int fd, uint64_t used) {
  if (used >= (16u << 20)) {
    struct stat st {};
    if (::fstat(fd, &st) == 0)
      ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size);
  }
}

}  // namespace gscheck::plugin
