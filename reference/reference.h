// The oracle: TensorFlow's gather/scatter semantics, written from ../shared/spec/semantics.md.
#pragma once

#include <cstdint>
#include <string>

#include "core/case.h"

namespace gscheck::reference {

/// A documented departure from TensorFlow's rules that the reference computes on request: a
/// known-failures entry that says a backend "follows" it has the backend graded bit for bit
/// against the reference run with it (docs/report_format.md, "Known failures"). Each part left
/// at its default is TensorFlow's rule under the case's semantics; the parts are orthogonal.
struct Departure {
  /// What an index row with a coordinate outside its dimension does.
  enum class BadIndex : unsigned char {
    kSemantics,  ///< as the case's semantics and bad_indices_policy say
    kRaise,      ///< the op raises (tf-cpu's kernels)
    kZeroFill,   ///< gathers read zeros, scatters skip the row (tf-gpu's kernels)
    kClamp,      ///< gathers clamp each coordinate into range, scatters drop the row (XLA)
  };
  BadIndex bad_index = BadIndex::kSemantics;
  /// A negative coordinate v reads v + dim, once, before the bad-index rule (NumPy, PyTorch,
  /// ONNX): -1 is the last element, and v < -dim is still bad.
  bool wrap_negative = false;
  /// Scatter arithmetic (scatter_nd, add, sub, min, max) with flush-to-zero and
  /// denormals-are-zero in the type it runs in (float32 for bfloat16): a subnormal operand reads
  /// as a zero of its sign and a subnormal result is stored as one. Copies never flush
  /// (tensor_scatter_nd_update, untouched elements, gathers); float16's subnormals are normal
  /// floats, so float16 never flushes. docs/spec_notes.md, "Flush-to-zero".
  bool flush_denormals = false;
  /// With flush_denormals, what a min or max stores; every rule compares the operands as DAZ
  /// floats (a subnormal reads as a zero of its sign).
  enum class MinMaxStore : unsigned char {
    /// TensorFlow's CPU kernels: bfloat16 and float16 keep the chosen operand's bits
    /// (min(0x0001, 1.0) is 0x0001), float32 and float64 store the flushed value.
    kTensorFlow,
    kFlushed,  ///< "flush_denormals_in_float": the flushed value, every dtype (jax's XLA): +0
    kKept,     ///< the chosen operand's bits, every dtype (part of kEither, no name of its own)
    /// "flush_denormals_in_float_or_kept": kFlushed or kKept, element by element. TF-XLA's loops
    /// keep the chosen bits in their vector chunks and flush in the scalar tail (bfloat16 and
    /// float32, probed 2026-12-07), whose place depends on the ISA; a slice position goes one
    /// way for every row, so each element is graded against both predictions, bit for bit
    /// (harness/explain.cc runs the reference under each; run() alone computes kKept).
    kEither,
  };
  MinMaxStore min_max_store = MinMaxStore::kTensorFlow;
  /// How an int64 index value is cut to 32 bits, if it is.
  enum class Int64Cut : unsigned char {
    kNone,
    /// "low_32_bits": the low 32 bits read as int32 (2^32 + 1 reads row 1), before the negative
    /// wrap (OpenVINO converts the indices first).
    kLow32Bits,
    /// "low_32_bits_after_wrap": the same after the wrap (jax.numpy casts the wrapped indices
    /// with astype: INT64_MIN + dim is cut, not INT64_MIN).
    kLow32BitsAfterWrap,
    /// "jax_numpy": kLow32BitsAfterWrap, but by jax.numpy's own choice of path (jax 0.10.2,
    /// indexing.py). A gather whose index per batch example is one scalar per coordinate (gather:
    /// indices of rank batch_dims; gather_nd: one index row per example, bad_indices_policy not
    /// IGNORE) becomes lax.dynamic_slice, whose start indices are cast to int32 together, before
    /// the wrap, when there are two or more (params of rank 2 or more per example), and kept as
    /// int64 when there is one: there, 2^32 + 1 clamps to dim - 1 (1-d) or reads row 1 (2-d),
    /// INT64_MIN reads row 0.
    kJaxNumpy,
    /// "low_32_bits_unsigned": the low 32 bits read as uint32, so -1 is 4294967295, past any dim
    /// (TF-XLA 2.21's tf.gather with batch_dims > 0 and int64 indices: a clamping gather reads
    /// -1 and 2^31 as the last row, 2^32 + 1 as row 1, INT64_MIN as row 0). No wrap comes with it.
    kLow32BitsUnsigned,
  };
  Int64Cut int64_cut = Int64Cut::kNone;
  /// Whether int64_cut cuts after the negative wrap (jax.numpy's astype), not before it.
  bool int64_cut_after_wrap() const {
    return int64_cut == Int64Cut::kLow32BitsAfterWrap || int64_cut == Int64Cut::kJaxNumpy;
  }
  /// Rows colliding on a scatter's element are applied in some order, not row order: the
  /// reference computes row order as ever, and the comparison admits every order (within the
  /// summation bound for add and sub, any colliding row for update, min/max of the set), and
  /// repeats that differ, each within it (PyTorch's parallel accumulate on large inputs).
  bool any_order_duplicates = false;
  /// A scatter_nd of exactly one index row writes that row as it is, not added to zeros: -0 stays
  /// -0 and a subnormal is not flushed (TF-XLA 2.21 on float16, float32, float64 and complex,
  /// whose algebraic simplifier turns it into a dynamic-update-slice). An out-of-range row is
  /// still dropped or raised by the bad-index rule.
  bool one_row_copied = false;
  /// What a min or max does where neither operand is less (equal values, ±0, a NaN):
  /// TensorFlow keeps the tensor's element; ONNX Runtime takes the update; XLA's CPU code orders
  /// the zeros (-0 below +0), keeps a NaN in the tensor, and stores a NaN update with the
  /// operands' signs or'd (min) or and'd (max): min(-2, NaN) is -NaN, max(-2, NaN) is +NaN.
  enum class MinMaxTie : unsigned char { kKeep, kUpdate, kXla };
  MinMaxTie min_max_tie = MinMaxTie::kKeep;
  /// Every NaN of the output, elements no index row touches included, is stored as the quiet NaN
  /// of its sign with no payload (bfloat16 0x7fc3 -> 0x7fc0, 0xffc5 -> 0xffc0; float16 0x7e00,
  /// float32 0x7fc00000; complex per part): XLA's CPU scatters take a bfloat16 tensor through
  /// float32 and back. Other elements keep their bits.
  bool canonical_nan = false;

  bool any() const {
    return bad_index != BadIndex::kSemantics || wrap_negative || flush_denormals ||
           int64_cut != Int64Cut::kNone || any_order_duplicates || one_row_copied ||
           min_max_tie != MinMaxTie::kKeep || canonical_nan;
  }
  /// "bad_index=clamp, negative_indices=wrap, arithmetic=flush_denormals,
  /// int64_indices=low_32_bits (or low_32_bits_after_wrap, jax_numpy), duplicates=any_order,
  /// scatter_nd=one_row_copied, min_max_ties=update, nan=canonical" ("" for none).
  std::string describe() const;
};

/// Limits the reference runs under, and the departure it computes (none by default).
struct Options {
  /// The output tensor may not exceed this many bytes (refused with kResourceExhausted).
  int64_t max_output_bytes = kDefaultMaxCaseBytes;
  Departure departure;
};

/// Run one case under its semantics: TensorFlow's validation in TensorFlow's order and text,
/// then the op. Never throws, never aborts on bad input.
Outcome run(const Case& c, const Options& options = {});

}  // namespace gscheck::reference
