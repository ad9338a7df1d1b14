#include "backends/plugin/worker_output_arena.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "backends/plugin/worker_fault_guard.h"
#include "backends/plugin/worker_io.h"
#include "core/redzone.h"

namespace gscheck::worker {
namespace {

std::size_t element_size(int32_t dtype) {
  static const std::size_t sizes[] = {1, 1, 2, 4, 8, 1, 2,  4,
                                      8, 2, 2, 4, 8, 8, 16, sizeof(gsc_string)};
  return sizes[dtype];
}

// Checks the output's arguments and sizes it; false when the request is refused.
bool size_output(Output* o, int32_t dtype, int32_t rank, const int64_t* dims) {
  if (dtype < 0 || dtype > GSC_STRING || rank < 0 || rank > kMaxRank || (rank > 0 && !dims))
    return false;
  if (o->state->device && dtype == GSC_STRING) return false;
  __int128 count = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) return false;
    count *= dims[i];
    if (count > (__int128{1} << 62)) return false;
  }
  const __int128 bytes = count * static_cast<__int128>(element_size(dtype));
  if (bytes > o->max_bytes) return false;
  o->dtype = dtype;
  o->rank = rank;
  for (int i = 0; i < rank; ++i) o->dims[i] = dims[i];
  o->count = static_cast<int64_t>(count);
  o->payload_bytes = static_cast<uint64_t>(bytes);
  return true;
}

// The mapping of "out" that a prepared call left for the next one of the same size (gscheck
// bench): mapping, populating and unmapping 6.4 MB of output cost about as much as the 64 B x
// 100,000-row gather itself (docs/performance.md "gscheck's cost per call").
struct KeptMapping {
  unsigned char* reserve = nullptr;
  unsigned char* map = nullptr;
  std::size_t map_bytes = 0;
};
KeptMapping g_kept;

void drop_kept_mapping() {
  if (g_kept.reserve) ::munmap(g_kept.reserve, g_kept.map_bytes + 2 * kReserveBytes);
  g_kept = {};
}

