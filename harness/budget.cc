#include "harness/budget.h"

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace gscheck::harness {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

uint64_t times(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

// The product of dims[from, to); nullopt for a negative dim or a range outside the dims.
std::optional<uint64_t> product(std::span<const int64_t> dims, int64_t from, int64_t to) {
  if (from < 0 || to < from || to > static_cast<int64_t>(dims.size())) return std::nullopt;
  uint64_t n = 1;
  for (int64_t i = from; i < to; ++i) {
    if (dims[static_cast<std::size_t>(i)] < 0) return std::nullopt;
    n = times(n, static_cast<uint64_t>(dims[static_cast<std::size_t>(i)]));
  }
  return n;
}

struct Nominal {
  uint64_t elements = 0;
  int64_t rank = 0;
};

std::optional<Nominal> output_shape(const Case& c) {
  switch (c.op) {
    case Op::kGather: {
      if (!c.params || !c.indices) return std::nullopt;
      const auto& p = c.params->shape().dims();
      const auto& ix = c.indices->shape().dims();
      int64_t axis = c.batch_dims;
      if (c.axis) {
        if (c.axis->num_elements() != 1 || !is_integer(c.axis->dtype())) return std::nullopt;
        axis = c.axis->int_at(0);
      }
      const auto rank = static_cast<int64_t>(p.size());
      if (axis < 0) axis += rank;
      int64_t b = c.batch_dims < 0 ? c.batch_dims + static_cast<int64_t>(ix.size()) : c.batch_dims;
      if (axis < 0 || axis >= rank || b < 0) return std::nullopt;
      auto outer = product(p, 0, axis), rows = product(ix, b, static_cast<int64_t>(ix.size())),
           inner = product(p, axis + 1, rank);
      if (!outer || !rows || !inner) return std::nullopt;
      return Nominal{times(times(*outer, *rows), *inner),
                     rank - 1 + static_cast<int64_t>(ix.size()) - b};
    }
    case Op::kGatherNd: {
      if (!c.params || !c.indices || c.indices->rank() < 1) return std::nullopt;
      const auto& p = c.params->shape().dims();
      const auto& ix = c.indices->shape().dims();
      const int64_t depth = ix.back(), b = c.batch_dims;
      auto rows = product(ix, 0, static_cast<int64_t>(ix.size()) - 1);
      auto slice = product(p, b + depth, static_cast<int64_t>(p.size()));
      if (!rows || !slice || depth < 0 || b < 0) return std::nullopt;
      return Nominal{times(*rows, *slice), static_cast<int64_t>(ix.size() + p.size()) - 1 - b -
                                               depth};
    }
    case Op::kScatterNd: {
      if (!c.shape || !is_integer(c.shape->dtype())) return std::nullopt;
      std::vector<int64_t> dims;
      for (int64_t i = 0; i < c.shape->num_elements(); ++i) dims.push_back(c.shape->int_at(i));
      auto n = product(dims, 0, static_cast<int64_t>(dims.size()));
      if (!n) return std::nullopt;
      return Nominal{*n, static_cast<int64_t>(dims.size())};
    }
    default:  // tensor_scatter_nd_*: the tensor's shape, which the case holds already
      if (!c.tensor) return std::nullopt;
      return Nominal{static_cast<uint64_t>(c.tensor->num_elements()), c.tensor->rank()};
  }
}

// The output's dtype: params', updates' or tensor's.
std::optional<DType> output_dtype(const Case& c) {
  const std::optional<Tensor>& from = c.op == Op::kGather || c.op == Op::kGatherNd ? c.params
                                      : c.op == Op::kScatterNd                     ? c.updates
                                                                                   : c.tensor;
  if (!from) return std::nullopt;
  return from->dtype();
}

}  // namespace

uint64_t nominal_output_bytes(const Case& c) {
  const auto shape = output_shape(c);
  const auto dt = output_dtype(c);
  if (!shape || !dt) return 0;
  return times(shape->elements, *dt == DType::kString ? 16 : dtype_size(*dt));
}

std::optional<std::string> over_budget(const Case& c, int64_t max_bytes) {
  if (const auto shape = output_shape(c); shape && shape->rank > kMaxRank)
    return "its output would have rank " + std::to_string(shape->rank) + ", over gscheck's " +
           std::to_string(kMaxRank);
  const uint64_t bytes = nominal_output_bytes(c);
  if (bytes > static_cast<uint64_t>(std::max<int64_t>(max_bytes, 0)))
    return "its output would take " + std::to_string(bytes) + " bytes, over --max-bytes " +
           std::to_string(max_bytes);
  return std::nullopt;
}

}  // namespace gscheck::harness
