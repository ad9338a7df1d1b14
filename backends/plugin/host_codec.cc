#include "backends/plugin/host_codec.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "core/redzone.h"
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
  if (t.rank()) std::memcpy(base + at, t.shape().dims().data(), 8 * t.rank());
  at = align64(at + 8 * t.rank());
  wt.data_offset = at;
  if (t.dtype() == DType::kString) {
    const auto& strs = t.strings();
    wt.data_bytes = w::kStringEntryBytes * strs.size();
    uint64_t bytes_at = at + wt.data_bytes;
    for (std::size_t i = 0; i < strs.size(); ++i) {
      const uint64_t e[2] = {bytes_at, strs[i].size()};
      std::memcpy(base + at + w::kStringEntryBytes * i, e, sizeof e);
      if (!strs[i].empty()) std::memcpy(base + bytes_at, strs[i].data(), strs[i].size());
      bytes_at += strs[i].size();
    }
    return align64(bytes_at);
  }
  wt.data_bytes = t.byte_size();
  if (t.byte_size()) std::memcpy(base + at, t.data(), t.byte_size());
  return align64(at + t.byte_size());
}

// Where the guards around an output were changed, in words, or "": `map` is "out" from 0 at
// layout `l`. The guard pages are zero (the worker zeroes them before the call) and the
// guard bytes kGuardByte, unless something wrote them however it got at them (an mprotect()ed
// guard page, a mapping of its own).
std::string changed_guard(const unsigned char* map, const w::OutputLayout& l, uint64_t payload,
                          uint64_t page) {
  auto zero = [](const unsigned char* p, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i)
      if (p[i]) return i;
    return n;
  };
  if (const uint64_t i = zero(map, page); i < page)
    return "plugin wrote the guard page before its output buffer (byte " +
           std::to_string(page - i) + " before the buffer's guard bytes)";
  const unsigned char* region = map + l.region_offset;
  const uint64_t head = l.payload_offset - l.region_offset;
  if (const uint64_t i = last_changed_guard_byte(region, head); i < head)
    return "plugin wrote before its output buffer (guard byte " + std::to_string(head - i) +
           " before the start)";
  const unsigned char* end = map + l.payload_offset + payload;
  if (const uint64_t i = first_changed_guard_byte(end, l.tail_bytes); i < l.tail_bytes)
    return "plugin wrote past the end of its output buffer (guard byte " + std::to_string(i) +
           " after the end)";
  if (const uint64_t i = zero(end + l.tail_bytes, page); i < page)
    return "plugin wrote past the end of its output buffer (byte " +
           std::to_string(l.tail_bytes + i) + " after the end, in the guard page)";
  return "";
}

// Copies the output at layout `l` of "out" (`size` bytes) into `out`, after checking its
// guards; for strings, the table and bytes at [strings_at, strings_at + strings_n).
Decoded copy_output(int out_mem, uint64_t size, const w::OutputLayout& l, uint64_t payload,
                    uint64_t strings_at, uint64_t strings_n, Tensor out) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const bool strings = out.dtype() == DType::kString;
  const uint64_t map_bytes = strings ? strings_at + strings_n : l.map_bytes;
  if (map_bytes > size)
    return fail("plugin worker sent a malformed result (output out of bounds)", true);
  void* m = ::mmap(nullptr, map_bytes, PROT_READ, MAP_SHARED, out_mem, 0);
  if (m == MAP_FAILED)
    return fail(std::string("cannot map the output: ") + std::strerror(errno), false);
  const auto* base = static_cast<const unsigned char*>(m);
  std::string bad = changed_guard(base, l, payload, page);
  bool restart = !bad.empty();
  if (bad.empty() && !strings) {
    if (payload) std::memcpy(out.data(), base + l.payload_offset, payload);
  } else if (bad.empty()) {
    const unsigned char* table = base + strings_at;
    const uint64_t bytes_at = strings_at + w::kStringEntryBytes * out.strings().size();
    for (std::size_t i = 0; i < out.strings().size(); ++i) {
      uint64_t e[2];
      std::memcpy(e, table + w::kStringEntryBytes * i, sizeof e);
      if (e[0] < bytes_at || !w::inside(e[0], e[1], map_bytes)) {
        bad = "plugin worker sent a malformed string output";
        restart = true;
        break;
      }
      out.strings()[i].assign(reinterpret_cast<const char*>(base + e[0]), e[1]);
    }
  }
  ::munmap(m, map_bytes);
  if (!bad.empty()) return fail(std::move(bad), restart);
  return Decoded{std::move(out), false};
}

}  // namespace

