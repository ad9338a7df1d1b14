// Host-side pieces shared by the op launchers: uploads, the bad-index record, the gathers'
// buffers, index and offset type dispatch.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/case.h"
#include "cuda/executor.h"
#include "cuda/guarded_output.h"

namespace gscheck::cuda {

template <Executor Exec>
Expected<typename Exec::Buffer> upload(Exec& ex, const void* host, uint64_t bytes) {
  auto buf = ex.alloc(bytes);
  if (!buf.ok()) return buf.error();
  GSCHECK_RETURN_IF_ERROR(ex.to_device(buf->get(), host, bytes));
  return buf;
}

/// Positions of the first and last bad index a launch recorded (none: last < 0).
struct BadPositions {
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = -1;
  bool any() const { return last >= 0; }
};

/// The device-side flag of checked mode: two int64 updated with atomic min / max.
template <Executor Exec>
class BadRecord {
 public:
  static Expected<BadRecord> create(Exec& ex) {
    const BadPositions init;
    const int64_t h[2] = {init.first, init.last};
    auto buf = upload(ex, h, sizeof(h));
    if (!buf.ok()) return buf.error();
    return BadRecord(std::move(*buf));
  }
  int64_t* ptr() const { return reinterpret_cast<int64_t*>(buf_.get()); }
  Expected<BadPositions> read(Exec& ex) const {
    int64_t h[2];
    GSCHECK_RETURN_IF_ERROR(ex.to_host(h, buf_.get(), sizeof(h)));
    return BadPositions{h[0], h[1]};
  }

 private:
  explicit BadRecord(typename Exec::Buffer b) : buf_(std::move(b)) {}
  typename Exec::Buffer buf_;
};

/// The device side of one gather or gather_nd launch: params and indices uploaded, the output
/// guarded and poisoned with a byte value params lacks, and the bad-index record.
template <Executor Exec>
struct GatherBuffers {
  typename Exec::Buffer params;
  typename Exec::Buffer indices;
  GuardedOutput<Exec> out;
  BadRecord<Exec> bad;

  static Expected<GatherBuffers> create(Exec& ex, const Tensor& params, const Tensor& indices,
                                        uint64_t out_bytes, uint32_t elem_bytes) {
    const auto* h_params = reinterpret_cast<const uint8_t*>(params.data());
    auto d_params = upload(ex, h_params, params.byte_size());
    if (!d_params.ok()) return d_params.error();
    auto d_indices = upload(ex, indices.data(), indices.byte_size());
    if (!d_indices.ok()) return d_indices.error();
    auto g = GuardedOutput<Exec>::create(ex, out_bytes,
                                         choose_poison(h_params, params.byte_size(), elem_bytes));
    if (!g.ok()) return g.error();
    auto b = BadRecord<Exec>::create(ex);
    if (!b.ok()) return b.error();
    return Expected<GatherBuffers>(
        GatherBuffers{std::move(*d_params), std::move(*d_indices), std::move(*g), std::move(*b)});
  }

  /// Copy the output to host_out, checking guards and poison, then read the bad-index record.
  Expected<BadPositions> finish(Exec& ex, Tensor& host_out, uint32_t elem_bytes) {
    GSCHECK_RETURN_IF_ERROR(
        out.finish(ex, reinterpret_cast<uint8_t*>(host_out.data()), elem_bytes));
    return bad.read(ex);
  }
};

/// f(Index{}) with Index = int32_t or int64_t for the index dtype; other dtypes are unimplemented.
template <class F>
Status with_index_type(DType dt, F&& f) {
  return visit_dtype(dt, [&](auto tag) -> Status {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>) {
      return f(I{});
    } else {
      return Error{ErrorClass::kUnimplemented,
                   "cuda kernels take int32 or int64 indices, not " + std::string(dtype_name(dt))};
    }
  });
}

/// True when 32-bit offsets are safe: every tensor of the launch has < 2^31 elements, so every
/// element or row offset the kernels compute fits (CUB's offset-type dispatch).
constexpr bool fits_32bit_offsets(const int64_t* element_counts, int n) {
  for (int i = 0; i < n; ++i) {
    if (element_counts[i] >= (int64_t{1} << 31)) return false;
  }
  return true;
}

/// CUB-style offset dispatch: f(uint32_t{}) when every tensor has < 2^31 elements, else
/// f(uint64_t{}).
template <int N, class F>
Status with_offset_type(const int64_t (&element_counts)[N], F&& f) {
  if (fits_32bit_offsets(element_counts, N)) return f(uint32_t{});
  return f(uint64_t{});
}

}  // namespace gscheck::cuda
