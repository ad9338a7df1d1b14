// RapidCheck generators of cases: every op over random shapes, dtypes, attributes and index
// strategies, plus cases aimed at each validation rule of ../shared/spec/semantics.md.
//
// Shrinking keeps a case's class: the op, dtypes, semantics, index strategy and invalid rule are
// drawn first and never shrink; shapes then shrink toward small, and indices toward the
// boundaries of their dimension (0 or n-1 for in-range values, n or -1 for out-of-range ones).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/case.h"

namespace gscheck::gen {

/// How index values are chosen.
enum class IndexStrategy : unsigned char {
  kInRange,      ///< uniform in [0, n); shrinks toward 0 or n-1
  kBoundary,     ///< 0, n-1 and the out-of-range n, -1, -n-1, index-type min/max
  kHotKey,       ///< one in-range row repeated for most rows (heavy duplicates)
  kPermutation,  ///< distinct rows (per batch), in random order
  kSorted,       ///< in range, rows sorted ascending (duplicates allowed)
  kSparseOob,    ///< in range except a few rows with one out-of-range coordinate
};
inline constexpr IndexStrategy kAllStrategies[] = {
    IndexStrategy::kInRange,     IndexStrategy::kBoundary, IndexStrategy::kHotKey,
    IndexStrategy::kPermutation, IndexStrategy::kSorted,   IndexStrategy::kSparseOob};
/// "in_range", "boundary", "hot_key", "permutation", "sorted", "sparse_oob".
std::string_view strategy_name(IndexStrategy s);

/// The validation rule an invalid case is aimed at (one per check of the spec).
enum class InvalidRule : unsigned char {
  kParamsScalar,            ///< gather/gather_nd: params of rank 0
  kIndicesScalar,           ///< gather_nd/scatter: indices of rank 0
  kUpdatesScalar,           ///< scatter_nd: updates of rank 0
  kTensorScalar,            ///< tensor_scatter: tensor of rank 0
  kAxisNotScalar,           ///< gather: axis tensor of shape [1] or [2]
  kAxisInt64Max,            ///< gather: axis = INT64_MAX
  kAxisOutOfRange,          ///< gather: axis >= rank or < -rank, INT64_MIN included
  kBatchDimsOutOfRange,     ///< gather: |batch_dims| > rank(indices); gather_nd: negative
  kBatchDimsVsParamsRank,   ///< batch_dims >= rank(params)
  kBatchDimsVsIndicesRank,  ///< gather_nd: batch_dims >= rank(indices)
  kBatchDimsAboveAxis,      ///< gather: batch_dims > axis
  kBatchShapeMismatch,      ///< gather: params.shape[i] != indices.shape[i], i < batch_dims
  kAxisDimTooLarge,         ///< gather: params.shape[axis] > 2^31-1 with int32 indices
  kTooManyIndexRows,        ///< gather_nd: more than 2^31-1 index rows (zero elements)
  kParamsEmptyWithRows,     ///< gather_nd: params with 0 elements, rows requested
  kDepthAboveRank,          ///< depth > rank(params) / rank(output)
  kDepthAbove7,             ///< depth 8 on a rank-8 params / output
  kDepthZero,               ///< scatter: depth 0 with a non-empty output
  kRank1Indices,            ///< scatter: non-empty indices of rank 1
  kNegativeShapeDim,        ///< scatter_nd: a negative entry in shape
  kShapeTooManyElements,    ///< scatter_nd: shape product above 2^63-1
  kEmptyShapeVector,        ///< scatter_nd: shape = [] with rows to scatter
  kShapeNotVector,          ///< scatter_nd: shape tensor of rank 2
  kEmptyOutputWithRows,     ///< tensor_scatter: tensor with 0 elements, updates present
  kOuterMismatch,           ///< scatter: updates' outer dims differ from indices'
  kInnerMismatch,           ///< scatter: updates' inner dims differ from the output's
  kUpdatesRankTooSmall,     ///< scatter: rank(updates) < rank(indices) - 1
  kBadPolicy,               ///< bad_indices_policy outside "", DEFAULT, ERROR, IGNORE
  kUnsupportedDtype,        ///< an element dtype the op has no kernel for
  kUnsupportedIndexDtype,   ///< indices of int8/uint8/uint32 (or int16 off gather)
};
/// Snake-case name of the rule ("params_scalar", ...).
std::string_view invalid_rule_name(InvalidRule r);
/// The rules that apply to op.
std::vector<InvalidRule> invalid_rules_for(Op op);

/// Restrictions on what a generator draws. Empty lists mean "everything that applies".
struct Constraints {
  std::vector<Op> ops;                    ///< empty: every op
  std::vector<DType> dtypes;              ///< empty: every dtype the op takes (op_dtypes)
  std::vector<DType> index_dtypes;        ///< empty: int32, int64 (+ int16, see allow_int16)
  std::vector<Semantics> semantics;       ///< empty: tf-cpu and tf-gpu (xla, jax when listed)
  std::vector<IndexStrategy> strategies;  ///< empty: all
  std::vector<std::string> policies;      ///< empty: "", DEFAULT, ERROR, IGNORE
  /// With index_dtypes empty: gather on tf-cpu sometimes draws int16 indices.
  bool allow_int16 = true;
  bool allow_specials = true;       ///< NaN with payloads, -0.0, +-inf among float data
  bool allow_empty = true;          ///< some cases get zero-size dimensions
  bool allow_batch_dims = true;     ///< gather/gather_nd may draw batch_dims > 0
  bool allow_axis_none = true;      ///< gather may draw Python's axis=None
  int max_elements = 2048;          ///< per-tensor element budget at the largest size
  bool gather_axis_zero = false;    ///< gather: normalised axis 0 (0, -rank or None), batch_dims 0
  bool require_batch_dims = false;  ///< gather/gather_nd: batch_dims >= 1 (params rank >= 2)
  /// The share of cases() at an index-type limit: the gathered dim (gather), params' element
  /// count or slice (gather_nd), dim 0 (scatter) of exactly the index dtype's max or one more
  /// (32,767/32,768 for int16, 2^31-1/2^31 for int32 and int64). Above 32,768 the tensors hold
  /// no element (a 0 in another dim). Named "<op>/limit_dim".
  double limit_fraction = 0.0;
};

/// Element dtypes TensorFlow's CPU kernels take for op.
std::vector<DType> op_dtypes(Op op);

/// Cases whose shapes and attributes fit the op (with zero-size dims some still meet TensorFlow's
/// emptiness checks); their indices follow the drawn strategy (so some are out of range).
/// Names are "<op>/<strategy>".
rc::Gen<Case> cases(Constraints c = {});
/// Cases aimed at one validation rule each. Names are "<op>/invalid/<rule>".
rc::Gen<Case> invalid_cases(Constraints c = {});
/// invalid_cases with probability invalid_fraction, else cases.
rc::Gen<Case> mixed_cases(Constraints c, double invalid_fraction);

/// Which special float values self_describing may plant.
enum class Specials : unsigned char {
  kNone,
  kAll,             ///< NaN with payloads (both signs), -0.0, +inf, -inf: data movement
  kArithmeticSafe,  ///< -0.0 and +inf only: sums stay order-independent and NaN-free
  kNoSignedZero,    ///< NaN with payloads and +-inf: min/max, where -0.0 would tie with +0.0
};

/// Self-describing data: element i holds base + i where the dtype represents it (decimal text
/// for strings, parity for bool, (base+i) - (base+i)j for complex); with specials, about one
/// float element in eight (the real part for complex) is a special value, at positions drawn
/// from salt.
Tensor self_describing(DType dt, const Shape& shape, int64_t base, uint64_t salt,
                       Specials specials = Specials::kNone);

/// One line describing a case: op, semantics, dtypes, shapes, attributes, small index lists.
std::string describe(const Case& c);

}  // namespace gscheck::gen

namespace gscheck {
/// RapidCheck prints counterexamples through this (found by argument-dependent lookup).
void showValue(const Case& c, std::ostream& os);
}  // namespace gscheck
