// Outcome comparison: the rules of ../shared/spec/semantics.md "Comparing outcomes".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/case.h"

namespace gscheck::compare {

/// One differing element, located by its multi-index into the output.
struct Mismatch {
  std::vector<int64_t> index;  ///< multi-index into the output tensor
  std::string expected;        ///< the expected value (or set / bound), printed for people
  std::string got;             ///< the value found
};

/// The result of one comparison.
struct Verdict {
  bool pass = false;
  std::string summary;               ///< one line: why it passed or how it failed
  std::vector<Mismatch> mismatches;  ///< the first differing elements (at most max_mismatches)
  int64_t mismatch_count = 0;        ///< how many elements differ in all
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
};

/// Compare a backend's outcome with the reference's outcome for the same case, by the op's rule:
/// bit-exact data movement; set-valued update duplicates (tf-gpu); bounded float sums for
/// add/sub duplicates; untouched elements identical to the starting tensor; errors by class and,
/// when messages_graded(opts, class), by message.
Verdict compare_outcomes(const Case& c, const Outcome& expected, const Outcome& got,
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

/// Check an outcome against a case file's expect block (output tensor compared as
/// compare_outcomes does; error by class and regex search on the message).
Verdict check_expect(const Case& c, const Expect& expect, const Outcome& got,
                     const Options& opts = {});

}  // namespace gscheck::compare
