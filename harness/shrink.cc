#include "harness/shrink.h"

#include <chrono>
#include <cstring>
#include <type_traits>
#include <utility>

namespace gscheck::harness {
namespace {

// Where a dimension lives: a dimension of an input tensor, or an entry of scatter_nd's shape.
enum class Field : unsigned char { kParams, kIndices, kUpdates, kTensor, kShape };
struct Member {
  Field field;
  int dim;
};

// Dimensions that must change together, by what they are to the op.
enum class Role : unsigned char {
  kRows,     // index rows (indices' outer dims, and updates' with them)
  kBatch,    // batch_dims: params' and indices' leading dims
  kSlice,    // what one index row moves (params' or the output's trailing dims, and updates')
  kIndexed,  // a dimension an index addresses: only its last element may go
};
struct Group {
  Role role;
  std::vector<Member> members;
  int64_t size = 0;
  bool before_axis = false;  // gather: a params dim before the axis (the axis moves with it)
  bool squeezable = false;   // removing it keeps batch_dims and axis naming the same dims
};
struct Layout {
  std::vector<Group> groups;
  int rows_begin = 0, rows_end = 0;  // indices' row dims (and updates' for scatters)
  bool flattenable = false;
};

std::optional<Tensor>& field(Case& c, Field f) {
  switch (f) {
    case Field::kParams:
      return c.params;
    case Field::kIndices:
      return c.indices;
    case Field::kUpdates:
      return c.updates;
    case Field::kTensor:
      return c.tensor;
    case Field::kShape:
      return c.shape;
  }
  GSCHECK_CHECK(false);
  return c.params;
}

int64_t product(const std::vector<int64_t>& dims, std::size_t begin, std::size_t end) {
  int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

void set_int(Tensor& t, int64_t i, int64_t v) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      t.data_as<T>()[i] = static_cast<T>(v);
    } else {
      GSCHECK_CHECK(false);
    }
  });
}

// The same elements under other dims with the same element count.
Tensor reshape(const Tensor& t, std::vector<int64_t> dims) {
  Tensor out = Tensor::zeros(t.dtype(), Shape(std::move(dims)), INT64_MAX).value();
  GSCHECK_CHECK(out.num_elements() == t.num_elements());
  if (t.dtype() == DType::kString) {
    out.strings() = t.strings();
  } else if (t.byte_size() > 0) {
    std::memcpy(out.data(), t.data(), t.byte_size());
  }
  return out;
}

// t without elements [begin, begin + count) of dimension dim.
Tensor erase_range(const Tensor& t, int dim, int64_t begin, int64_t count) {
  std::vector<int64_t> dims = t.shape().dims();
  const auto d = static_cast<std::size_t>(dim);
  const int64_t outer = product(dims, 0, d), n = dims[d], inner = product(dims, d + 1, dims.size());
  dims[d] -= count;
  Tensor out = Tensor::zeros(t.dtype(), Shape(dims), INT64_MAX).value();
  // Element blocks of `inner` elements: for each outer index, keep [0, begin) and
  // [begin + count, n).
  auto copy = [&](auto&& move_block) {
    int64_t to = 0;
    for (int64_t o = 0; o < outer; ++o) {
      move_block(o * n * inner, to, begin * inner);
      to += begin * inner;
      const int64_t rest = (n - begin - count) * inner;
      move_block((o * n + begin + count) * inner, to, rest);
      to += rest;
    }
  };
  if (t.dtype() == DType::kString) {
    auto& s = out.strings();
    copy([&](int64_t from, int64_t to, int64_t len) {
      for (int64_t i = 0; i < len; ++i)
        s[static_cast<std::size_t>(to + i)] = t.strings()[static_cast<std::size_t>(from + i)];
    });
  } else {
    const auto size = static_cast<int64_t>(dtype_size(t.dtype()));
    copy([&](int64_t from, int64_t to, int64_t len) {
      if (len > 0)
        std::memcpy(out.data() + to * size, t.data() + from * size,
                    static_cast<std::size_t>(len * size));
    });
  }
  return out;
}

