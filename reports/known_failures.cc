#include "reports/known_failures.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "compare/elements.h"
#include "compare/scatter_rows.h"
#include "compare/triage.h"
#include "core/case_json.h"
#include "core/sha256.h"

namespace gscheck::reports {
namespace {

using nlohmann::json;

constexpr CaseFact kAllFacts[] = {
    CaseFact::kSubnormalInput,   CaseFact::kNanInput,      CaseFact::kDuplicateDestinations,
    CaseFact::kEmptyOutput,      CaseFact::kNegativeIndex, CaseFact::kUpdatesRankBelowIndices,
    CaseFact::kNonzeroBatchDims, CaseFact::kOtherPolicy,   CaseFact::kOutOfRangeIndex,
    CaseFact::kEmptySlice,       CaseFact::kRankOver64,    CaseFact::kIndexOutsideInt32,
    CaseFact::kDimOverInt32,     CaseFact::kDepthZero};

Error bad(const std::string& path, const std::string& where, const std::string& what) {
  return Error{ErrorClass::kParse, path + ": " + where + ": " + what};
}

template <class T, class F>
bool has(const std::vector<T>& list, const F& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

using compare::element_is_nan;

// The dtype's canonical quiet NaN (what x86 and Eigen produce for an invalid operation).
bool is_canonical_nan(const Tensor& t, int64_t i) {
  const std::byte* p = t.data() + i * dtype_size(t.dtype());
  switch (t.dtype()) {
    case DType::kFloat16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return b == 0x7e00;
    }
    case DType::kBFloat16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return b == 0x7fc0;
    }
    case DType::kFloat32: {
      uint32_t b;
      std::memcpy(&b, p, 4);
      return b == 0x7fc00000u;
    }
    case DType::kFloat64: {
      uint64_t b;
      std::memcpy(&b, p, 8);
      return b == 0x7ff8000000000000ull;
    }
    default:
      return false;
  }
}

// got is expected's signalling NaN with the quiet bit set (what a float32 round trip does).
bool is_quieted(const Tensor& expected, const Tensor& got, int64_t i) {
  if (!element_is_nan(expected, i) || !element_is_nan(got, i)) return false;
  const std::size_t size = dtype_size(got.dtype());
  uint64_t e = 0, g = 0, quiet = 0;
  switch (got.dtype()) {
    case DType::kFloat16:
      quiet = 0x0200;
      break;
    case DType::kBFloat16:
      quiet = 0x0040;
      break;
    case DType::kFloat32:
      quiet = 0x00400000u;
      break;
    case DType::kFloat64:
      quiet = uint64_t{1} << 51;
      break;
    default:
      return false;
  }
  std::memcpy(&e, expected.data() + i * size, size);
  std::memcpy(&g, got.data() + i * size, size);
  return (e & quiet) == 0 && g == (e | quiet);
}

bool any_nan(const Tensor& t) {
  if (t.dtype() == DType::kString) return false;
  for (int64_t i = 0, n = t.num_elements(); i < n; ++i)
    if (element_is_nan(t, i)) return true;
  return false;
}

// What one index row addresses and what it moves, read from the case as written: the dims a row
// addresses, in order (gather's params.shape[axis], gather_nd's leading params dims after the
// batch dims, a scatter's leading output dims) and the slice dims after them. Cases too malformed
// to tell (no scalar axis, depth above the rank) have none.
struct IndexSpace {
  std::vector<int64_t> addressed, slice;
};

std::optional<IndexSpace> index_space(const Case& c) {
  if (!c.indices || !is_integer(c.indices->dtype())) return std::nullopt;
  std::vector<int64_t> space;
  int64_t skip = 0, depth = 1;  // leading dims not addressed, dims one row addresses
  if (c.op == Op::kGather) {
    if (!c.params) return std::nullopt;
    // No axis tensor: the Python API's axis=None, which is batch_dims (the kernel needs one).
    if (c.axis ? c.axis->num_elements() != 1 || !is_integer(c.axis->dtype())
               : c.api != Api::kPython)
      return std::nullopt;
    const int rank = c.params->shape().rank();
    int64_t axis = c.axis ? c.axis->int_at(0) : c.batch_dims;
    if (axis < -rank || axis >= rank) return std::nullopt;
    skip = axis < 0 ? axis + rank : axis;
    space = c.params->shape().dims();
  } else {
    if (c.op == Op::kGatherNd && c.params) {
      space = c.params->shape().dims();
      skip = c.batch_dims;
    } else if (is_tensor_scatter(c.op) && c.tensor) {
      space = c.tensor->shape().dims();
    } else if (c.op == Op::kScatterNd && c.shape && is_integer(c.shape->dtype())) {
      for (int64_t i = 0; i < c.shape->num_elements(); ++i) space.push_back(c.shape->int_at(i));
    } else {
      return std::nullopt;
    }
    const Shape& ix = c.indices->shape();
    if (ix.rank() == 0) return std::nullopt;
    depth = ix.dim(ix.rank() - 1);
  }
  if (depth < 0 || skip < 0 || skip + depth > static_cast<int64_t>(space.size()))
    return std::nullopt;
  IndexSpace s;
  s.addressed.assign(space.begin() + skip, space.begin() + skip + depth);
  s.slice.assign(space.begin() + skip + depth, space.end());
  return s;
}

// Whether an index lies outside the dimension it addresses.
bool out_of_range_index(const Case& c) {
  const std::optional<IndexSpace> s = index_space(c);
  if (!s || s->addressed.empty()) return false;
  const std::vector<int64_t>& dims = s->addressed;
  const Tensor& ix = *c.indices;
  const int64_t n = ix.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = dims[static_cast<std::size_t>(i) % dims.size()];
    const int64_t v = ix.int_at(i);
    if (v < 0 || v >= d) return true;
  }
  return false;
}

