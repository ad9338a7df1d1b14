#include "properties/model.h"

#include <algorithm>
#include <map>
#include <set>

namespace gscheck::props {
namespace {

int64_t prod(const std::vector<int64_t>& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < d.size(); ++i) p *= d[i];
  return p;
}
std::vector<int64_t> slice_of(const std::vector<int64_t>& d, size_t begin, size_t end) {
  begin = std::min(begin, d.size());
  end = std::min(end, d.size());
  return {d.begin() + static_cast<std::ptrdiff_t>(begin),
          d.begin() + static_cast<std::ptrdiff_t>(end)};
}
bool fits(const std::vector<int64_t>& d) {
  return std::all_of(d.begin(), d.end(),
                     [](int64_t x) { return x >= 0 && x < (int64_t{1} << 31); });
}

std::optional<Geometry> gather_geometry(const Case& c) {
  const auto& p = c.params->shape().dims();
  const auto& i = c.indices->shape().dims();
  const auto rp = static_cast<int64_t>(p.size());
  const auto ri = static_cast<int64_t>(i.size());
  int64_t axis = c.batch_dims;  // Python: axis=None means axis = batch_dims
  if (c.axis) {
    if (c.axis->rank() != 0) return std::nullopt;
    axis = c.axis->int_at(0);
  }
  // Python drops batch_dims for a constant axis of 0.
  int64_t b = (c.axis && axis == 0) ? 0 : c.batch_dims;
  if (rp < 1 || axis < -rp || axis >= rp) return std::nullopt;
  if (axis < 0) axis += rp;
  if (b < -ri || b > ri) return std::nullopt;
  if (b < 0) b += ri;
  if (b >= rp || b > axis) return std::nullopt;
  for (int64_t k = 0; k < b; ++k)
    if (p[static_cast<size_t>(k)] != i[static_cast<size_t>(k)]) return std::nullopt;
  Geometry g;
  g.axis = axis;
  g.batch_dims = b;
  g.batches = prod(p, 0, static_cast<size_t>(b));
  g.outer = prod(p, static_cast<size_t>(b), static_cast<size_t>(axis));
  g.rows = prod(i, static_cast<size_t>(b), i.size());
  g.column_dims = {p[static_cast<size_t>(axis)]};
  g.slice = prod(p, static_cast<size_t>(axis) + 1, p.size());
  std::vector<int64_t> out = slice_of(p, 0, static_cast<size_t>(axis));
  const auto mid = slice_of(i, static_cast<size_t>(b), i.size());
  const auto tail = slice_of(p, static_cast<size_t>(axis) + 1, p.size());
  out.insert(out.end(), mid.begin(), mid.end());
  out.insert(out.end(), tail.begin(), tail.end());
  g.out_shape = Shape(out);
  return g;
}

std::optional<Geometry> gather_nd_geometry(const Case& c) {
  const auto& p = c.params->shape().dims();
  const auto& i = c.indices->shape().dims();
  const auto rp = static_cast<int64_t>(p.size());
  const auto ri = static_cast<int64_t>(i.size());
  const int64_t b = c.batch_dims;
  if (rp < 1 || ri < 1 || b < 0 || b >= rp || b >= ri) return std::nullopt;
  const int64_t depth = i.back();
  if (depth < 0 || b + depth > rp || b + depth > 7) return std::nullopt;
  for (int64_t k = 0; k < b; ++k)
    if (p[static_cast<size_t>(k)] != i[static_cast<size_t>(k)]) return std::nullopt;
  Geometry g;
  g.batch_dims = b;
  g.batches = prod(p, 0, static_cast<size_t>(b));
  g.rows = prod(i, static_cast<size_t>(b), i.size() - 1);
  g.column_dims = slice_of(p, static_cast<size_t>(b), static_cast<size_t>(b + depth));
  g.slice = prod(p, static_cast<size_t>(b + depth), p.size());
  std::vector<int64_t> out = slice_of(i, 0, i.size() - 1);
  const auto tail = slice_of(p, static_cast<size_t>(b + depth), p.size());
  out.insert(out.end(), tail.begin(), tail.end());
  g.out_shape = Shape(out);
  return g;
}

std::optional<Geometry> scatter_geometry(const Case& c) {
  std::vector<int64_t> out;
  if (c.op == Op::kScatterNd) {
    if (c.shape->rank() != 1) return std::nullopt;
    for (int64_t k = 0; k < c.shape->num_elements(); ++k) out.push_back(c.shape->int_at(k));
  } else {
    out = c.tensor->shape().dims();
  }
  const auto& i = c.indices->shape().dims();
  const auto& u = c.updates->shape().dims();
  if (out.empty() || i.size() < 2 || !fits(out)) return std::nullopt;
  const int64_t depth = i.back();
  if (depth < 1 || depth > static_cast<int64_t>(out.size()) || depth > 7) return std::nullopt;
  std::vector<int64_t> want = slice_of(i, 0, i.size() - 1);
  const auto tail = slice_of(out, static_cast<size_t>(depth), out.size());
  want.insert(want.end(), tail.begin(), tail.end());
  if (want != u) return std::nullopt;
  Geometry g;
  g.rows = prod(i, 0, i.size() - 1);
  g.column_dims = slice_of(out, 0, static_cast<size_t>(depth));
  g.slice = prod(out, static_cast<size_t>(depth), out.size());
  g.out_shape = Shape(out);
  return g;
}

}  // namespace

