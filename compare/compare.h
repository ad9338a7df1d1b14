// Outcome comparison: the rules of ../shared/spec/semantics.md "Comparing outcomes".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/scatter_rows.h"
#include "core/backend.h"
#include "core/case.h"

namespace gscheck::compare {

/// One differing element, located by its multi-index into the output.
struct Mismatch {
  std::vector<int64_t> index;  ///< multi-index into the output tensor
  std::string expected;        ///< the expected value (or set / bound), printed for people
  std::string got;             ///< the value found
  /// The element in the case's terms: its index row, what TensorFlow reads, which input element
  /// the value found is (compare/triage.h); "" when the case's shapes do not decode.
  std::string triage;
};

/// A differing element as known failures judge it (reports/known_failures.h): where it is, and
/// whether a NaN was among the results the rule allows there (a NaN operand of a min/max).
struct ElementDiff {
  int64_t flat = 0;             ///< flat index into the output
  bool nan_admissible = false;  ///< some allowed result of this element is a NaN
};

/// At most this many ElementDiff are kept; past it a difference cannot be explained element by
/// element (Comparison::elements_complete is false).
inline constexpr std::size_t kMaxElementDiffs = std::size_t{1} << 20;

/// The result of one comparison.
struct Comparison {
  bool pass = false;
  std::string summary;               ///< one line: why it passed or how it failed
  std::vector<Mismatch> mismatches;  ///< the first differing elements (at most max_mismatches)
  int64_t mismatch_count = 0;        ///< how many elements differ in all
  /// Every differing element (when elements_complete), so a known failure must explain each.
  std::vector<ElementDiff> elements;
  bool elements_complete = true;
};

/// How strictly to compare.
struct Options {
  /// Error messages must match the expected text exactly (a backend with tf_messages), for the
  /// classes whose text TensorFlow's kernels write: invalid_argument and bad_index.
  bool compare_messages = true;
  /// bad_index messages must match even without compare_messages (tf_bad_index_messages).
  bool compare_bad_index_messages = false;
  /// Half types accumulated in float32: use float32's unit roundoff in the summation bound.
  bool half_accumulated_in_float = false;
  int max_mismatches = 8;
  /// How scatter rows are decoded besides the case's semantics: grading against the reference
  /// under a known failure's rule (harness/explain.cc).
  RowRule rows;
  /// Colliding scatter rows in any order even under tf-cpu (a known failure's
  /// duplicates=any_order rule); the other semantics admit every order anyway.
  bool any_order = false;
  /// Sums of colliding rows in flush-to-zero arithmetic (a known failure's
  /// arithmetic=flush_denormals; float16 never flushes): the bound of each sum allows for it.
  bool flush_denormals = false;
  /// A known failure's nan=canonical: the reference's output has every NaN canonical, and so
  /// do the values an untouched or colliding element is judged against (the starting tensor
  /// and the updates, read canonicalised).
  bool canonical_nan = false;
  /// A second prediction of the same case (a known failure's
  /// arithmetic=flush_denormals_in_float_or_kept): a touched scatter element whose bits match it
  /// is as right as one matching the expected tensor. Not owned; same dtype and shape.
  const Tensor* also_expected = nullptr;
};

/// Compare a backend's outcome with the reference's outcome for the same case, by the op's rule:
/// bit-exact data movement; set-valued update duplicates (tf-gpu); bounded float sums for
/// add/sub duplicates; untouched elements identical to the starting tensor; errors by class and,
/// when messages_graded(opts, class), by message.
Comparison compare_outcomes(const Case& c, const Outcome& expected, const Outcome& got,
                            const Options& opts = {});

/// Whether an error of this class is graded on its message text under opts.
bool messages_graded(const Options& opts, ErrorClass cls);

/// Options that grade a backend by the contract its capabilities declare.
Options options_for(const Capabilities& caps);

/// True when every element where got differs from expected is explained by flushing subnormals
/// to zero (FTZ/DAZ, as TensorFlow's CPU kernels run): part by part both NaN, or within the
/// dtype's smallest normal of each other where one of them is subnormal or the case has a
/// subnormal input. False when nothing differs, for non-float dtypes, and for other shapes.
/// Known-failure entries use it ("flushed_subnormals"); the comparator itself never does.
bool only_flushed_subnormals(const Case& c, const Tensor& expected, const Tensor& got);
/// True when an input of the case (params, tensor, updates) holds a subnormal (part).
bool has_subnormal_input(const Case& c);
/// True when element flat of got differs from expected only as flushing subnormals explains
/// (the per-element rule of only_flushed_subnormals; subnormal_input: has_subnormal_input).
bool flush_explains(const Tensor& expected, const Tensor& got, int64_t flat, bool subnormal_input);

/// Check an outcome against a case file's expect block (output tensor compared as
/// compare_outcomes does; error by class and regex search on the message).
Comparison check_expect(const Case& c, const Expect& expect, const Outcome& got,
                        const Options& opts = {});

}  // namespace gscheck::compare