// Whether the slice one index row moves has no elements (gather's params dims after the axis:
// TensorFlow then reads no index, spec "lazy validation").
bool empty_slice(const Case& c) {
  const std::optional<IndexSpace> s = index_space(c);
  return s && std::find(s->slice.begin(), s->slice.end(), 0) != s->slice.end();
}

}  // namespace

std::string_view case_fact_name(CaseFact f) {
  switch (f) {
    case CaseFact::kSubnormalInput:
      return "subnormal_input";
    case CaseFact::kNanInput:
      return "nan_input";
    case CaseFact::kDuplicateDestinations:
      return "duplicate_destinations";
    case CaseFact::kEmptyOutput:
      return "empty_output";
    case CaseFact::kNegativeIndex:
      return "negative_index";
    case CaseFact::kUpdatesRankBelowIndices:
      return "updates_rank_below_indices_rank_minus_1";
    case CaseFact::kNonzeroBatchDims:
      return "nonzero_batch_dims";
    case CaseFact::kOtherPolicy:
      return "non_default_policy";
    case CaseFact::kOutOfRangeIndex:
      return "out_of_range_index";
    case CaseFact::kEmptySlice:
      return "empty_slice";
    case CaseFact::kRankOver64:
      return "rank_over_64";
    case CaseFact::kIndexOutsideInt32:
      return "index_outside_int32";
    case CaseFact::kDimOverInt32:
      return "dim_over_int32";
    case CaseFact::kDepthZero:
      return "depth_zero";
    case CaseFact::kCount:
      break;
  }
  return "?";
}