Tensor remove_dim(const Tensor& t, int dim) {
  std::vector<int64_t> dims = t.shape().dims();
  GSCHECK_CHECK(dims[static_cast<std::size_t>(dim)] == 1);
  dims.erase(dims.begin() + dim);
  return reshape(t, std::move(dims));
}

// scatter_nd's shape vector with entry k changed (delta) or removed.
Tensor shape_edit(const Tensor& shape, int k, std::optional<int64_t> delta) {
  if (delta) {
    Tensor out = shape;
    set_int(out, k, shape.int_at(k) + *delta);
    return out;
  }
  Tensor out = Tensor::zeros(shape.dtype(), Shape({shape.num_elements() - 1}), INT64_MAX).value();
  for (int64_t i = 0, j = 0; i < shape.num_elements(); ++i)
    if (i != k) set_int(out, j++, shape.int_at(i));
  return out;
}

bool is_int(const std::optional<Tensor>& t) { return t && is_integer(t->dtype()); }

std::optional<Layout> gather_layout(const Case& c) {
  if (!c.params || !is_int(c.indices) || c.params->rank() < 1) return std::nullopt;
  const auto& pd = c.params->shape().dims();
  const auto& id = c.indices->shape().dims();
  const int rp = c.params->rank(), ri = c.indices->rank();
  const int64_t b = c.batch_dims < 0 ? c.batch_dims + ri : c.batch_dims;
  int64_t a = b;
  if (c.axis) {
    if (!is_integer(c.axis->dtype()) || c.axis->num_elements() != 1 || c.axis->rank() > 1)
      return std::nullopt;
    a = c.axis->int_at(0) < 0 ? c.axis->int_at(0) + rp : c.axis->int_at(0);
  }
  if (b < 0 || b > ri || b > a || a >= rp) return std::nullopt;
  Layout l;
  for (int j = 0; j < b; ++j) {
    if (pd[j] != id[j]) return std::nullopt;
    l.groups.push_back({Role::kBatch, {{Field::kParams, j}, {Field::kIndices, j}}, pd[j]});
  }
  // A negative batch_dims counts from the indices' rank: their rank must stay.
  const bool rank_free = c.batch_dims >= 0;
  for (int j = static_cast<int>(b); j < ri; ++j)
    l.groups.push_back({Role::kRows, {{Field::kIndices, j}}, id[j], false, rank_free});
  for (int j = static_cast<int>(b); j < rp; ++j) {
    if (j == a) {
      l.groups.push_back({Role::kIndexed, {{Field::kParams, j}}, pd[j]});
    } else {
      // Python's axis=None is batch_dims, so no params dim is before it but batch dims.
      l.groups.push_back({Role::kSlice, {{Field::kParams, j}}, pd[j], j<a, j> a || c.axis});
    }
  }
  l.rows_begin = static_cast<int>(b);
  l.rows_end = ri;
  l.flattenable = rank_free && ri - b >= 2;
  return l;
}

std::optional<Layout> gather_nd_layout(const Case& c) {
  if (!c.params || !is_int(c.indices) || c.indices->rank() < 1 || c.batch_dims < 0)
    return std::nullopt;
  const auto& pd = c.params->shape().dims();
  const auto& id = c.indices->shape().dims();
  const int rp = c.params->rank(), ri = c.indices->rank();
  const int64_t b = c.batch_dims, depth = id.back();
  if (b >= ri || b + depth > rp) return std::nullopt;
  Layout l;
  for (int j = 0; j < b; ++j) {
    if (pd[j] != id[j]) return std::nullopt;
    l.groups.push_back({Role::kBatch, {{Field::kParams, j}, {Field::kIndices, j}}, pd[j]});
  }
  for (int j = static_cast<int>(b); j < ri - 1; ++j)
    l.groups.push_back({Role::kRows, {{Field::kIndices, j}}, id[j], false, true});
  for (int j = static_cast<int>(b); j < rp; ++j) {
    const Role role = j < b + depth ? Role::kIndexed : Role::kSlice;
    l.groups.push_back({role, {{Field::kParams, j}}, pd[j], false, role == Role::kSlice});
  }
  l.rows_begin = static_cast<int>(b);
  l.rows_end = ri - 1;
  l.flattenable = ri - 1 - b >= 2;
  return l;
}

