// The wire format between gscheck (backends/plugin/host_*) and its plugin worker
// (backends/plugin/worker_*), written once for both processes. Messages are small frames on a
// pipe; tensors travel in memfds: "in" (a fresh one per call, written by gscheck and sealed
// before the worker gets it, so no mapping, mprotect or pwrite can change an input) and "out"
// (written by the worker, sealed against shrinking, so a mapping within its size never faults).
// Offsets are from the start of their memfd.
//
// gscheck trusts nothing the worker says: the plugin shares the worker's process and can write
// any frame. Every frame carries the id of the call it answers; sizes are checked against the
// call's byte budget before anything is mapped or allocated; the output is read at the layout
// output_layout() gives for its declared size, guard bytes and guard pages checked by gscheck.
//
// Header-only: gscheck-worker links nothing but libdl.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "core/redzone.h"

namespace gscheck::worker {

// File descriptors the worker is started with.
inline constexpr int kCommandFd = 3;  // socket: gscheck -> worker frames
inline constexpr int kReplyFd = 4;    // pipe: worker -> gscheck frames
inline constexpr int kInMemFd = 5;    // memfd: the call and its inputs (each kCall brings one)
inline constexpr int kOutMemFd = 6;   // memfd: the output tensor (and its strings)
inline constexpr int kStatusFd = 7;   // pipe: the guard -> gscheck, how the worker ended
// memfd, only for coverage-guided fuzzing (PluginOptions::coverage): the plugin's
// SanitizerCoverage 8-bit counters after each call (CoverageHeader, then kCoverageCounters
// bytes of counters, then kCoverageCompares CoverageCompare records of its trace-cmp compares).
// Guidance only: the plugin can write it, and nothing in it reaches a verdict.
inline constexpr int kCoverageFd = 8;
inline constexpr uint64_t kCoverageCounters = 1 << 20;  // counters kept; more are cut off
// Compares kept per call, the first ones made; a 64-row loop with a compare or two per row fits.
inline constexpr uint64_t kCoverageCompares = 4096;
struct CoverageHeader {
  uint64_t magic;       // kMagic
  uint64_t registered;  // counters the plugin's modules registered (0: not instrumented)
  uint64_t written;     // counters of the last call that follow, min(registered, capacity)
  uint64_t calls;       // calls published so far
  uint64_t compares;    // compare records of the last call, min(made, kCoverageCompares)
};
inline constexpr uint64_t kCoverageComparesAt = sizeof(CoverageHeader) + kCoverageCounters;
inline constexpr uint64_t kCoverageBytes = kCoverageComparesAt + kCoverageCompares * 32;

inline constexpr uint32_t kMagic = 0x67736377;  // "gscw"
// The worker's exit status when the plugin closed the descriptors it talks to gscheck through.
inline constexpr int kExitLostPipes = 4;

// Frames larger than this are malformed: nothing bulky goes through a pipe.
inline constexpr uint32_t kMaxFrame = 64 * 1024;
inline constexpr int kMaxRank = 254;
inline constexpr int kInputs = 6;  // params, indices, updates, tensor, shape, axis
// Tensors in "in" and the output's parts in "out" start at multiples of this.
inline constexpr uint64_t kAlign = 64;
// A string element in "in" or "out": {uint64 offset, uint64 size} of its bytes.
inline constexpr uint64_t kStringEntryBytes = 16;
// The default call deadline grows by 1 s per this many bytes (inputs, then the output); the
// worker announces outputs this large (Msg::kAllocated) so that gscheck can extend it, once per
// call and never past what the call's byte budget allows.
inline constexpr uint64_t kBytesPerSecond = uint64_t{64} << 20;

enum class Msg : uint32_t {
  // gscheck -> worker
  kCall = 1,  // payload: CallFrame; the call's memfd rides along (SCM_RIGHTS)
  // worker -> gscheck
  kHello = 100,  // payload: WireContract + name
  kReady,        // init() returned OK; calls may start
  kLoadError,    // payload: text (loading, the entry point or init failed)
  kAllocated,    // payload: uint64 output bytes (the default deadline grows with it)
  kResult,       // payload: WireResult + dims[rank] + message text
  kFault,        // payload: text (a guard page or read-only input was written)
};

struct FrameHeader {
  uint32_t magic;
  uint32_t type;     // Msg
  uint32_t size;     // payload bytes
  uint32_t call_id;  // kCall's id, echoed by every frame the worker sends during that call
};

struct WireContract {
  uint32_t abi_version;
  uint32_t ops;
  uint64_t dtypes;
  uint32_t index_dtypes;
  uint32_t semantics;
  int32_t deterministic;
  int32_t tf_messages;
  int32_t half_in_float;
  uint32_t flags;
  int32_t api;       // gscheck_plugin_api() when the plugin exports it, else GSC_API_PYTHON
  uint32_t sandbox;  // kSandbox* bits: what the worker put in place before loading the plugin
};

inline constexpr uint32_t kSandboxSeccomp = 1;  // the system-call filter (worker_sandbox.h)

struct WireTensor {
  int32_t present;
  int32_t dtype;
  int32_t rank;
  int32_t reserved;
  uint64_t dims_offset;  // rank int64s
  uint64_t data_offset;  // elements, or per string element {uint64 offset, uint64 size}
  uint64_t data_bytes;
};

// The payload of kCall. The deadline travels here, not in "in": one sealed "in" may serve many
// calls (gscheck bench lays a case out once and times only the calls).
struct CallFrame {
  uint64_t in_bytes;    // bytes of "in" in use
  int64_t deadline_ns;  // CLOCK_MONOTONIC time at which the worker is killed
  // Nonzero: this "in" was laid out once for many calls, and the id names it (unique within the
  // gscheck process); what the worker derives from the inputs alone (the output's poison byte,
  // a scan of the whole params) it may keep for the next call with the same id.
  uint64_t input_id;
};

// At offset 0 of "in".
struct WireCall {
  uint32_t magic;
  int32_t op;
  int32_t semantics;
  int32_t reserved;
  int64_t batch_dims;
  int64_t max_bytes;
  uint64_t policy_offset;
  uint64_t policy_size;
  WireTensor inputs[kInputs];
};

// How a call ended, besides the plugin's code.
enum class Ending : int32_t {
  kReturned = 0,   // run() returned its code
  kFailed,         // the call failed outside the plugin's code (message says how); no output
  kFailedRestart,  // as kFailed, and the worker must be replaced (its state is suspect)
  kCrashed  // the call's process died (a signal, an exit) or wrote outside its output: UNSAFE
};

struct WireResult {
  int32_t ending;  // Ending
  int32_t code;    // gsc_code from run()
  int32_t has_output;
  int32_t dtype;
  int32_t rank;
  int32_t reserved;
  uint64_t payload_offset;  // in "out": the elements (not for strings)
  uint64_t payload_bytes;
  uint64_t strings_offset;  // in "out": per element {uint64 offset, uint64 size}, then bytes
  uint64_t strings_bytes;
  uint64_t message_size;  // text after the dims
};

inline uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// Whether [off, off + n) lies within a memfd of `size` bytes (no overflow).
inline bool inside(uint64_t off, uint64_t n, uint64_t size) {
  return off <= size && n <= size - off;
}

inline FrameHeader frame_header(Msg type, uint32_t payload_bytes, uint32_t call_id) {
  return FrameHeader{kMagic, static_cast<uint32_t>(type), payload_bytes, call_id};
}

// A frame's header and payload, contiguous in buf (sizeof(FrameHeader) + n bytes); returns the
// frame's size. Async-signal-safe.
inline std::size_t encode_frame(char* buf, Msg type, const void* payload, uint32_t n,
                                uint32_t call_id) {
  const FrameHeader h = frame_header(type, n, call_id);
  std::memcpy(buf, &h, sizeof h);
  if (n) std::memcpy(buf + sizeof h, payload, n);
  return sizeof h + n;
}

// Why the call laid out in "in" (in_bytes at base) is malformed, or nullptr: every offset and
// size inside "in", ranks and dtypes in range, string elements inside. The worker acts on
// nothing it has not checked here (gscheck wrote it, but the plugin shares the worker).
inline const char* check_call(const unsigned char* base, uint64_t in_bytes) {
  if (in_bytes < sizeof(WireCall)) return "worker got a malformed call";
  WireCall wc;
  std::memcpy(&wc, base, sizeof wc);
  if (wc.magic != kMagic || !inside(wc.policy_offset, wc.policy_size, in_bytes))
    return "worker got a malformed call";
  constexpr int kStringDtype = 15;  // GSC_STRING
  for (const WireTensor& w : wc.inputs) {
    if (!w.present) continue;
    if (w.rank < 0 || w.rank > kMaxRank || w.dtype < 0 || w.dtype > kStringDtype ||
        !inside(w.dims_offset, 8ull * static_cast<uint32_t>(w.rank), in_bytes) ||
        !inside(w.data_offset, w.data_bytes, in_bytes))
      return "worker got a malformed call";
    if (w.dtype != kStringDtype) continue;
    for (uint64_t i = 0; i < w.data_bytes / kStringEntryBytes; ++i) {
      uint64_t e[2];
      std::memcpy(e, base + w.data_offset + kStringEntryBytes * i, sizeof e);
      if (!inside(e[0], e[1], in_bytes)) return "worker got a malformed string";
    }
  }
  return nullptr;
}

// Where a non-string output of payload_bytes lies in "out": guard page | region | guard page,
// the payload 64-byte aligned in the region with kGuardBytes..kGuardBytes+63 guard bytes after
// it and the rest of the region's head before it. The worker writes it there; gscheck reads and
// checks it there, whatever offsets a result frame claims.
struct OutputLayout {
  uint64_t region_offset;   // the head guard page ends here
  uint64_t region_bytes;    // a multiple of the page
  uint64_t payload_offset;  // in the region
  uint64_t tail_bytes;      // guard bytes after the payload, to the region's end
  uint64_t map_bytes;       // both guard pages and the region
};
inline OutputLayout output_layout(uint64_t payload_bytes, uint64_t page) {
  OutputLayout l{};
  l.tail_bytes = kGuardBytes + (round_up(payload_bytes, kAlign) - payload_bytes);
  l.region_bytes = round_up(kGuardBytes + payload_bytes + l.tail_bytes, page);
  l.region_offset = page;
  l.payload_offset = l.region_offset + l.region_bytes - l.tail_bytes - payload_bytes;
  l.map_bytes = l.region_bytes + 2 * page;
  return l;
}

// The size "out" is given, and sealed at, before the worker starts: room for the largest output
// the byte budget allows (its layout, then a string table and string bytes each within the
// budget). A plugin cannot grow it further: memory it writes there is bounded by the budget.
inline uint64_t out_capacity(uint64_t max_bytes, uint64_t page) {
  const uint64_t cap = uint64_t{1} << 60;  // sparse: only pages written cost memory
  if (max_bytes > cap / 4) return cap;
  return round_up(output_layout(max_bytes, page).map_bytes + 2 * max_bytes, page);
}

// Grows a memfd to at least `bytes` (it never shrinks: it is sealed).
inline bool grow_memfd(int fd, uint64_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_size) >= bytes) return true;
  return ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
}

}  // namespace gscheck::worker