namespace {

// The first position at or after `from` where `seg` (its '?' match any byte) matches text, or
// npos. Shift-And over 64-bit words: O(text x words of seg), never backtracking, whatever the
// text and the segment (a search by comparison is O(text x seg) on "aaa...ab" segments).
std::size_t find_segment(std::string_view seg, std::string_view text, std::size_t from) {
  if (seg.empty()) return from;
  const std::size_t words = (seg.size() + 63) / 64;
  std::vector<uint64_t> any(words, 0), mask, state(words, 0);
  for (std::size_t i = 0; i < seg.size(); ++i)
    if (seg[i] == '?') any[i / 64] |= uint64_t{1} << (i % 64);
  for (int c = 0; c < 256; ++c) mask.insert(mask.end(), any.begin(), any.end());
  for (std::size_t i = 0; i < seg.size(); ++i)
    mask[static_cast<std::size_t>(static_cast<unsigned char>(seg[i])) * words + i / 64] |=
        uint64_t{1} << (i % 64);
  const std::size_t last_word = (seg.size() - 1) / 64;
  const uint64_t last_bit = uint64_t{1} << ((seg.size() - 1) % 64);
  for (std::size_t t = from; t < text.size(); ++t) {
    const uint64_t* m =
        &mask[static_cast<std::size_t>(static_cast<unsigned char>(text[t])) * words];
    uint64_t carry = 1;  // a match may start here
    for (std::size_t w = 0; w < words; ++w) {
      const uint64_t next_carry = state[w] >> 63;
      state[w] = ((state[w] << 1) | carry) & m[w];
      carry = next_carry;
    }
    if (state[last_word] & last_bit) return t + 1 - seg.size();
  }
  return std::string_view::npos;
}

// seg (with '?') equals text at `at`.
bool segment_at(std::string_view seg, std::string_view text, std::size_t at) {
  if (at + seg.size() > text.size()) return false;
  for (std::size_t i = 0; i < seg.size(); ++i)
    if (seg[i] != '?' && seg[i] != text[at + i]) return false;
  return true;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // The segments between stars: the first anchored at the start, the last at the end, each one
  // between at its leftmost place after the one before (leftmost leaves the most room, so that
  // is a match whenever one exists). Linear in the text per segment word, no backtracking.
  const std::size_t first_star = pattern.find('*');
  if (first_star == std::string_view::npos)
    return pattern.size() == text.size() && segment_at(pattern, text, 0);
  const std::string_view head = pattern.substr(0, first_star);
  const std::size_t last_star = pattern.rfind('*');
  const std::string_view tail = pattern.substr(last_star + 1);
  if (head.size() + tail.size() > text.size() || !segment_at(head, text, 0) ||
      !segment_at(tail, text, text.size() - tail.size()))
    return false;
  const std::string_view middle_text = text.substr(0, text.size() - tail.size());
  std::size_t at = head.size();
  std::size_t p = first_star + 1;
  while (p < last_star) {
    const std::size_t star = pattern.find('*', p);
    const std::string_view seg = pattern.substr(p, star - p);
    p = star + 1;
    if (seg.empty()) continue;
    const std::size_t found = find_segment(seg, middle_text, at);
    if (found == std::string_view::npos) return false;
    at = found + seg.size();
  }
  return true;
}

bool CaseView::fact(CaseFact f) const {
  std::optional<bool>& slot = facts_[static_cast<int>(f)];
  if (slot) return *slot;
  bool v = false;
  switch (f) {
    case CaseFact::kSubnormalInput:
      v = compare::has_subnormal_input(c_);
      break;
    case CaseFact::kNanInput:
      for (const std::optional<Tensor>* in : {&c_.params, &c_.tensor, &c_.updates})
        v = v || (*in && any_nan(**in));
      break;
    case CaseFact::kDuplicateDestinations:
      if (is_scatter(c_.op) && tf_ && tf_->ok()) {
        if (auto rows = compare::decode_scatter_rows(c_, tf_->value().shape())) {
          for (std::size_t i = 1; i < rows->by_slice.size() && !v; ++i)
            v = rows->by_slice[i].first == rows->by_slice[i - 1].first;
        }
      }
      break;
    case CaseFact::kEmptyOutput:
      v = tf_ && tf_->ok() ? tf_->value().num_elements() == 0
                           : expect_ && expect_->output && expect_->output->num_elements() == 0;
      break;
    case CaseFact::kNegativeIndex:
      if (c_.indices && c_.indices->dtype() != DType::kString &&
          c_.indices->dtype() != DType::kBool && is_integer(c_.indices->dtype()))
        for (int64_t i = 0, n = c_.indices->num_elements(); i < n && !v; ++i)
          v = c_.indices->int_at(i) < 0;
      break;
    case CaseFact::kUpdatesRankBelowIndices:
      v = is_scatter(c_.op) && c_.updates && c_.indices &&
          c_.updates->shape().rank() < c_.indices->shape().rank() - 1;
      break;
    case CaseFact::kNonzeroBatchDims:
      // As tf.gather resolves it: a negative batch_dims counts from the indices' rank (-1 of
      // rank-1 indices is 0, no batch). Only gather takes a negative one.
      v = c_.batch_dims != 0 &&
          !(c_.op == Op::kGather && c_.indices && c_.batch_dims + c_.indices->rank() == 0);
      break;
    case CaseFact::kOtherPolicy:
      v = bad_indices_policy_from_name(c_.bad_indices_policy) != BadIndicesPolicy::kDefault;
      break;
    case CaseFact::kOutOfRangeIndex:
      v = out_of_range_index(c_);
      break;
    case CaseFact::kEmptySlice:
      v = empty_slice(c_);
      break;
    case CaseFact::kRankOver64:  // NumPy's NPY_MAXDIMS: what a Python-hosted backend can view
      for (const std::optional<Tensor>* in : {&c_.params, &c_.tensor, &c_.updates, &c_.indices})
        v = v || (*in && (*in)->shape().rank() > 64);
      v = v || (tf_ && tf_->ok() && tf_->value().shape().rank() > 64) ||
          (expect_ && expect_->output && expect_->output->shape().rank() > 64);
      break;
    case CaseFact::kDimOverInt32: {
      const auto over = [](const Shape& s) {
        for (int64_t d : s.dims())
          if (d > INT32_MAX) return true;
        return false;
      };
      for (const std::optional<Tensor>* in : {&c_.params, &c_.tensor, &c_.updates, &c_.indices})
        v = v || (*in && over((*in)->shape()));
      if (c_.op == Op::kScatterNd && c_.shape && is_integer(c_.shape->dtype()))
        for (int64_t i = 0; i < c_.shape->num_elements() && !v; ++i)
          v = c_.shape->int_at(i) > INT32_MAX;
      v = v || (tf_ && tf_->ok() && over(tf_->value().shape()));
      break;
    }
    case CaseFact::kDepthZero:
      v = c_.op != Op::kGather && c_.indices && c_.indices->shape().rank() > 0 &&
          c_.indices->shape().dim(c_.indices->shape().rank() - 1) == 0;
      break;
    case CaseFact::kIndexOutsideInt32:
      if (c_.indices && c_.indices->dtype() == DType::kInt64)
        for (int64_t i = 0, n = c_.indices->num_elements(); i < n && !v; ++i)
          v = c_.indices->int_at(i) < INT32_MIN || c_.indices->int_at(i) > INT32_MAX;
      break;
    case CaseFact::kCount:
      break;
  }
  slot = v;
  return v;
}

std::string CaseView::expected_class() const {
  if (tf_) return tf_->ok() ? "output" : std::string(error_class_name(tf_->error().cls));
  if (expect_ && expect_->output) return "output";
  if (expect_ && expect_->error_class) return std::string(error_class_name(*expect_->error_class));
  return "";
}

std::string CaseView::expected_message() const {
  if (tf_ && !tf_->ok()) return tf_->error().message;
  if (!tf_ && expect_ && expect_->error_regex) return *expect_->error_regex;
  return "";
}

bool CaseView::touched(int64_t flat) const {
  if (!is_scatter(c_.op) || !tf_ || !tf_->ok() || flat < 0) return false;
  if (touched_slice_size_ < 0) {
    touched_slice_size_ = 0;
    if (auto rows = compare::decode_scatter_rows(c_, tf_->value().shape(), rows_)) {
      touched_slice_size_ = rows->slice_size;
      for (const auto& [slice, row] : rows->by_slice)
        if (touched_slices_.empty() || touched_slices_.back() != slice)
          touched_slices_.push_back(slice);
    }
  }
  if (touched_slice_size_ <= 0) return false;
  return std::binary_search(touched_slices_.begin(), touched_slices_.end(),
                            flat / touched_slice_size_);
}

bool selects(const KnownFailure& e, const CaseView& v, std::string_view name,
             std::string_view file) {
  const Case& c = v.c();
  if (e.case_pattern != "*" && !glob_match(e.case_pattern, name) &&
      (file.empty() || !glob_match(e.case_pattern, file)))
    return false;
  if (!e.ops.empty() && !has(e.ops, c.op)) return false;
  if (!e.dtypes.empty()) {
    const std::optional<Tensor>& data =
        !is_scatter(c.op) ? c.params : (c.tensor ? c.tensor : c.updates);
    if (!data || !has(e.dtypes, data->dtype())) return false;
  }
  if (!e.index_dtypes.empty() && (!c.indices || !has(e.index_dtypes, c.indices->dtype())))
    return false;
  if (!e.apis.empty() && !has(e.apis, c.api)) return false;
  if (!e.semantics.empty() && !has(e.semantics, c.semantics)) return false;
  if (e.axis) {
    if (!c.axis || c.axis->num_elements() != 1 || !is_integer(c.axis->dtype()) ||
        c.axis->int_at(0) != *e.axis)
      return false;
  }
  if (e.batch_dims && c.batch_dims != *e.batch_dims) return false;
  if (!e.bad_indices_policies.empty() && !has(e.bad_indices_policies, c.bad_indices_policy))
    return false;
  for (CaseFact f : e.has)
    if (!v.fact(f)) return false;
  for (CaseFact f : e.lacks)
    if (v.fact(f)) return false;
  if (!e.expected.empty() && !has(e.expected, v.expected_class())) return false;
  if (e.expected_message && !e.expected_message->search(v.expected_message())) return false;
  if (e.min_slice_elements) {
    if (!is_scatter(c.op) || !c.indices || !c.updates) return false;
    const Shape& is = c.indices->shape();
    int64_t rows = 1;
    for (int d = 0; d + 1 < is.rank(); ++d) rows *= is.dim(d);
    if (rows <= 0 || c.updates->num_elements() / rows < *e.min_slice_elements) return false;
  }
  return true;
}

bool forgives(const KnownFailure& e, const CaseView& v, const Difference& d) {
  using K = Difference::Kind;
  auto message_ok = [&] {
    return !e.message || (d.got_error && e.message->search(d.got_error->message));
  };
  switch (e.forgives) {
    case Forgive::kCrash:
      return d.kind == K::kCrash && message_ok();
    case Forgive::kError:
      return d.kind == K::kError && d.got_error && d.got_error->cls == *e.error_class &&
             message_ok();
    case Forgive::kOutput:
      return d.kind == K::kOutput;
    case Forgive::kDeclined:
      return d.kind == K::kDeclined && message_ok();
    case Forgive::kNondeterministic:
      return d.kind == K::kNondeterministic;
    case Forgive::kFollows:
      return false;  // a prediction, graded by harness::explain against the reference under it
    case Forgive::kElements:
      break;
  }
  if (d.kind != K::kElement || !d.expected || !d.got) return false;
  const int64_t i = d.element.flat;
  if (i < 0 || i >= d.got->num_elements() || d.got->dtype() == DType::kString) return false;
  const bool nan_expected = d.element.nan_admissible || element_is_nan(*d.expected, i);
  // The arithmetic rules reach only elements an operation computed: a scatter row's destination.
  // A copy (a gather, an untouched element) that changed bits follows no rule.
  const bool arithmetic_rule =
      e.element_rule != ElementRule::kAnyValue && e.element_rule != ElementRule::kInputElement;
  if (arithmetic_rule && !e.untouched && !v.touched(i)) return false;
  switch (e.element_rule) {
    case ElementRule::kFlushedSubnormal:
      return compare::flush_explains(*d.expected, *d.got, i, v.fact(CaseFact::kSubnormalInput));
    case ElementRule::kNanBits:
      return nan_expected && element_is_nan(*d.got, i);
    case ElementRule::kCanonicalNan:
      return nan_expected && is_canonical_nan(*d.got, i);
    case ElementRule::kQuietedNan:
      return is_quieted(*d.expected, *d.got, i);
    case ElementRule::kAnyValue:
      return true;
    case ElementRule::kInputElement:
      return compare::is_input_element(v.c(), *d.got, i);
  }
  return false;
}

bool values_unchecked(const KnownFailure& e) {
  return e.forgives == Forgive::kOutput ||
         (e.forgives == Forgive::kElements && (e.element_rule == ElementRule::kAnyValue ||
                                               e.element_rule == ElementRule::kInputElement));
}

std::string_view difference_kind_name(Difference::Kind k) {
  using K = Difference::Kind;
  switch (k) {
    case K::kCrash:
      return "crash";
    case K::kError:
      return "error";
    case K::kOutput:
      return "output";
    case K::kDeclined:
      return "declined";
    case K::kElement:
      return "element";
    case K::kNondeterministic:
      return "nondeterministic";
    case K::kOther:
      return "other";
  }
  return "other";
}

std::vector<std::size_t> explaining(const KnownFailures& known, const std::vector<bool>& selected,
                                    const CaseView& v, const Difference& d) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < known.entries.size(); ++i)
    if (selected[i] && forgives(known.entries[i], v, d)) out.push_back(i);
  return out;
}

