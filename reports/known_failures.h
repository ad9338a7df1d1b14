// Known failures (--known-failures FILE, reports/known_failures.schema.json): explanations of
// how a backend departs from the contract. An entry names the cases it is about by a predicate on
// the case itself (op, dtypes, attributes, shape relations, TensorFlow's outcome) and what it
// forgives there (a crash, an error, an output where TensorFlow raises, a declined case, or a
// per-element rule). A failing case is XFAIL only when every difference from the expected outcome
// is explained by an entry whose predicate holds; any other difference keeps it FAILED. See
// docs/report_format.md ("Known failures").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compare/compare.h"
#include "core/case.h"
#include "core/message_regex.h"
#include "core/status.h"
#include "reference/reference.h"

namespace gscheck::reports {

/// Facts about a case an entry's predicate can require ("has") or exclude ("lacks").
enum class CaseFact : unsigned char {
  kSubnormalInput,           ///< params, tensor or updates hold a subnormal (part)
  kNanInput,                 ///< params, tensor or updates hold a NaN (part)
  kDuplicateDestinations,    ///< scatter: two in-range index rows address the same slice
  kEmptyOutput,              ///< TensorFlow's outcome is a tensor with no elements
  kNegativeIndex,            ///< an index value is negative
  kUpdatesRankBelowIndices,  ///< scatter: rank(updates) < rank(indices) - 1
  kNonzeroBatchDims,         ///< gather, gather_nd: batch_dims != 0
  kOtherPolicy,              ///< bad_indices_policy is neither "" nor "DEFAULT"
  kOutOfRangeIndex,          ///< an index (coordinate) outside its dimension: below 0 or >= it
  kEmptySlice,               ///< the slice one index row moves has no elements
  kRankOver64,               ///< an input, or TensorFlow's output, has more than 64 dimensions
  kIndexOutsideInt32,        ///< an index value below INT32_MIN or above INT32_MAX
  kDimOverInt32,             ///< a dimension (or scatter_nd shape value) above INT32_MAX
  kDepthZero,                ///< index rows of depth 0: indices.shape[-1] == 0
  kCount,                    ///< not a fact: how many there are
};
/// "subnormal_input", "nan_input", "duplicate_destinations", "empty_output", "negative_index",
/// "updates_rank_below_indices_rank_minus_1", "nonzero_batch_dims", "non_default_policy",
/// "out_of_range_index", "empty_slice", "rank_over_64", "index_outside_int32",
/// "dim_over_int32", "depth_zero".
std::string_view case_fact_name(CaseFact f);

/// What an entry forgives where its predicate holds.
enum class Forgive : unsigned char {
  kCrash,             ///< an internal error: crash, abort, timeout (message: the text)
  kError,             ///< an error of one class where TensorFlow gives another outcome
  kOutput,            ///< a tensor where TensorFlow raises
  kDeclined,          ///< unimplemented (or unsupported where TensorFlow computes)
  kElements,          ///< differing elements, each by the entry's element rule
  kNondeterministic,  ///< outcomes that differ between repeats of a deterministic backend
  /// Not a forgiveness but a prediction: the backend follows another rule the reference computes
  /// (reference::Departure), and is graded bit for bit against the reference run under it.
  kFollows,
};
/// Element rules: which differing element values an entry forgives.
enum class ElementRule : unsigned char {
  kFlushedSubnormal,  ///< subnormals flushed to zero (compare::flush_explains)
  kNanBits,           ///< a NaN where a NaN is expected or allowed, whatever its bits
  kCanonicalNan,      ///< the dtype's canonical quiet NaN where a NaN is expected or allowed
  kQuietedNan,        ///< the expected signalling NaN with its quiet bit set
  kAnyValue,          ///< any value: only for entries naming their cases (a case glob)
  /// The value is, bit for bit, an element of the case's data inputs (params; tensor or
  /// updates): a wrong row read or written, never memory nobody wrote nor a wrong sum.
  kInputElement,
};

/// One entry: an id, the predicate on cases, what it forgives, and why.
struct KnownFailure {
  std::string id;
  // The predicate ("when"); unset parts hold for every case.
  std::string case_pattern = "*";  ///< glob (* ?) on the case name or file path
  std::vector<Op> ops;
  std::vector<DType> dtypes;        ///< the data dtype (params; tensor or updates)
  std::vector<DType> index_dtypes;  ///< the indices' dtype
  std::vector<Api> apis;
  std::vector<Semantics> semantics;
  std::optional<int64_t> axis, batch_dims;
  std::vector<std::string> bad_indices_policies;  ///< the case's attribute ("" when not given)
  std::vector<CaseFact> has, lacks;
  /// TensorFlow's outcome (the reference's, else the expect block's): "output" or class names.
  std::vector<std::string> expected;
  std::optional<MessageRegex> expected_message;  ///< searched in TensorFlow's error message
  std::optional<int64_t> min_slice_elements;     ///< scatter: elements per index row
  // What it forgives ("forgives").
  Forgive forgives = Forgive::kCrash;
  std::optional<ErrorClass> error_class;  ///< kError: the class the backend gives
  std::optional<MessageRegex> message;    ///< kCrash, kError, kDeclined: the backend's text
  ElementRule element_rule = ElementRule::kNanBits;
  /// kElements: the rule also explains elements no index row writes (a runtime that rewrites the
  /// whole tensor); by default an arithmetic rule reaches only elements a scatter row computed.
  bool untouched = false;
  reference::Departure follows;  ///< kFollows: the rule the backend follows
  // Why.
  std::string reason;
  std::string link;
  /// Set for a departure that only some hosts show (CPU features, thread count): why, and the
  /// case files that show it where it holds. Where the host does not show it the entry may
  /// explain nothing, but only when each of those case files ran and PASSED.
  struct HostDependence {
    std::string reason;
    std::vector<std::string> shown_by;  ///< case file paths (a case's file ends with one)
  };
  std::optional<HostDependence> host_dependent;
};

/// True when the case file `file` is the one `shown_by` names: the same path, or `file` ends
/// with "/" + shown_by (runs name files by the paths they were given).
bool names_case_file(std::string_view shown_by, std::string_view file);

struct KnownFailures {
  std::string path;
  std::string
      sha256;  ///< of the file's text as read (load_known_failures); "" when parsed from JSON
  std::vector<KnownFailure> entries;
};

/// Parse a known-failures document (format version 2); a malformed entry is a kParse error
/// naming it. Version 1 (outcome-text filters) is refused with what to change.
Expected<KnownFailures> known_failures_from_json(const nlohmann::json& j, const std::string& path);
/// Read and parse a known-failures file: a regular file of at most max_bytes, through the bounded
/// JSON parser; regexes through RE2 (MessageRegex).
Expected<KnownFailures> load_known_failures(const std::string& path,
                                            int64_t max_bytes = int64_t{16} << 20);

/// The longest `case` glob a known-failures file may hold.
inline constexpr std::size_t kMaxGlobBytes = 4096;

/// True when the glob pattern (`*` any run, `?` one byte) matches all of text; O(text x
/// pattern / 64) at worst.
bool glob_match(std::string_view pattern, std::string_view text);

/// One difference between a backend's outcome and the expected one, as grading found it.
struct Difference {
  enum class Kind : unsigned char {
    kCrash,
    kError,
    kOutput,
    kDeclined,
    kElement,
    kNondeterministic,
    kOther,  ///< a dtype or shape that differs: no entry forgives it
  };
  Kind kind = Kind::kOther;
  std::string against;             ///< "expect", "reference" or "repeat"
  std::string text;                ///< for people: the check's summary, or the element's mismatch
  std::optional<Error> got_error;  ///< kCrash, kError, kDeclined
  // kElement: the tensors compared and the element.
  const Tensor* expected = nullptr;
  const Tensor* got = nullptr;
  compare::ElementDiff element;
};

/// The case-level inputs of a predicate: the case and TensorFlow's outcome for it.
class CaseView {
 public:
  /// rows: how touched() reads index values besides the semantics (differences graded against
  /// the reference under a known failure's rule).
  CaseView(const Case& c, const Outcome* tensorflow, const Expect* expect,
           compare::RowRule rows = {})
      : c_(c), tf_(tensorflow), expect_(expect), rows_(rows) {}
  const Case& c() const { return c_; }
  bool fact(CaseFact f) const;
  /// "output", an error class name, or "" when unknown.
  std::string expected_class() const;
  /// TensorFlow's error message ("" when it computes or is unknown).
  std::string expected_message() const;
  /// Whether an in-range index row of a scatter writes output element `flat` (an element an
  /// operation computed, so FTZ or a NaN rule can reach it). Gathers copy: false.
  bool touched(int64_t flat) const;

 private:
  const Case& c_;
  const Outcome* tf_;
  const Expect* expect_;
  compare::RowRule rows_;
  mutable std::optional<bool> facts_[static_cast<int>(CaseFact::kCount)];
  /// touched(): the sorted output slices some row writes, and the slice size (-1: not decoded).
  mutable int64_t touched_slice_size_ = -1;
  mutable std::vector<int64_t> touched_slices_;
};

/// True when the entry's predicate holds for the case.
bool selects(const KnownFailure& e, const CaseView& v, std::string_view name,
             std::string_view file);
/// True when the entry (whose predicate holds) forgives the difference.
bool forgives(const KnownFailure& e, const CaseView& v, const Difference& d);
/// True for the entries that accept values gscheck cannot predict ("values unchecked"): output
/// where TensorFlow raises, any_value, input_element. Reports count them apart.
bool values_unchecked(const KnownFailure& e);
/// "crash", "error", "output", "declined", "element", "nondeterministic", "other".
std::string_view difference_kind_name(Difference::Kind k);
/// The entries a difference is explained by (indices into known.entries), in file order.
std::vector<std::size_t> explaining(const KnownFailures& known, const std::vector<bool>& selected,
                                    const CaseView& v, const Difference& d);

}  // namespace gscheck::reports