std::optional<Layout> scatter_layout(const Case& c) {
  if (!is_int(c.indices) || !c.updates || c.indices->rank() < 1) return std::nullopt;
  std::vector<int64_t> out;
  const Field out_field = c.op == Op::kScatterNd ? Field::kShape : Field::kTensor;
  if (c.op == Op::kScatterNd) {
    if (!is_int(c.shape) || c.shape->rank() != 1) return std::nullopt;
    for (int64_t i = 0; i < c.shape->num_elements(); ++i) {
      if (c.shape->int_at(i) < 0) return std::nullopt;
      out.push_back(c.shape->int_at(i));
    }
  } else {
    if (!c.tensor) return std::nullopt;
    out = c.tensor->shape().dims();
  }
  const auto& id = c.indices->shape().dims();
  const auto& ud = c.updates->shape().dims();
  const int ri = c.indices->rank(), ro = static_cast<int>(out.size());
  const int64_t depth = id.back();
  if (depth > ro || static_cast<int64_t>(ud.size()) != ri - 1 + ro - depth) return std::nullopt;
  Layout l;
  for (int j = 0; j < ri - 1; ++j) {
    if (ud[j] != id[j]) return std::nullopt;
    l.groups.push_back(
        {Role::kRows, {{Field::kIndices, j}, {Field::kUpdates, j}}, id[j], false, true});
  }
  for (int j = 0; j < ro; ++j) {
    if (j < depth) {
      l.groups.push_back({Role::kIndexed, {{out_field, j}}, out[j]});
      continue;
    }
    const int u = static_cast<int>(ri - 1 + j - depth);
    if (ud[u] != out[j]) return std::nullopt;
    l.groups.push_back({Role::kSlice, {{out_field, j}, {Field::kUpdates, u}}, out[j], false, true});
  }
  l.rows_begin = 0;
  l.rows_end = ri - 1;
  l.flattenable = ri - 1 >= 2;
  return l;
}

std::optional<Layout> layout(const Case& c) {
  if (c.op == Op::kGather) return gather_layout(c);
  if (c.op == Op::kGatherNd) return gather_nd_layout(c);
  return scatter_layout(c);
}

void add_erase_steps(const Group& g, int index, std::vector<ShrinkStep>& steps) {
  // Blocks of n, n/2, n/4, ... 1, from the end: most failures need few rows, and the first
  // rows are kept longest (a failure that needs row 0 and the last row loses everything between).
  for (int64_t len = g.size; len >= 1; len /= 2)
    for (int64_t begin = g.size - len; begin >= 0; begin -= len)
      steps.push_back({ShrinkStep::kErase, index, begin, len});
}

Tensor gather_axis_minus_one(const Tensor& axis) {
  Tensor out = axis;
  // A negative axis counts from the end and stays; a non-negative one moves down.
  if (axis.int_at(0) >= 0) set_int(out, 0, axis.int_at(0) - 1);
  return out;
}

}  // namespace

std::vector<ShrinkStep> shrink_steps(const Case& c) {
  std::vector<ShrinkStep> steps;
  if (const std::optional<Layout> l = layout(c)) {
    if (l->flattenable) steps.push_back({ShrinkStep::kFlatten});
    for (Role role : {Role::kRows, Role::kBatch, Role::kSlice})
      for (std::size_t i = 0; i < l->groups.size(); ++i)
        if (l->groups[i].role == role) add_erase_steps(l->groups[i], static_cast<int>(i), steps);
    for (std::size_t i = 0; i < l->groups.size(); ++i)
      if (l->groups[i].squeezable && l->groups[i].size == 1)
        steps.push_back({ShrinkStep::kSqueeze, static_cast<int>(i)});
    for (std::size_t i = 0; i < l->groups.size(); ++i)
      if (l->groups[i].role == Role::kIndexed && l->groups[i].size > 0)
        steps.push_back({ShrinkStep::kTrim, static_cast<int>(i), l->groups[i].size - 1, 1});
  }
  // Index values last, and only for few of them: each element is a step or three.
  if (is_int(c.indices) && c.indices->num_elements() <= 256) {
    for (int64_t e = 0; e < c.indices->num_elements(); ++e) {
      const int64_t v = c.indices->int_at(e);
      if (v == 0) continue;
      steps.push_back({ShrinkStep::kIndexValue, 0, 0, 0, e, 0});
      if (v / 2 != 0) steps.push_back({ShrinkStep::kIndexValue, 0, 0, 0, e, v / 2});
      const int64_t nearer = v > 0 ? v - 1 : v + 1;
      if (nearer != 0 && nearer != v / 2)
        steps.push_back({ShrinkStep::kIndexValue, 0, 0, 0, e, nearer});
    }
  }
  return steps;
}

