// One call's output in the worker: the "out" memfd mapped as guard page | region | guard page,
// the payload inside the region between guard bytes, filled with poison (core/redzone.h); on
// the device, guard | payload | guard. The plugin gets it through alloc_output().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/plugin/wire.h"
#include "backends/plugin/worker_state.h"
#include "gscheck/plugin.h"

namespace gscheck::worker {

// Address space reserved (never committed) on each side of the output's mapping.
inline constexpr uint64_t kReserveBytes = uint64_t{1} << 20;

struct Output {
  explicit Output(const WorkerState& s) : state(&s) {}
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output() { release(); }
  void release();
  unsigned char* payload() { return map + payload_offset; }

  const WorkerState* state;
  int64_t max_bytes = 0;
  uint8_t poison = 0;  // the fill of non-string payloads
  bool called = false, allocated = false;
  // A prepared call's: the mapping of "out" stays for the next call of the same size.
  bool keep_mapping = false;
  int32_t dtype = 0;
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t count = 0;
  uint64_t payload_bytes = 0;
  // The worker's mapping of "out": guard page | region | guard page.
  unsigned char* map = nullptr;
  unsigned char* reserve = nullptr;  // PROT_NONE address space around map
  std::size_t map_bytes = 0;
  uint64_t region_offset = 0, region_bytes = 0, payload_offset = 0;
  void* device = nullptr;  // guard | payload | guard on the device
  // String elements copied by set_string().
  std::vector<std::string> copies;
  std::vector<char> copied;
  int64_t string_bytes = 0;
};

/// The poison for a call's output: for gathers a byte pattern that is not an element of params
/// (an element left unwritten can never equal the right answer), else kFallbackPoison. params
/// is the host copy (null when absent).
uint8_t output_poison(int32_t op, int32_t params_dtype, const uint8_t* params,
                      uint64_t params_bytes);

/// gsc_call::alloc_output; ctx is an Output.
void* alloc_output(void* ctx, int32_t dtype, int32_t rank, const int64_t* dims);
/// gsc_call::set_string; ctx is an Output.
int32_t set_string(void* ctx, int64_t index, const char* data, int64_t size);

/// What finish_output found wrong, if anything.
struct OutputFault {
  /// kWroteOutside: a guard byte changed, a write outside the output (memory safety, a crash);
  /// kUnusable: the output cannot be read (a device copy failed, a string out of its region).
  enum class Kind : unsigned char { kNone, kWroteOutside, kUnusable };
  Kind kind = Kind::kNone;
  std::string why;
};

/// After run(): copies a device output back, checks the guard bytes, and for string outputs
/// copies the strings into "out" after the region (strings_offset/bytes say where).
OutputFault finish_output(Output& o, int32_t code, uint64_t& strings_offset,
                          uint64_t& strings_bytes);

}  // namespace gscheck::worker