uint64_t input_bytes(const Case& c) {
  uint64_t bytes = 0;
  for (const auto* t : {&c.params, &c.indices, &c.updates, &c.tensor, &c.shape, &c.axis})
    if (*t) bytes += (*t)->dtype() == DType::kString ? 0 : (*t)->byte_size();
  return bytes;
}

WritableInputs::~WritableInputs() {
  if (base) ::munmap(base, bytes);
}

std::string write_inputs(const Case& c, int64_t max_output_bytes, int& fd, uint64_t& total,
                         WritableInputs* keep) {
  const std::optional<Tensor>* inputs[w::kInputs] = {&c.params, &c.indices, &c.updates,
                                                     &c.tensor, &c.shape,   &c.axis};
  total = align64(sizeof(w::WireCall));
  const uint64_t policy_at = total;
  total = align64(total + c.bad_indices_policy.size());
  for (const auto* t : inputs)
    if (*t) total = laid_out(**t, total);
  fd = ::memfd_create("gscheck-in", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return std::string("cannot make the input memory: ") + std::strerror(errno);
  if (::ftruncate(fd, static_cast<off_t>(total)) != 0)
    return std::string("cannot size the input memory: ") + std::strerror(errno);
  void* m = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return std::string("cannot map the input memory: ") + std::strerror(errno);
  auto* base = static_cast<unsigned char*>(m);
  w::WireCall wc{};
  wc.magic = w::kMagic;
  wc.op = static_cast<int32_t>(c.op);
  wc.semantics = static_cast<int32_t>(c.semantics);
  wc.batch_dims = c.batch_dims;
  wc.max_bytes = max_output_bytes;
  wc.policy_offset = policy_at;
  wc.policy_size = c.bad_indices_policy.size();
  if (!c.bad_indices_policy.empty())
    std::memcpy(base + policy_at, c.bad_indices_policy.data(), c.bad_indices_policy.size());
  uint64_t at = align64(policy_at + c.bad_indices_policy.size());
  for (int k = 0; k < w::kInputs; ++k)
    if (*inputs[k]) at = put_tensor(base, at, **inputs[k], wc.inputs[k]);
  std::memcpy(base, &wc, sizeof wc);
  if (keep) {
    // F_SEAL_FUTURE_WRITE refuses every later writable mapping and write(), and mprotect() to
    // writable of a read-only one, but leaves this mapping writable (Linux 5.1).
    if (::fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
        0) {
      ::munmap(m, total);
      return std::string("cannot seal the input memory: ") + std::strerror(errno);
    }
    keep->base = base;
    keep->bytes = total;
    return "";
  }
  ::munmap(m, total);  // F_SEAL_WRITE needs no writable mapping left
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
    return std::string("cannot seal the input memory: ") + std::strerror(errno);
  return "";
}

std::string rewrite_inputs(const Case& c, const WritableInputs& in) {
  if (!in.base || in.bytes < sizeof(w::WireCall)) return "the inputs were not kept writable";
  w::WireCall wc;
  std::memcpy(&wc, in.base, sizeof wc);
  const std::pair<const std::optional<Tensor>*, int> rewritten[] = {{&c.indices, 1},
                                                                    {&c.updates, 2}};
  for (const auto& [t, k] : rewritten) {
    const w::WireTensor& wt = wc.inputs[k];
    const char* name = k == 1 ? "indices" : "updates";
    if (!*t && !wt.present) continue;
    if (!*t || !wt.present || (*t)->dtype() == DType::kString ||
        wt.dtype != static_cast<int32_t>((*t)->dtype()) || wt.rank != (*t)->rank() ||
        wt.data_bytes != (*t)->byte_size() || wt.data_offset > in.bytes ||
        wt.data_bytes > in.bytes - wt.data_offset ||
        ((*t)->rank() &&
         std::memcmp(in.base + wt.dims_offset, (*t)->shape().dims().data(), 8 * (*t)->rank())))
      return std::string("the case's ") + name + " are not of the shape and dtype laid out";
    if (wt.data_bytes) std::memcpy(in.base + wt.data_offset, (*t)->data(), wt.data_bytes);
  }
  return "";
}

Decoded read_result(const std::string& payload, const std::string& fault, int out_mem,
                    int64_t max_bytes, const LogTail& log) {
  w::WireResult r{};
  if (payload.size() < sizeof r) return fail("plugin worker sent a malformed result", true);
  std::memcpy(&r, payload.data(), sizeof r);
  const uint64_t dims_bytes = r.has_output ? 8ull * static_cast<uint32_t>(r.rank) : 0;
  if ((r.has_output && (r.rank < 0 || r.rank > kMaxRank || r.dtype < 0 || r.dtype > GSC_STRING)) ||
      r.message_size > payload.size() || payload.size() != sizeof r + dims_bytes + r.message_size)
    return fail("plugin worker sent a malformed result", true);
  const std::string message = payload.substr(sizeof r + dims_bytes);
  const auto ending = static_cast<w::Ending>(r.ending);
  if (ending != w::Ending::kReturned) {
    Decoded d = fail(sanitize(message) + (fault.empty() ? "" : ": " + fault) + log.tail(),
                     ending == w::Ending::kFailedRestart);
    if (ending == w::Ending::kCrashed) {
      Error e = d.outcome.error();
      e.unsafe = true;
      d.outcome = std::move(e);
    }
    return d;
  }
  if (r.code != GSC_OK) return Decoded{code_to_outcome(r.code, message), false};
  if (!r.has_output) return fail("plugin returned OK without an output", false);
  std::vector<int64_t> dims(static_cast<std::size_t>(r.rank));
  if (dims_bytes) std::memcpy(dims.data(), payload.data() + sizeof r, dims_bytes);
  for (int64_t d : dims)
    if (d < 0) return fail("plugin worker sent a malformed result", true);
  const auto dtype = static_cast<DType>(r.dtype);
  const bool strings = dtype == DType::kString;
  // The claimed shape against the call's budget before anything is allocated or mapped: the
  // frame may be forged, and "out" grown by the plugin.
  Shape shape(std::move(dims));
  const auto count = shape.num_elements();
  const uint64_t elem = strings ? w::kStringEntryBytes : dtype_size(dtype);
  const auto budget = static_cast<uint64_t>(std::max<int64_t>(max_bytes, 0));
  if (!count || static_cast<uint64_t>(*count) > budget / elem)
    return fail("plugin worker sent a malformed result (an output of " + shape.to_string() +
                    " exceeds the byte budget of " + std::to_string(budget) + ")",
                true);
  const uint64_t payload_bytes = static_cast<uint64_t>(*count) * elem;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const w::OutputLayout l = w::output_layout(payload_bytes, page);
  const bool where_expected =
      strings ? r.strings_offset == l.map_bytes && r.strings_bytes >= payload_bytes &&
                    r.strings_bytes - payload_bytes <= budget
              : r.payload_offset == l.payload_offset && r.payload_bytes == payload_bytes;
  struct stat st {};
  if (::fstat(out_mem, &st) != 0) return fail("cannot stat the output memory", false);
  if (!where_expected)
    return fail("plugin worker sent a malformed result (output out of bounds)", true);
  auto out = Tensor::uninitialized(dtype, std::move(shape), INT64_MAX);
  if (!out.ok()) return Decoded{out.error(), false};
  return copy_output(out_mem, static_cast<uint64_t>(st.st_size), l, payload_bytes, r.strings_offset,
                     r.strings_bytes, std::move(*out));
}

void release_pages(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0)
    ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size);
}

}  // namespace gscheck::plugin