namespace {

// Reads the fields of one object, refusing unknown ones; every error names path and field.
class Fields {
 public:
  Fields(const json& j, std::string path, std::string where)
      : j_(j), path_(std::move(path)), where_(std::move(where)) {}
  Status only(std::initializer_list<const char*> names) const {
    return only(std::vector<const char*>(names));
  }
  Status only(const std::vector<const char*>& names) const {
    for (const auto& item : j_.items()) {
      if (std::none_of(names.begin(), names.end(),
                       [&](const char* n) { return item.key() == n; })) {
        std::string list;
        for (const char* n : names) list += (list.empty() ? "" : ", ") + std::string(n);
        return bad(path_, where_ + "." + excerpt(item.key(), 40),
                   "unknown field (expected " + list + ")");
      }
    }
    return {};
  }
  bool has(const char* name) const { return j_.contains(name); }
  Expected<std::string> text(const char* name) const {
    const json& v = j_[name];
    if (!v.is_string() || v.get_ref<const std::string&>().empty())
      return bad(path_, where_ + "." + name, "expected a non-empty string");
    return v.get<std::string>();
  }
  // A case glob: a name or a path, so at most 4 KiB (PATH_MAX) long.
  Expected<std::string> glob(const char* name) const {
    auto t = text(name);
    if (t.ok() && t->size() > kMaxGlobBytes)
      return bad(path_, where_ + "." + name,
                 "a glob of " + std::to_string(t->size()) + " bytes (at most " +
                     std::to_string(kMaxGlobBytes) + ")");
    return t;
  }
  Expected<int64_t> integer(const char* name) const {
    const json& v = j_[name];
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      return bad(path_, where_ + "." + name, "expected an integer in the int64 range");
    return v.get<int64_t>();
  }
  Expected<MessageRegex> regex(const char* name) const {
    auto t = text(name);
    if (!t.ok()) return t.error();
    auto re = MessageRegex::compile(*t);
    if (!re.ok()) return bad(path_, where_ + "." + name, re.error().message);
    return re;
  }
  template <class T, class Parse>
  Status names(const char* name, Parse parse, std::vector<T>& out) const {
    const json& v = j_[name];
    if (!v.is_array() || v.empty())
      return bad(path_, where_ + "." + name, "expected a non-empty array of names");
    for (const json& n : v) {
      std::optional<T> x = n.is_string() ? parse(n.get_ref<const std::string&>()) : std::nullopt;
      if (!x)
        return bad(path_, where_ + "." + name,
                   "unknown name " + excerpt(n.is_string() ? n.get<std::string>() : n.dump(), 60));
      out.push_back(*x);
    }
    return {};
  }
  const json& operator[](const char* name) const { return j_[name]; }
  const std::string& path() const { return path_; }
  const std::string& where() const { return where_; }
  Error error(const std::string& field, const std::string& what) const {
    return bad(path_, where_ + (field.empty() ? "" : "." + field), what);
  }