// Maps "out" at output_layout() (wire.h) as guard page | region | guard page, inside reserved
// address space (kReserveBytes each side: a write that jumps a guard page still faults, and is
// blamed on the output rather than on whatever happened to be mapped next), and fills the guard
// bytes around the payload.
bool map_output(Output* o) {
  const uint64_t page = o->state->page;
  const OutputLayout l = output_layout(o->payload_bytes, page);
  o->region_bytes = l.region_bytes;
  o->region_offset = l.region_offset;
  o->payload_offset = l.payload_offset;
  o->map_bytes = l.map_bytes;
  const uint64_t tail = l.tail_bytes;
  if (!grow_memfd(kOutMemFd, o->map_bytes)) return false;
  if (o->keep_mapping && g_kept.map && g_kept.map_bytes == o->map_bytes) {
    o->reserve = g_kept.reserve;
    o->map = g_kept.map;
    // The plugin of an earlier call may have unprotected a guard page: protect it again.
    ::mprotect(o->map, page, PROT_READ | PROT_WRITE);
    ::mprotect(o->map + page + o->region_bytes, page, PROT_READ | PROT_WRITE);
  } else {
    drop_kept_mapping();
    void* r = ::mmap(nullptr, o->map_bytes + 2 * kReserveBytes, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return false;
    o->reserve = static_cast<unsigned char*>(r);
    // MAP_POPULATE: the poison is written over every payload page before run() anyway; one
    // populate costs less than a write fault per page (gscheck bench, 2026-12-05: see
    // docs/performance.md "gscheck's cost per call").
    void* m = ::mmap(o->reserve + kReserveBytes, o->map_bytes, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_FIXED | MAP_POPULATE, kOutMemFd, 0);
    if (m == MAP_FAILED) {
      ::munmap(o->reserve, o->map_bytes + 2 * kReserveBytes);
      o->reserve = nullptr;
      return false;
    }
    o->map = static_cast<unsigned char*>(m);
    if (o->keep_mapping) g_kept = {o->reserve, o->map, o->map_bytes};
  }
  // gscheck reads the guard pages as zeros after the call; "out" may hold an earlier call's
  // output there when gscheck kept its pages (a prepared call of gscheck bench).
  std::memset(o->map, 0, page);
  std::memset(o->map + page + o->region_bytes, 0, page);
  ::mprotect(o->map, page, PROT_NONE);
  ::mprotect(o->map + page + o->region_bytes, page, PROT_NONE);
  const auto base = reinterpret_cast<uintptr_t>(o->map);
  set_range(Guarded::kBeforeOutput, base - kReserveBytes, base,
            "memory before the guard page before its output buffer");
  set_range(Guarded::kHeadPage, base, base + page, "the guard page before its output buffer");
  set_range(Guarded::kTailPage, base + page + o->region_bytes, base + o->map_bytes,
            "the guard page after the end of its output buffer");
  set_range(Guarded::kAfterOutput, base + o->map_bytes, base + o->map_bytes + kReserveBytes,
            "memory past the guard page after the end of its output buffer");
  unsigned char* region = o->map + o->region_offset;
  std::memset(region, kGuardByte, o->payload_offset - o->region_offset);
  std::memset(o->payload() + o->payload_bytes, kGuardByte, tail);
  return true;
}

// The device copy of a poisoned payload: guard | payload | guard.
void* device_output(Output* o) {
  const CudaRuntime& cuda = o->state->cuda;
  const std::size_t dev_bytes = o->payload_bytes + 2 * kGuardBytes;
  if (cuda.malloc_fn(&o->device, dev_bytes) != 0) {
    o->device = nullptr;
    o->allocated = false;
    return nullptr;
  }
  auto* d = static_cast<unsigned char*>(o->device);
  cuda.memset_fn(d, kGuardByte, dev_bytes);
  cuda.memset_fn(d + kGuardBytes, o->poison, o->payload_bytes);
  return d + kGuardBytes;
}

// Copies string outputs into "out" after the region: per element {offset, size}, then the
// bytes. Faults meanwhile are blamed on the plugin's string data.
std::string copy_strings(Output& o, uint64_t& strings_offset, uint64_t& strings_bytes) {
  const auto* s = reinterpret_cast<const gsc_string*>(o.payload());
  uint64_t total = 0;
  for (int64_t i = 0; i < o.count; ++i) {
    if (s[i].size < 0 || (s[i].size > 0 && !s[i].data))
      return "plugin left string element " + std::to_string(i) + " unwritten";
    total += static_cast<uint64_t>(s[i].size);
    if (total > static_cast<uint64_t>(o.max_bytes))
      return "plugin's string output exceeds the byte budget of " + std::to_string(o.max_bytes);
  }
  strings_offset = o.map_bytes;
  strings_bytes = kStringEntryBytes * static_cast<uint64_t>(o.count) + total;
  if (strings_bytes == 0) return "";  // no elements: nothing to map
  const std::size_t page = o.state->page;
  const std::size_t map_offset = strings_offset / page * page;
  const std::size_t map_len = strings_offset + strings_bytes - map_offset;
  if (!grow_memfd(kOutMemFd, strings_offset + strings_bytes))
    return std::string("cannot grow the output memory: ") + std::strerror(errno);
  void* m = ::mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, kOutMemFd,
                   static_cast<off_t>(map_offset));
  if (m == MAP_FAILED) return std::string("cannot map the output memory: ") + std::strerror(errno);
  unsigned char* table = static_cast<unsigned char*>(m) + (strings_offset - map_offset);
  uint64_t at = strings_offset + kStringEntryBytes * static_cast<uint64_t>(o.count);
  for (int64_t i = 0; i < o.count; ++i) {
    const uint64_t entry[2] = {at, static_cast<uint64_t>(s[i].size)};
    std::memcpy(table + kStringEntryBytes * i, entry, sizeof entry);
    if (s[i].size > 0)
      std::memcpy(table + (at - strings_offset), s[i].data, static_cast<std::size_t>(s[i].size));
    at += static_cast<uint64_t>(s[i].size);
  }
  ::munmap(m, map_len);
  return "";
}

}  // namespace

void Output::release() {
  if (reserve && reserve != g_kept.reserve) ::munmap(reserve, map_bytes + 2 * kReserveBytes);
  reserve = map = nullptr;
  if (device) state->cuda.free_fn(device);
  device = nullptr;
  set_range(Guarded::kHeadPage, 0, 0, "");
  set_range(Guarded::kTailPage, 0, 0, "");
  set_range(Guarded::kBeforeOutput, 0, 0, "");
  set_range(Guarded::kAfterOutput, 0, 0, "");
}

