// The wire format between gscheck (plugin_backend.cc) and its plugin worker (plugin_worker.cc).
// Messages are small frames on a pipe; tensors travel in two memfds: "in" (written by gscheck,
// read-only in the worker) and "out" (written by the worker). Both are sealed against shrinking,
// so a mapping within their size never faults. Offsets are from the start of their memfd.
#pragma once

#include <cstdint>

namespace gscheck::worker {

// File descriptors the worker is started with.
inline constexpr int kCommandFd = 3;  // socket: gscheck -> worker frames
inline constexpr int kReplyFd = 4;    // pipe: worker -> gscheck frames
inline constexpr int kInMemFd = 5;    // memfd: call and input tensors
inline constexpr int kOutMemFd = 6;   // memfd: the output tensor (and its strings)

inline constexpr uint32_t kMagic = 0x67736377;  // "gscw"
// Frames larger than this are malformed: nothing bulky goes through a pipe.
inline constexpr uint32_t kMaxFrame = 64 * 1024;
inline constexpr uint64_t kGuardBytes = 64;
inline constexpr unsigned char kGuardByte = 0xA5;
inline constexpr unsigned char kPoisonByte = 0xCD;
inline constexpr int kMaxRank = 254;
inline constexpr int kInputs = 6;  // params, indices, updates, tensor, shape, axis

enum class Msg : uint32_t {
  // gscheck -> worker
  kCall = 1,  // payload: uint64 bytes of "in" in use
  // worker -> gscheck
  kHello = 100,   // payload: WireContract + name
  kReady,         // init() returned OK; calls may start
  kLoadError,     // payload: text (loading, the entry point or init failed)
  kAllocated,     // payload: uint64 output bytes (the default deadline grows with it)
  kResult,        // payload: WireResult + dims[rank] + message text
  kFault,         // payload: text (a guard page or read-only input was written)
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
  uint64_t message_size;    // text after the dims
};

}  // namespace gscheck::worker