 private:
  const json& j_;
  std::string path_, where_;
};

#define GSCHECK_TRY(expr)                                   \
  do {                                                      \
    if (Status st_ = (expr); !st_.ok()) return st_.error(); \
  } while (0)
#define GSCHECK_TAKE(lhs, expr)      \
  do {                               \
    auto v_ = (expr);                \
    if (!v_.ok()) return v_.error(); \
    lhs = std::move(v_).value();     \
  } while (0)

std::optional<CaseFact> fact_from_name(std::string_view s) {
  for (CaseFact f : kAllFacts)
    if (case_fact_name(f) == s) return f;
  return std::nullopt;
}

Status read_when(const Fields& w, KnownFailure& k) {
  GSCHECK_TRY(w.only({"case", "ops", "dtypes", "index_dtypes", "apis", "semantics", "axis",
                      "batch_dims", "bad_indices_policy", "has", "lacks", "expected",
                      "expected_message", "min_slice_elements"}));
  if (w.has("case")) GSCHECK_TAKE(k.case_pattern, w.glob("case"));
  if (w.has("ops")) GSCHECK_TRY(w.names<Op>("ops", op_from_name, k.ops));
  if (w.has("dtypes")) GSCHECK_TRY(w.names<DType>("dtypes", dtype_from_name, k.dtypes));
  if (w.has("index_dtypes"))
    GSCHECK_TRY(w.names<DType>("index_dtypes", dtype_from_name, k.index_dtypes));
  if (w.has("apis")) GSCHECK_TRY(w.names<Api>("apis", api_from_name, k.apis));
  if (w.has("semantics"))
    GSCHECK_TRY(w.names<Semantics>("semantics", semantics_from_name, k.semantics));
  if (w.has("has")) GSCHECK_TRY(w.names<CaseFact>("has", fact_from_name, k.has));
  if (w.has("lacks")) GSCHECK_TRY(w.names<CaseFact>("lacks", fact_from_name, k.lacks));
  if (w.has("bad_indices_policy")) {
    const json& p = w["bad_indices_policy"];
    if (!p.is_array() || p.empty())
      return w.error("bad_indices_policy", "expected a non-empty array of strings");
    for (const json& s : p) {
      if (!s.is_string()) return w.error("bad_indices_policy", "expected strings");
      k.bad_indices_policies.push_back(s.get<std::string>());
    }
  }
  for (const auto& [name, slot] : {std::pair<const char*, std::optional<int64_t>*>{"axis", &k.axis},
                                   {"batch_dims", &k.batch_dims},
                                   {"min_slice_elements", &k.min_slice_elements}}) {
    if (!w.has(name)) continue;
    int64_t n = 0;
    GSCHECK_TAKE(n, w.integer(name));
    *slot = n;
  }
  if (w.has("expected")) {
    auto outcome = [](const std::string& s) -> std::optional<std::string> {
      if (s == "output" || error_class_from_name(s)) return s;
      return std::nullopt;
    };
    if (w["expected"].is_string()) {
      if (auto o = outcome(w["expected"].get<std::string>()))
        k.expected.push_back(*o);
      else
        return w.error("expected", "neither \"output\" nor an error class name");
    } else {
      GSCHECK_TRY(w.names<std::string>("expected", outcome, k.expected));
    }
  }
  if (w.has("expected_message")) {
    MessageRegex re;
    GSCHECK_TAKE(re, w.regex("expected_message"));
    k.expected_message = std::move(re);
  }
  return {};
}

// "follows": {PART: RULE, ...}, at least one part; each part's rules are in kFollowsParts.
Status read_follows(const Fields& f, KnownFailure& k) {
  using D = reference::Departure;
  using B = D::BadIndex;
  struct Rule {
    const char* name;
    void (*set)(D&);
  };
  struct Part {
    const char* name;
    std::vector<Rule> rules;
  };
  static const Part kFollowsParts[] = {
      {"bad_index",
       {{"raise", [](D& d) { d.bad_index = B::kRaise; }},
        {"zero_fill", [](D& d) { d.bad_index = B::kZeroFill; }},
        {"clamp", [](D& d) { d.bad_index = B::kClamp; }}}},
      {"negative_indices", {{"wrap", [](D& d) { d.wrap_negative = true; }}}},
      {"arithmetic",
       {{"flush_denormals", [](D& d) { d.flush_denormals = true; }},
        {"flush_denormals_in_float",
         [](D& d) {
           d.flush_denormals = true;
           d.min_max_store = D::MinMaxStore::kFlushed;
         }},
        {"flush_denormals_in_float_or_kept",
         [](D& d) {
           d.flush_denormals = true;
           d.min_max_store = D::MinMaxStore::kEither;
         }}}},
      {"int64_indices",
       {{"low_32_bits", [](D& d) { d.int64_cut = D::Int64Cut::kLow32Bits; }},
        {"low_32_bits_after_wrap", [](D& d) { d.int64_cut = D::Int64Cut::kLow32BitsAfterWrap; }},
        {"low_32_bits_unsigned", [](D& d) { d.int64_cut = D::Int64Cut::kLow32BitsUnsigned; }},
        {"jax_numpy", [](D& d) { d.int64_cut = D::Int64Cut::kJaxNumpy; }}}},
      {"duplicates", {{"any_order", [](D& d) { d.any_order_duplicates = true; }}}},
      {"scatter_nd", {{"one_row_copied", [](D& d) { d.one_row_copied = true; }}}},
      {"min_max_ties",
       {{"update", [](D& d) { d.min_max_tie = D::MinMaxTie::kUpdate; }},
        {"xla", [](D& d) { d.min_max_tie = D::MinMaxTie::kXla; }}}},
      {"nan", {{"canonical", [](D& d) { d.canonical_nan = true; }}}},
  };
  std::vector<const char*> parts;
  std::string all;
  for (const Part& p : kFollowsParts) {
    parts.push_back(p.name);
    all += (all.empty() ? "" : ", ") + std::string(p.name);
  }
  GSCHECK_TRY(f.only(parts));
  D& d = k.follows;
  for (const Part& p : kFollowsParts) {
    if (!f.has(p.name)) continue;
    std::string v;
    GSCHECK_TAKE(v, f.text(p.name));
    const Rule* rule = nullptr;
    std::string names;
    for (const Rule& r : p.rules) {
      if (v == r.name) rule = &r;
      names += (names.empty() ? "" : ", ") + std::string(r.name);
    }
    if (!rule)
      return f.error(p.name, "unknown rule " + excerpt(v, 40) + " (expected " + names + ")");
    rule->set(d);
  }
  if (!d.any()) return f.error("", "name at least one of " + all);
  return {};
}

Status read_forgives(const Fields& f, KnownFailure& k) {
  static constexpr std::pair<const char*, Forgive> kKinds[] = {
      {"crash", Forgive::kCrash},       {"error", Forgive::kError},
      {"output", Forgive::kOutput},     {"declined", Forgive::kDeclined},
      {"elements", Forgive::kElements}, {"nondeterministic", Forgive::kNondeterministic},
      {"follows", Forgive::kFollows}};
  GSCHECK_TRY(f.only({"crash", "error", "output", "declined", "elements", "nondeterministic",
                      "follows", "message", "untouched"}));
  int kinds = 0;
  for (const auto& [name, kind] : kKinds)
    if (f.has(name)) {
      ++kinds;
      k.forgives = kind;
    }
  if (kinds != 1)
    return f.error("",
                   "name exactly one of crash, error, output, declined, elements, "
                   "nondeterministic, follows");
  auto flag = [&](const char* name) -> Status {
    if (!f[name].is_boolean() || !f[name].get<bool>()) return f.error(name, "expected true");
    return {};
  };
  switch (k.forgives) {
    case Forgive::kCrash:
    case Forgive::kDeclined: {
      const char* name = k.forgives == Forgive::kCrash ? "crash" : "declined";
      if (f[name].is_boolean()) {
        GSCHECK_TRY(flag(name));
      } else {
        MessageRegex re;
        GSCHECK_TAKE(re, f.regex(name));
        k.message = std::move(re);
      }
      if (f.has("message"))
        return f.error("message", "give the text as the value of " + std::string(name));
      break;
    }
    case Forgive::kError: {
      std::string cls;
      GSCHECK_TAKE(cls, f.text("error"));
      k.error_class = error_class_from_name(cls);
      if (!k.error_class) return f.error("error", "unknown error class " + excerpt(cls, 40));
      if (*k.error_class == ErrorClass::kInternal)
        return f.error("error", "a crash is forgiven by \"crash\", not \"error\": \"internal\"");
      if (*k.error_class == ErrorClass::kUnimplemented)
        return f.error("error", "a declined case is forgiven by \"declined\"");
      if (f.has("message")) {
        MessageRegex re;
        GSCHECK_TAKE(re, f.regex("message"));
        k.message = std::move(re);
      }
      break;
    }
    case Forgive::kOutput:
    case Forgive::kNondeterministic:
      GSCHECK_TRY(flag(k.forgives == Forgive::kOutput ? "output" : "nondeterministic"));
      if (f.has("message"))
        return f.error("message", "only crash, error and declined take a message");
      break;
    case Forgive::kFollows: {
      if (!f["follows"].is_object()) return f.error("follows", "expected an object");
      GSCHECK_TRY(read_follows(Fields(f["follows"], f.path(), f.where() + ".follows"), k));
      if (f.has("message"))
        return f.error("message", "only crash, error and declined take a message");
      break;
    }
    case Forgive::kElements: {
      std::string rule;
      GSCHECK_TAKE(rule, f.text("elements"));
      if (rule == "flushed_subnormal") {
        k.element_rule = ElementRule::kFlushedSubnormal;
      } else if (rule == "nan_bits") {
        k.element_rule = ElementRule::kNanBits;
      } else if (rule == "canonical_nan") {
        k.element_rule = ElementRule::kCanonicalNan;
      } else if (rule == "quieted_nan") {
        k.element_rule = ElementRule::kQuietedNan;
      } else if (rule == "any_value") {
        k.element_rule = ElementRule::kAnyValue;
      } else if (rule == "input_element") {
        k.element_rule = ElementRule::kInputElement;
      } else {
        return f.error("elements", "unknown rule " + excerpt(rule, 40) +
                                       " (expected flushed_subnormal, nan_bits, canonical_nan, "
                                       "quieted_nan, input_element, any_value)");
      }
      if (f.has("message"))
        return f.error("message", "only crash, error and declined take a message");
      if (f.has("untouched")) {
        if (k.element_rule == ElementRule::kAnyValue ||
            k.element_rule == ElementRule::kInputElement)
          return f.error("untouched",
                         "only the arithmetic rules (flushed_subnormal, nan_bits, "
                         "canonical_nan, quieted_nan) take it");
        GSCHECK_TRY(flag("untouched"));
        k.untouched = true;
      }
      break;
    }
  }
  if (k.forgives != Forgive::kElements && f.has("untouched"))
    return f.error("untouched", "only elements rules take it");
  return {};
}

// "host_dependent": {"reason": TEXT, "shown_by": [CASE FILE, ...]}.
Status read_host_dependent(const Fields& f, KnownFailure& k) {
  GSCHECK_TRY(f.only({"reason", "shown_by"}));
  if (!f.has("reason")) return f.error("reason", "missing");
  if (!f.has("shown_by"))
    return f.error("shown_by", "missing: the case files that show the departure where it holds");
  KnownFailure::HostDependence h;
  GSCHECK_TAKE(h.reason, f.text("reason"));
  const json& list = f["shown_by"];
  if (!list.is_array() || list.empty())
    return f.error("shown_by", "expected a non-empty array of case file paths");
  for (const json& p : list) {
    // A relative path without wildcards: the lint must find exactly these files in the run.
    if (!p.is_string() || p.get_ref<const std::string&>().empty() ||
        p.get_ref<const std::string&>().front() == '/' ||
        p.get_ref<const std::string&>().find_first_of("*?") != std::string::npos)
      return f.error("shown_by",
                     "expected relative case file paths without wildcards, got " +
                         (p.is_string() ? "\"" + excerpt(p.get<std::string>(), 60) + "\""
                                        : excerpt(p.dump(), 60)));
    h.shown_by.push_back(p.get<std::string>());
  }
  k.host_dependent = std::move(h);
  return {};
}

}  // namespace

