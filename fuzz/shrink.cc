#include "fuzz/shrink.h"

#include <cstring>
#include <utility>
#include <vector>

namespace gscheck::fuzz {
namespace {

int64_t product(const std::vector<int64_t>& dims, std::size_t begin, std::size_t end) {
  int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// The same elements under another shape with the same element count.
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

// t without row k of its first dimension.
Tensor erase_row(const Tensor& t, int64_t k) {
  std::vector<int64_t> dims = t.shape().dims();
  const int64_t row = product(dims, 1, dims.size());
  --dims[0];
  Tensor out = Tensor::zeros(t.dtype(), Shape(dims), INT64_MAX).value();
  if (t.dtype() == DType::kString) {
    auto& s = out.strings();
    s = t.strings();
    s.erase(s.begin() + k * row, s.begin() + (k + 1) * row);
  } else if (out.byte_size() > 0) {
    const auto row_bytes = static_cast<std::size_t>(row) * dtype_size(t.dtype());
    const auto before = static_cast<std::size_t>(k) * row_bytes;
    std::memcpy(out.data(), t.data(), before);
    std::memcpy(out.data() + before, t.data() + before + row_bytes, out.byte_size() - before);
  }
  return out;
}

}  // namespace

int64_t row_count(const Case& c) {
  if (!c.indices) return -1;
  const Tensor& idx = *c.indices;
  if (c.op == Op::kGather) return c.batch_dims == 0 && idx.rank() == 1 ? idx.shape().dim(0) : -1;
  if (c.op == Op::kGatherNd) return c.batch_dims == 0 && idx.rank() == 2 ? idx.shape().dim(0) : -1;
  if (idx.rank() == 2 && c.updates && c.updates->rank() >= 1 &&
      c.updates->shape().dim(0) == idx.shape().dim(0)) {
    return idx.shape().dim(0);
  }
  return -1;
}

std::optional<Case> flatten_rows(const Case& c) {
  if (!c.indices || c.batch_dims != 0) return std::nullopt;
  const std::vector<int64_t>& id = c.indices->shape().dims();
  if (id.size() < (c.op == Op::kGather ? 2u : 3u)) return std::nullopt;
  const std::size_t outer = c.op == Op::kGather ? id.size() : id.size() - 1;
  const int64_t n = product(id, 0, outer);
  Case flat = c;
  if (c.op == Op::kGather) {
    flat.indices = reshape(*c.indices, {n});
    return flat;
  }
  flat.indices = reshape(*c.indices, {n, id.back()});
  if (is_scatter(c.op)) {
    if (!c.updates) return std::nullopt;
    const std::vector<int64_t>& ud = c.updates->shape().dims();
    if (ud.size() < outer ||
        !std::equal(id.begin(), id.begin() + static_cast<long>(outer), ud.begin())) {
      return std::nullopt;
    }
    std::vector<int64_t> flat_ud = {n};
    flat_ud.insert(flat_ud.end(), ud.begin() + static_cast<long>(outer), ud.end());
    flat.updates = reshape(*c.updates, flat_ud);
  }
  return flat;
}

Case drop_row(const Case& c, int64_t k) {
  GSCHECK_CHECK(k >= 0 && k < row_count(c));
  Case out = c;
  out.indices = erase_row(*c.indices, k);
  if (is_scatter(c.op)) out.updates = erase_row(*c.updates, k);
  return out;
}

Case shrink_case(Case c, const std::function<bool(const Case&)>& keep) {
  if (auto flat = flatten_rows(c); flat && keep(*flat)) c = std::move(*flat);
  for (int64_t k = row_count(c) - 1; k >= 0; --k) {
    Case smaller = drop_row(c, k);
    if (keep(smaller)) c = std::move(smaller);
  }
  return c;
}

}  // namespace gscheck::fuzz
