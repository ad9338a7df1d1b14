#include "compare/triage.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "compare/elements.h"

namespace gscheck::compare {
namespace {

using Dims = std::vector<int64_t>;

// Past this many elements an input is not searched for the backend's value (8 searches a case).
constexpr int64_t kSearchCap = int64_t{1} << 22;

int64_t flat_of(const Dims& dims, const Dims& index) {
  int64_t f = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + index[i];
  return f;
}

Dims concat(std::initializer_list<Dims> parts) {
  Dims d;
  for (const Dims& p : parts) d.insert(d.end(), p.begin(), p.end());
  return d;
}

Dims slice(const Dims& d, std::size_t from, std::size_t to) {
  return Dims(d.begin() + static_cast<std::ptrdiff_t>(std::min(from, d.size())),
              d.begin() + static_cast<std::ptrdiff_t>(std::min(to, d.size())));
}

// Where an input holds exactly the bits of the backend's value.
struct Found {
  std::string input;
  std::vector<Dims> where;  // the first few
  int64_t count = 0;
};

// stop_after: the search ends at that many matches (count is then a lower bound).
Found find_bits(const char* name, const Tensor& t, const std::byte* value,
                int64_t stop_after = INT64_MAX) {
  Found f{name, {}, 0};
  if (t.dtype() == DType::kString || t.num_elements() > kSearchCap) return f;
  const std::size_t size = dtype_size(t.dtype());
  const std::byte* p = t.data();
  for (int64_t i = 0; i < t.num_elements() && f.count < stop_after; ++i) {
    if (std::memcmp(p + i * size, value, size) != 0) continue;
    if (++f.count <= 2) f.where.push_back(unravel(t.shape(), i));
  }
  return f;
}

// The index row a gather reads through, the params coordinate TensorFlow's rule reads for it, and
// the coordinates a clamping or a wrapping backend would read instead.
struct Source {
  std::string row;              // "indices[2] = [7,1]"
  std::string out_of_range;     // "" or "7 is out of range for params dim 0 (size 4)"
  Dims read, clamped, wrapped;  // params coordinates; clamped/wrapped only when out of range
  bool has_wrapped = false;
};

// Coordinates `coords` (into params dims from `first`) against those dims.
void place(Source& s, const Dims& params, std::size_t first, const Dims& prefix, const Dims& coords,
           const Dims& suffix) {
  Dims clamped = coords, wrapped = coords;
  for (std::size_t k = 0; k < coords.size(); ++k) {
    const int64_t dim = params[first + k], v = coords[k];
    if (v >= 0 && v < dim) continue;
    if (s.out_of_range.empty())
      s.out_of_range = std::to_string(v) + " is out of range for params dim " +
                       std::to_string(first + k) + " (size " + std::to_string(dim) + ")";
    clamped[k] = std::clamp<int64_t>(v, 0, std::max<int64_t>(dim - 1, 0));
    if (v < 0 && v >= -dim) s.has_wrapped = true;
    wrapped[k] = std::clamp<int64_t>(v < 0 ? v + dim : v, 0, std::max<int64_t>(dim - 1, 0));
  }
  s.read = concat({prefix, coords, suffix});
  if (!s.out_of_range.empty()) {
    s.clamped = concat({prefix, clamped, suffix});
    s.wrapped = concat({prefix, wrapped, suffix});
  }
}

std::optional<Source> gather_source(const Case& c, const Dims& out, const Dims& o) {
  const Dims p = c.params->shape().dims(), ind = c.indices->shape().dims();
  const auto rp = static_cast<int64_t>(p.size()), ri = static_cast<int64_t>(ind.size());
  int64_t bd = c.batch_dims < 0 ? c.batch_dims + ri : c.batch_dims;
  int64_t a = bd;  // Python's axis=None
  if (c.axis) {
    if (c.axis->num_elements() != 1 || !is_integer(c.axis->dtype())) return std::nullopt;
    const int64_t raw = c.axis->int_at(0);
    if (c.api == Api::kPython && raw == 0) bd = 0;  // tf.gather drops batch_dims for axis 0
    a = raw < 0 ? raw + rp : raw;
  }
  if (a < 0 || a >= rp || bd < 0 || bd > std::min(a, ri)) return std::nullopt;
  const auto ua = static_cast<std::size_t>(a), ubd = static_cast<std::size_t>(bd);
  const std::size_t n_idx = static_cast<std::size_t>(ri - bd);
  if (out != concat({slice(p, 0, ua), slice(ind, ubd, ind.size()), slice(p, ua + 1, p.size())}))
    return std::nullopt;
  const Dims at = concat({slice(o, 0, ubd), slice(o, ua, ua + n_idx)});
  const int64_t v = c.indices->int_at(flat_of(ind, at));
  Source s;
  s.row = "indices" + format_index(at) + " = " + std::to_string(v);
  place(s, p, ua, slice(o, 0, ua), {v}, slice(o, ua + n_idx, o.size()));
  return s;
}

std::optional<Source> gather_nd_source(const Case& c, const Dims& out, const Dims& o) {
  const Dims p = c.params->shape().dims(), ind = c.indices->shape().dims();
  if (ind.empty()) return std::nullopt;
  const auto ri = ind.size();
  const int64_t depth = ind.back();
  const int64_t bd = c.batch_dims < 0 ? c.batch_dims + static_cast<int64_t>(ri) : c.batch_dims;
  if (bd < 0 || bd + depth > static_cast<int64_t>(p.size()) || bd >= static_cast<int64_t>(ri))
    return std::nullopt;
  const auto ubd = static_cast<std::size_t>(bd), first = ubd + static_cast<std::size_t>(depth);
  if (out != concat({slice(ind, 0, ri - 1), slice(p, first, p.size())})) return std::nullopt;
  const Dims row_at = slice(o, 0, ri - 1);
  const int64_t row = flat_of(slice(ind, 0, ri - 1), row_at);
  Dims coords;
  for (int64_t k = 0; k < depth; ++k) coords.push_back(c.indices->int_at(row * depth + k));
  Source s;
  s.row = "indices" + format_index(row_at) + " = " + format_index(coords);
  place(s, p, ubd, slice(o, 0, ubd), coords, slice(o, ri - 1, o.size()));
  return s;
}

std::string join_rows(const std::vector<int64_t>& rows, int64_t count) {
  std::string s;
  for (std::size_t i = 0; i < rows.size(); ++i) s += (i ? ", " : "") + std::to_string(rows[i]);
  if (count > static_cast<int64_t>(rows.size()))
    s += " and " + std::to_string(count - static_cast<int64_t>(rows.size())) + " more";
  return s;
}

// Which index rows address the output slice holding `o`, in range or once clamped or wrapped.
std::optional<std::string> scatter_rows(const Case& c, const Dims& out, const Dims& o) {
  const Dims ind = c.indices->shape().dims();
  if (ind.empty()) return std::nullopt;
  const int64_t depth = ind.back();
  if (depth > static_cast<int64_t>(out.size())) return std::nullopt;
  int64_t rows = 1;
  for (std::size_t k = 0; k + 1 < ind.size(); ++k) rows *= ind[k];
  const Dims target = slice(o, 0, static_cast<std::size_t>(depth));
  std::vector<int64_t> exact, clamped, wrapped;
  int64_t n_exact = 0, n_clamped = 0, n_wrapped = 0;
  for (int64_t r = 0; r < rows; ++r) {
    bool hit = true, bad = false, hit_clamped = true, hit_wrapped = true, negative = false;
    for (int64_t k = 0; k < depth; ++k) {
      const int64_t v = c.indices->int_at(r * depth + k), dim = out[static_cast<std::size_t>(k)];
      const int64_t t = target[static_cast<std::size_t>(k)];
      bad |= v < 0 || v >= dim;
      negative |= v < 0 && v >= -dim;
      hit &= v == t;
      hit_clamped &= std::clamp<int64_t>(v, 0, std::max<int64_t>(dim - 1, 0)) == t;
      hit_wrapped &= (v < 0 && v >= -dim ? v + dim : v) == t;
    }
    auto add = [](std::vector<int64_t>& v, int64_t& n, int64_t r) {
      if (++n <= 4) v.push_back(r);
    };
    if (hit) add(exact, n_exact, r);
    if (bad && hit_clamped) add(clamped, n_clamped, r);
    if (negative && hit_wrapped) add(wrapped, n_wrapped, r);
  }
  std::string s = "slice " + format_index(target) + " is written by ";
  s += n_exact ? "index row" + std::string(n_exact > 1 ? "s " : " ") + join_rows(exact, n_exact)
               : "no index row";
  if (n_clamped)
    s += "; out-of-range row(s) " + join_rows(clamped, n_clamped) + " land here clamped";
  if (n_wrapped) s += "; negative row(s) " + join_rows(wrapped, n_wrapped) + " land here wrapped";
  return s;
}

std::string found_text(const Found& f, const Source* src) {
  const Dims& at = f.where.front();
  std::string s = f.input + format_index(at);
  if (src && !src->out_of_range.empty()) {
    if (src->has_wrapped && at == src->wrapped && at != src->clamped) {
      s += " (the wrapped coordinate)";
    } else if (at == src->clamped) {
      s += " (the clamped coordinate)";
    }
  } else if (src && at == src->read) {
    s += " (what TensorFlow reads)";
  }
  if (f.count > 1) s += " (one of " + std::to_string(f.count) + " such elements)";
  return s;
}

}  // namespace

bool is_input_element(const Case& c, const Tensor& got, int64_t flat) {
  if (got.dtype() == DType::kString || flat < 0 || flat >= got.num_elements()) return false;
  const std::byte* value = got.data() + flat * static_cast<int64_t>(dtype_size(got.dtype()));
  for (const std::optional<Tensor>* in : {&c.params, &c.tensor, &c.updates})
    if (*in && (*in)->dtype() == got.dtype() && find_bits("", **in, value, 1).count) return true;
  return false;
}

std::string triage_element(const Case& c, const Tensor& got, const Dims& index) {
  if (!c.indices || got.dtype() == DType::kString || index.size() != got.shape().dims().size())
    return "";
  const Dims out = got.shape().dims();
  const int64_t flat = flat_of(out, index);
  const std::byte* value = got.data() + flat * dtype_size(got.dtype());
  const std::string v = "got " + format_element(got, flat);
  const bool zero = std::all_of(value, value + dtype_size(got.dtype()),
                                [](std::byte b) { return b == std::byte{0}; });
  std::vector<Found> found;
  std::optional<Source> src;
  std::string where;
  const bool movement =
      c.op == Op::kGather || c.op == Op::kGatherNd || c.op == Op::kTensorScatterUpdate;
  if (c.op == Op::kGather || c.op == Op::kGatherNd) {
    if (!c.params || c.params->dtype() != got.dtype()) return "";
    src = c.op == Op::kGather ? gather_source(c, out, index) : gather_nd_source(c, out, index);
    if (!src) return "";
    where = "from " + src->row + ": " +
            (src->out_of_range.empty() ? "TensorFlow reads params" + format_index(src->read)
                                       : src->out_of_range);
    found.push_back(find_bits("params", *c.params, value));
  } else {
    if (!c.updates || c.updates->dtype() != got.dtype()) return "";
    const auto rows = scatter_rows(c, out, index);
    if (!rows) return "";
    where = *rows;
    found.push_back(find_bits("updates", *c.updates, value));
    if (c.tensor && c.tensor->dtype() == got.dtype())
      found.push_back(find_bits("tensor", *c.tensor, value));
  }
  for (const Found& f : found)
    if (f.count) return where + "; " + v + " = " + found_text(f, src ? &*src : nullptr);
  if (zero) return where + "; " + v + ": zero, in no input";
  return where + "; " + v + ": in no input" +
         (movement ? " (memory the backend never wrote?)" : " as a single element");
}

}  // namespace gscheck::compare