bool names_case_file(std::string_view shown_by, std::string_view file) {
  if (shown_by.empty() || file.size() < shown_by.size()) return false;
  if (file.substr(file.size() - shown_by.size()) != shown_by) return false;
  return file.size() == shown_by.size() || file[file.size() - shown_by.size() - 1] == '/';
}

Expected<KnownFailures> known_failures_from_json(const json& j, const std::string& path) {
  if (!j.is_object()) return bad(path, "top level", "expected an object");
  const Fields top(j, path, "top level");
  GSCHECK_TRY(top.only({"gscheck_known_failures", "description", "known"}));
  if (j.contains("gscheck_known_failures") && j["gscheck_known_failures"] == 1)
    return bad(path, "gscheck_known_failures",
               "format version 1 (entries recognised by outcome text) is no longer read: each "
               "entry now needs an \"id\", a \"when\" predicate on the case and what it "
               "\"forgives\" (docs/report_format.md, \"Known failures\")");
  if (!j.contains("gscheck_known_failures") || j["gscheck_known_failures"] != 2)
    return bad(path, "gscheck_known_failures", "missing or not 2 (format version 2)");
  if (!j.contains("known") || !j["known"].is_array())
    return bad(path, "known", "expected an array of entries");
  KnownFailures out;
  out.path = path;
  const json& list = j["known"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    const std::string where = "known[" + std::to_string(i) + "]";
    if (!e.is_object()) return bad(path, where, "expected an object");
    const Fields f(e, path, where);
    GSCHECK_TRY(f.only({"id", "when", "forgives", "reason", "link", "host_dependent"}));
    KnownFailure k;
    for (const char* name : {"id", "reason", "link"})
      if (!f.has(name)) return bad(path, where + "." + name, "missing");
    GSCHECK_TAKE(k.id, f.text("id"));
    GSCHECK_TAKE(k.reason, f.text("reason"));
    GSCHECK_TAKE(k.link, f.text("link"));
    for (const KnownFailure& other : out.entries)
      if (other.id == k.id)
        return bad(path, where + ".id", "\"" + excerpt(k.id, 60) + "\" is used twice");
    if (!f.has("forgives") || !e["forgives"].is_object())
      return bad(path, where + ".forgives", "expected an object");
    if (f.has("when")) {
      if (!e["when"].is_object()) return bad(path, where + ".when", "expected an object");
      GSCHECK_TRY(read_when(Fields(e["when"], path, where + ".when"), k));
    }
    GSCHECK_TRY(read_forgives(Fields(e["forgives"], path, where + ".forgives"), k));
    if (f.has("host_dependent")) {
      if (!e["host_dependent"].is_object())
        return bad(path, where + ".host_dependent", "expected an object");
      GSCHECK_TRY(
          read_host_dependent(Fields(e["host_dependent"], path, where + ".host_dependent"), k));
    }
    // Any value is an explanation only for named cases; by what cases are, it forgives any bug.
    if (k.forgives == Forgive::kElements && k.element_rule == ElementRule::kAnyValue &&
        k.case_pattern == "*")
      return bad(path, where + ".forgives.elements",
                 "\"any_value\" needs when.case naming the cases it is about");
    out.entries.push_back(std::move(k));
  }
  return out;
}

Expected<KnownFailures> load_known_failures(const std::string& path, int64_t max_bytes) {
  auto text = read_bounded(path, max_bytes);
  if (!text.ok()) return Error{text.error().cls, path + ": " + text.error().message};
  auto j = parse_json_bounded(*text, std::max<int64_t>(max_bytes, 1 << 16) * 3);
  if (!j.ok()) return Error{j.error().cls, path + ": " + j.error().message};
  auto k = known_failures_from_json(*j, path);
  if (k.ok()) k->sha256 = sha256_hex(*text);
  return k;
}

}  // namespace gscheck::reports
