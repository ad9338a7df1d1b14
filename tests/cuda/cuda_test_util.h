// Helpers for the cuda tests: case builders with self-describing data.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "core/case.h"

namespace gscheck::cuda::testing {

/// A float32 tensor whose element i is i (exact up to 2^24).
inline Tensor iota_f32(Shape s, float start = 0) {
  const int64_t n = *s.num_elements();
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return Tensor::from_values<float>(std::move(s), v);
}

template <class I>
Tensor ints(Shape s, std::vector<I> v) {
  return Tensor::from_values<I>(std::move(s), v);
}

inline Case gather_case(Tensor params, Tensor indices, std::optional<int64_t> axis = 0,
                        int64_t batch_dims = 0, Semantics sem = Semantics::kTfGpu) {
  Case c;
  c.op = Op::kGather;
  c.semantics = sem;
  c.params = std::move(params);
  c.indices = std::move(indices);
  if (axis) c.axis = Tensor::from_values<int64_t>(Shape{}, {*axis});
  c.batch_dims = batch_dims;
  return c;
}

inline Case gather_nd_case(Tensor params, Tensor indices, int64_t batch_dims = 0,
                           Semantics sem = Semantics::kTfGpu) {
  Case c;
  c.op = Op::kGatherNd;
  c.semantics = sem;
  c.params = std::move(params);
  c.indices = std::move(indices);
  c.batch_dims = batch_dims;
  return c;
}

inline Case tensor_scatter_case(Op op, Tensor tensor, Tensor indices, Tensor updates,
                                Semantics sem = Semantics::kTfGpu) {
  Case c;
  c.op = op;
  c.semantics = sem;
  c.tensor = std::move(tensor);
  c.indices = std::move(indices);
  c.updates = std::move(updates);
  return c;
}

inline Case scatter_nd_case(Tensor indices, Tensor updates, std::vector<int64_t> shape,
                            Semantics sem = Semantics::kTfGpu) {
  Case c;
  c.op = Op::kScatterNd;
  c.semantics = sem;
  c.indices = std::move(indices);
  c.updates = std::move(updates);
  const int64_t n = static_cast<int64_t>(shape.size());
  c.shape = Tensor::from_values<int64_t>(Shape{n}, shape);
  return c;
}

}  // namespace gscheck::cuda::testing