uint8_t output_poison(int32_t op, int32_t params_dtype, const uint8_t* params,
                      uint64_t params_bytes) {
  if ((op != GSC_GATHER && op != GSC_GATHER_ND) || !params || params_dtype == GSC_STRING)
    return kFallbackPoison;
  const auto p =
      choose_poison(params, params_bytes, static_cast<uint32_t>(element_size(params_dtype)));
  return p.value_or(kFallbackPoison);
}

void* alloc_output(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims) {
  auto* o = static_cast<Output*>(ctx);
  if (o->called) return nullptr;  // one output per call
  o->called = true;
  if (!size_output(o, dtype, rank, dims)) return nullptr;
  if (o->payload_bytes >= kBytesPerSecond) {
    const uint64_t b = o->payload_bytes;
    send_frame(Msg::kAllocated, &b, sizeof b);
  }
  if (!map_output(o)) return nullptr;
  o->allocated = true;
  if (dtype == GSC_STRING) {
    auto* s = reinterpret_cast<gsc_string*>(o->payload());
    for (int64_t i = 0; i < o->count; ++i) s[i] = gsc_string{nullptr, -1};  // -1: unwritten
    try {
      o->copies.resize(static_cast<std::size_t>(o->count));
      o->copied.assign(static_cast<std::size_t>(o->count), 0);
    } catch (const std::exception&) {
      return nullptr;
    }
    return o->payload();
  }
  std::memset(o->payload(), o->poison, o->payload_bytes);
  if (!o->state->device) return o->payload();
  return device_output(o);
}

int32_t set_string(void* ctx, int64_t index, const char* data, int64_t size) {
  auto* o = static_cast<Output*>(ctx);
  if (!o->allocated || o->dtype != GSC_STRING || index < 0 || index >= o->count || size < 0 ||
      (size > 0 && !data))
    return GSC_INVALID_ARGUMENT;
  const std::size_t i = static_cast<std::size_t>(index);
  const int64_t before = o->copied[i] ? static_cast<int64_t>(o->copies[i].size()) : 0;
  if (size - before > o->max_bytes - static_cast<int64_t>(o->payload_bytes) - o->string_bytes)
    return GSC_RESOURCE_EXHAUSTED;
  try {
    o->copies[i].assign(data, static_cast<std::size_t>(size));
  } catch (const std::exception&) {
    return GSC_RESOURCE_EXHAUSTED;
  }
  o->string_bytes += size - before;
  o->copied[i] = 1;
  reinterpret_cast<gsc_string*>(o->payload())[i] = gsc_string{o->copies[i].data(), size};
  return GSC_OK;
}

OutputFault finish_output(Output& o, int32_t code, uint64_t& strings_offset,
                          uint64_t& strings_bytes) {
  using K = OutputFault::Kind;
  if (o.device) {
    const CudaRuntime& cuda = o.state->cuda;
    if (int e = cuda.sync_fn(); e != 0) return {K::kUnusable, "after run(): " + cuda.error(e)};
    if (int e = cuda.memcpy_fn(o.payload() - kGuardBytes, o.device,
                               o.payload_bytes + 2 * kGuardBytes, CudaRuntime::kDeviceToHost);
        e != 0)
      return {K::kUnusable, "copying the output from the device: " + cuda.error(e)};
  }
  const unsigned char* region = o.map + o.region_offset;
  const uint64_t head = o.payload_offset - o.region_offset;
  if (const uint64_t i = last_changed_guard_byte(region, head); i < head)
    return {K::kWroteOutside, "plugin wrote before its output buffer (guard byte " +
                                  std::to_string(head - i) + " before the start)"};
  const unsigned char* end = o.payload() + o.payload_bytes;
  const uint64_t tail = static_cast<uint64_t>(region + o.region_bytes - end);
  if (const uint64_t i = first_changed_guard_byte(end, tail); i < tail)
    return {K::kWroteOutside, "plugin wrote past the end of its output buffer (guard byte " +
                                  std::to_string(i) + " after the end)"};
  if (o.dtype != GSC_STRING || code != GSC_OK) return {};
  set_copying_strings(true);
  std::string bad = copy_strings(o, strings_offset, strings_bytes);
  set_copying_strings(false);
  if (bad.empty()) return {};
  return {K::kUnusable, std::move(bad)};
}

}  // namespace gscheck::worker