int64_t Geometry::tuples() const { return prod(column_dims, 0, column_dims.size()); }

std::optional<Geometry> geometry(const Case& c) {
  if (!check_well_formed(c).ok()) return std::nullopt;
  if (c.op == Op::kGather) return gather_geometry(c);
  if (c.op == Op::kGatherNd) return gather_nd_geometry(c);
  return scatter_geometry(c);
}

std::vector<int64_t> index_row(const Case& c, const Geometry& g, int64_t b, int64_t r) {
  const int64_t d = g.depth();
  // gather: one value per row; the others: depth values per row, batches laid out first.
  const int64_t first = (b * g.rows + r) * (c.op == Op::kGather ? 1 : d);
  std::vector<int64_t> row;
  for (int64_t k = 0; k < (c.op == Op::kGather ? 1 : d); ++k)
    row.push_back(c.indices->int_at(first + k));
  return row;
}

std::optional<int64_t> tuple_flat(const Geometry& g, const std::vector<int64_t>& tuple) {
  int64_t flat = 0;
  for (size_t k = 0; k < tuple.size(); ++k) {
    const int64_t n = g.column_dims[k];
    if (tuple[k] < 0 || tuple[k] >= n) return std::nullopt;
    flat = flat * n + tuple[k];
  }
  return flat;
}

CaseClass classify(const Case& c) {
  CaseClass k;
  for (const auto* t : {&c.params, &c.indices, &c.updates, &c.tensor})
    if (*t && (*t)->num_elements() == 0) k.empty = true;
  if (c.params) k.rank = c.params->rank();
  if (c.tensor) k.rank = c.tensor->rank();
  if (c.shape) k.rank = static_cast<int>(c.shape->num_elements());
  const std::optional<Geometry> g = geometry(c);
  if (!g) return k;
  if (g->out_shape.num_elements().value_or(0) == 0) k.empty = true;
  if (g->depth() == 0) {  // gather_nd depth 0: every row is the empty tuple (maybe 2^31 of them)
    k.duplicates = g->rows > 1 && g->batches > 0;
    return k;
  }
  for (int64_t b = 0; b < g->batches; ++b) {
    std::set<int64_t> seen;
    for (int64_t r = 0; r < g->rows; ++r) {
      const auto flat = tuple_flat(*g, index_row(c, *g, b, r));
      if (!flat) {
        k.out_of_bounds = true;
      } else if (!seen.insert(*flat).second) {
        k.duplicates = true;
      }
    }
  }
  return k;
}

}  // namespace gscheck::props
