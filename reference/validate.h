// Helpers shared by the reference ops: policy parsing, TensorFlow's debug strings, checked sizes.
// Internal to reference/; nothing here is shared with cuda/.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/case.h"
#include "reference/reference.h"

namespace gscheck::reference::detail {

/// The attribute's value (core's vocabulary), or TensorFlow's error for an unknown one. Under xla
/// and jax, what XLA reads from the text: IGNORE, or DEFAULT for any other text (TF-XLA 2.21 takes
/// "FOO" without an error; docs/spec_notes.md).
Expected<BadIndicesPolicy> parse_policy(std::string_view s, Semantics semantics);

/// Whether an out-of-range index raises. tf-cpu raises unless IGNORE. tf-gpu kernels drop bad
/// indices; they are not registered for ERROR, so TensorFlow places such a node on its CPU
/// kernel, which raises. xla and jax never raise (their rule replaces TensorFlow's checks).
bool bad_indices_raise(Semantics s, BadIndicesPolicy p);

/// TensorFlow's SliceDebugString: the multi-index of element `flat` of `shape`, "[1,2]"; "" for
/// a scalar shape.
std::string slice_debug_string(const Shape& shape, int64_t flat);

/// A product of dims that may exceed int64 (sub-shapes of valid shapes can, when another dim
/// is 0). value is meaningful only when !overflow.
struct Product {
  int64_t value = 1;
  bool overflow = false;
  /// The value as text, or a clear phrase when it overflowed.
  std::string text() const;
};
/// Product of dims[begin, end) (all dims non-negative).
Product product(const std::vector<int64_t>& dims, size_t begin, size_t end);

/// "int16", "int32", "int64": the dtype name TensorFlow prints in index-range messages.
std::string index_type_name(DType dt);
/// std::numeric_limits<Index>::max() of an index dtype (int16/int32/int64).
int64_t index_max(DType dt);

/// Bytes of one element inside TensorFlow's kernels (a tstring is 24 bytes), for cost models.
int64_t tf_element_bytes(DType dt);

/// TensorFlow 2.21's CPU pool cuts an op's work units [0, units) into shards [k*s, (k+1)*s); s
/// depends on the thread count. Returns the smallest s some thread count gives, or 0 when no
/// thread count splits the work. cost_per_unit is Eigen's (cycles); with_sharder: the op calls
/// Shard() (GatherV2), which uses Sharder::Do when parallelism is capped below the pool's
/// threads, else only Eigen's parallelFor is modelled (GatherNd).
int64_t min_shard_units(int64_t units, double cost_per_unit, bool with_sharder);

/// At most this many alternative messages are listed for one error (case-file regexes stay small).
inline constexpr std::size_t kMaxMessageAlternatives = 256;

/// kUnsupported: TensorFlow has no kernel for this combination.
Error unsupported(std::string msg);

/// Every input tensor has a rank TensorFlow can represent (<= kMaxRank).
Status check_input_ranks(const Case& c);

/// An output rank TensorFlow can represent (its TensorShape's message beyond 254).
Status check_output_rank(int64_t rank);

/// An output tensor for `shape`: uninitialised fixed-size elements (zero-filled when `zero`),
/// empty strings; refused beyond max_bytes. (Large buffers come from core's buffer cache.)
Expected<Tensor> new_output(DType dt, Shape shape, int64_t max_bytes, bool zero);

/// Indices of every supported index dtype are read through this one visit (int16/32/64).
/// Precondition: is_index_dtype(dt).
template <class F>
decltype(auto) visit_index_dtype(DType dt, F&& f) {
  GSCHECK_CHECK(is_index_dtype(dt));
  return visit_dtype(dt, [&](auto tag) -> decltype(f(TypeTag<int32_t>{})) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t> ||
                  std::is_same_v<T, int64_t>) {
      return f(tag);
    } else {
      GSCHECK_CHECK(false && "not an index dtype");
      __builtin_unreachable();
    }
  });
}

/// How many rows ahead the row loops compute offsets and prefetch slices, so the random
/// accesses of consecutive rows overlap instead of stalling one after another.
inline constexpr int64_t kPrefetchRows = 16;

/// Hint the first cache lines (up to 256 bytes) of a slice into the cache. Always inlined: GCC
/// (12, at -O2) deduces that a function whose only statements are prefetches has no side effects
/// and deletes calls to it, so the prefetches must land in the row loop's own body.
[[gnu::always_inline]] inline void prefetch_slice(const void* p, std::size_t bytes,
                                                  bool for_write) {
  const char* c = static_cast<const char*>(p);
  const std::size_t n = bytes < 256 ? bytes : 256;
  for (std::size_t off = 0; off < n; off += 64) {
    if (for_write) {
      __builtin_prefetch(c + off, 1);
    } else {
      __builtin_prefetch(c + off, 0);
    }
  }
}

