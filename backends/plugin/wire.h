// The wire format between gscheck (backends/plugin/host_*) and its plugin worker
// (backends/plugin/worker_*), written once for both processes. Messages are small frames on a
// pipe; tensors travel in two memfds: "in" (written by gscheck, read-only in the worker) and
// "out" (written by the worker). Both are sealed against shrinking, so a mapping within their
// size never faults. Offsets are from the start of their memfd.
//
// Header-only: gscheck-worker links nothing but libdl.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace gscheck::worker {

// File descriptors the worker is started with.
inline constexpr int kCommandFd = 3;  // socket: gscheck -> worker frames
inline constexpr int kReplyFd = 4;    // pipe: worker -> gscheck frames
inline constexpr int kInMemFd = 5;    // memfd: call and input tensors
inline constexpr int kOutMemFd = 6;   // memfd: the output tensor (and its strings)

inline constexpr uint32_t kMagic = 0x67736377;  // "gscw"
// Frames larger than this are malformed: nothing bulky goes through a pipe.
inline constexpr uint32_t kMaxFrame = 64 * 1024;
inline constexpr int kMaxRank = 254;
inline constexpr int kInputs = 6;  // params, indices, updates, tensor, shape, axis
// Tensors in "in" and the output's parts in "out" start at multiples of this.
inline constexpr uint64_t kAlign = 64;
// A string element in "in" or "out": {uint64 offset, uint64 size} of its bytes.
inline constexpr uint64_t kStringEntryBytes = 16;
// The default call deadline grows by 1 s per this many bytes (inputs, then the output); the
// worker announces outputs this large (Msg::kAllocated) so that gscheck can extend it.
inline constexpr uint64_t kBytesPerSecond = uint64_t{64} << 20;

enum class Msg : uint32_t {
  // gscheck -> worker
  kCall = 1,  // payload: uint64 bytes of "in" in use
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
  uint32_t type;  // Msg
  uint32_t size;  // payload bytes
  uint32_t reserved;
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
  int32_t api;  // gscheck_plugin_api() when the plugin exports it, else GSC_API_PYTHON
};

struct WireTensor {
  int32_t present;
  int32_t dtype;
  int32_t rank;
  int32_t reserved;
  uint64_t dims_offset;  // rank int64s
  uint64_t data_offset;  // elements, or per string element {uint64 offset, uint64 size}
  uint64_t data_bytes;
};

// At offset 0 of "in".
struct WireCall {
  uint32_t magic;
  int32_t op;
  int32_t semantics;
  int32_t reserved;
  int64_t batch_dims;
  int64_t max_bytes;
  int64_t deadline_ns;
  uint64_t policy_offset;
  uint64_t policy_size;
  WireTensor inputs[kInputs];
};

// How a call ended, besides the plugin's code.
enum class Ending : int32_t {
  kReturned = 0,  // run() returned its code
  kFailed,        // the call failed outside the plugin's code (message says how); no output
  kFailedRestart  // as kFailed, and the worker must be replaced (its state is suspect)
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

inline FrameHeader frame_header(Msg type, uint32_t payload_bytes) {
  return FrameHeader{kMagic, static_cast<uint32_t>(type), payload_bytes, 0};
}

// A frame's header and payload, contiguous in buf (sizeof(FrameHeader) + n bytes); returns the
// frame's size. Async-signal-safe.
inline std::size_t encode_frame(char* buf, Msg type, const void* payload, uint32_t n) {
  const FrameHeader h = frame_header(type, n);
  std::memcpy(buf, &h, sizeof h);
  if (n) std::memcpy(buf + sizeof h, payload, n);
  return sizeof h + n;
}

// Grows a memfd to at least `bytes` (it never shrinks: it is sealed).
inline bool grow_memfd(int fd, uint64_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_size) >= bytes) return true;
  return ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
}

}  // namespace gscheck::worker