std::optional<Case> apply_step(const Case& c, const ShrinkStep& s) {
  if (s.kind == ShrinkStep::kIndexValue) {
    if (!is_int(c.indices) || s.element < 0 || s.element >= c.indices->num_elements())
      return std::nullopt;
    Case out = c;
    set_int(*out.indices, s.element, s.value);
    return out;
  }
  const std::optional<Layout> l = layout(c);
  if (!l) return std::nullopt;
  Case out = c;
  if (s.kind == ShrinkStep::kFlatten) {
    if (!l->flattenable) return std::nullopt;
    auto merge = [&](const Tensor& t) {
      std::vector<int64_t> dims = t.shape().dims();
      const auto b = static_cast<std::size_t>(l->rows_begin);
      const auto e = static_cast<std::size_t>(l->rows_end);
      const int64_t n = product(dims, b, e);
      dims.erase(dims.begin() + static_cast<long>(b) + 1, dims.begin() + static_cast<long>(e));
      dims[b] = n;
      return reshape(t, std::move(dims));
    };
    out.indices = merge(*c.indices);
    if (is_scatter(c.op)) out.updates = merge(*c.updates);
    return out;
  }
  if (s.group < 0 || static_cast<std::size_t>(s.group) >= l->groups.size()) return std::nullopt;
  const Group& g = l->groups[static_cast<std::size_t>(s.group)];
  if (s.kind == ShrinkStep::kSqueeze) {
    if (!g.squeezable || g.size != 1) return std::nullopt;
    for (const Member& m : g.members) {
      std::optional<Tensor>& t = field(out, m.field);
      t = m.field == Field::kShape ? shape_edit(*t, m.dim, std::nullopt) : remove_dim(*t, m.dim);
    }
    if (g.before_axis && out.axis) out.axis = gather_axis_minus_one(*out.axis);
    return out;
  }
  // kErase and kTrim: the same cut; a trim only ever takes an indexed dimension's last element.
  if (s.count < 1 || s.begin < 0 || s.begin + s.count > g.size) return std::nullopt;
  if ((s.kind == ShrinkStep::kTrim) != (g.role == Role::kIndexed)) return std::nullopt;
  if (s.kind == ShrinkStep::kTrim && (s.count != 1 || s.begin != g.size - 1)) return std::nullopt;
  for (const Member& m : g.members) {
    std::optional<Tensor>& t = field(out, m.field);
    t = m.field == Field::kShape ? shape_edit(*t, m.dim, -s.count)
                                 : erase_range(*t, m.dim, s.begin, s.count);
  }
  return out;
}

Shrunk shrink_case(Case c, const std::function<bool(const Case&)>& keep, ShrinkLimits limits) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  ShrinkStats stats;
  for (bool progress = true; progress;) {
    progress = false;
    for (const ShrinkStep& step : shrink_steps(c)) {
      if ((limits.seconds > 0 && elapsed() >= limits.seconds) || stats.tried >= limits.max_tries) {
        stats.limited = true;
        stats.seconds = elapsed();
        return {std::move(c), stats};
      }
      std::optional<Case> smaller = apply_step(c, step);
      if (!smaller) continue;
      ++stats.tried;
      if (keep(*smaller)) {
        c = std::move(*smaller);
        ++stats.kept;
        progress = true;
        break;
      }
    }
  }
  stats.seconds = elapsed();
  return {std::move(c), stats};
}

}  // namespace gscheck::harness