/// Runs visit(r, offset) for rows r = 0..n-1 in order, where offset = offset_of(r) (negative
/// for a bad row). kPrefetchRows rows ahead of visit it computes offset_of and prefetches the
/// slice at base + offset (slice_bytes long; strings are not prefetched). Stops early when visit
/// returns false. The prefetches are written here, not in a callback: GCC at -O2 drops a call to
/// a callable that does nothing but prefetch (see prefetch_slice).
template <class T, class OffsetOf, class Visit>
void for_each_row_prefetched(int64_t n, const T* base, std::size_t slice_bytes, bool for_write,
                             OffsetOf offset_of, Visit visit) {
  static_assert((kPrefetchRows & (kPrefetchRows - 1)) == 0, "ring index uses a mask");
  constexpr bool kPrefetch = !std::is_same_v<T, std::string>;
  int64_t ring[kPrefetchRows];
  for (int64_t r = 0; r < n && r < kPrefetchRows; ++r) {
    ring[r] = offset_of(r);
    if (kPrefetch && ring[r] >= 0) prefetch_slice(base + ring[r], slice_bytes, for_write);
  }
  for (int64_t r = 0; r < n; ++r) {
    const int64_t offset = ring[r & (kPrefetchRows - 1)];
    if (const int64_t ahead = r + kPrefetchRows; ahead < n) {
      const int64_t next = offset_of(ahead);  // reuses the slot just read
      ring[ahead & (kPrefetchRows - 1)] = next;
      if (kPrefetch && next >= 0) prefetch_slice(base + next, slice_bytes, for_write);
    }
    if (!visit(r, offset)) return;
  }
}

/// Whether a row's index value v lies in [0, dim): one unsigned compare, negatives never wrap.
inline bool in_range(int64_t v, int64_t dim) {
  return static_cast<uint64_t>(v) < static_cast<uint64_t>(dim);
}

/// What a semantics profile does with one coordinate v of an index row along a dim of size dim
/// (docs/spec_notes.md, "XLA semantics"). The ops apply it to every coordinate they read; the
/// profiles differ only here and in bad_indices_raise.
struct IndexRule {
  bool wrap_negative = false;   ///< jax: v < 0 reads v + dim, once (v < -dim stays bad)
  bool clamp = false;           ///< xla/jax gathers: a bad v reads 0 or dim - 1 instead
  bool low_32_bits = false;     ///< Departure::int64_cut set: v is cut to its low 32 bits
  bool cut_after_wrap = false;  ///< the cut comes after the wrap (jax.numpy), else before it
  bool cut_unsigned = false;    ///< the low 32 bits read as uint32 (Int64Cut::kLow32BitsUnsigned)
};
/// tf-cpu/tf-gpu: neither (a bad row raises, zeroes or is skipped); xla: gathers clamp, scatters
/// drop, and a gather under IGNORE zeroes a bad row as tf-gpu does (TF-XLA reads the attribute:
/// ERROR and DEFAULT clamp); jax: the xla rule after the wrap.
IndexRule index_rule(Semantics s, bool gathers, BadIndicesPolicy p);
/// The rule and the raise decision once a departure (Options::departure) overrides them.
IndexRule index_rule(Semantics s, bool gathers, BadIndicesPolicy p, const Departure& d);
bool bad_indices_raise(Semantics s, BadIndicesPolicy p, const Departure& d);
/// A gather's rule under Int64Cut::kJaxNumpy where each batch example reads one
/// scalar per coordinate (jax.numpy's lax.dynamic_slice path): no cut when the example's params
/// have rank 1 (one start index, kept as int64), else the cut before the wrap.
IndexRule jax_numpy_slice_rule(IndexRule r, int64_t example_params_rank);

/// xla and jax: XLA's compiler, not TensorFlow's kernels, runs the op.
inline bool is_xla_profile(Semantics s) { return s == Semantics::kXla || s == Semantics::kJax; }

/// xla and jax: XLA has no string type, so a string op is refused when compiled (kUnsupported).
std::optional<Error> xla_string_error(Semantics s, DType dt, std::string_view op);

/// A gather with output elements from params whose indexed dim `dim` is 0: TF-XLA gives zeros
/// (returns nullopt: the row loop zeroes bad rows); jax.numpy refuses it when tracing (this
/// error). TensorFlow's kernels never get here (tf-cpu raises, tf-gpu zeroes, by their checks).
std::optional<Error> gather_from_empty_dim(Semantics s, int dim);
// jax profile: jnp refuses a 0-d index into a dim of size 0 when tracing (IndexError), whatever
// the output's size; `axis` is the dim's place in one batch example's params.
std::optional<Error> scalar_index_into_empty_dim(Semantics s, int axis);

/// The coordinate v resolves to under rule, or -1 when the row is bad there. dim == 0 has no
/// coordinate to clamp to: bad.
inline int64_t resolve_coordinate(int64_t v, int64_t dim, IndexRule rule) {
  auto cut = [&](int64_t x) {
    const uint32_t low = static_cast<uint32_t>(x);
    return rule.cut_unsigned ? static_cast<int64_t>(low)
                             : static_cast<int64_t>(static_cast<int32_t>(low));
  };
  if (rule.low_32_bits && !rule.cut_after_wrap) v = cut(v);
  if (rule.wrap_negative && v < 0) v += dim;  // v < 0 < dim: no overflow
  if (rule.low_32_bits && rule.cut_after_wrap) v = cut(v);
  if (in_range(v, dim)) return v;
  if (!rule.clamp || dim <= 0) return -1;
  return v < 0 ? 0 : dim - 1;
}

/// The element offset of the slice an index row addresses (base + sum of coordinate * stride, in
/// slices, times slice), or -1 when a coordinate is bad under rule. Each coordinate is resolved
/// before it is multiplied, so a huge value cannot overflow.
template <class Index>
int64_t row_slice_offset(const Index* row, int depth, const int64_t* dims, const int64_t* strides,
                         int64_t base, int64_t slice, IndexRule rule) {
  int64_t offset = base;
  for (int k = 0; k < depth; ++k) {
    const int64_t v = resolve_coordinate(static_cast<int64_t>(row[k]), dims[k], rule);
    if (v < 0) return -1;
    offset += v * strides[k];
  }
  return offset * slice;
}

}  // namespace gscheck::reference::detail
