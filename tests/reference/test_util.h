// Small builders for reference tests: typed tensors, cases, and outcome expectations.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"
#include "reference/reference.h"

namespace gscheck::testing {

template <class T>
Tensor tensor(Shape shape, std::vector<T> values) {
  return Tensor::from_values<T>(std::move(shape), values);
}
inline Tensor i32(Shape shape, std::vector<int32_t> v) { return tensor<int32_t>(shape, v); }
inline Tensor i64(Shape shape, std::vector<int64_t> v) { return tensor<int64_t>(shape, v); }
inline Tensor f32(Shape shape, std::vector<float> v) { return tensor<float>(shape, v); }
inline Tensor scalar64(int64_t v) { return i64(Shape{}, {v}); }
/// A zero-filled tensor (any dtype), for shape-only tests.
inline Tensor zeros(DType dt, Shape shape) { return Tensor::zeros(dt, std::move(shape)).value(); }
/// 0, 1, 2, ... as float: every element names its own flat position.
inline Tensor iota_f32(Shape shape) {
  Tensor t = zeros(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data_as<float>()[i] = static_cast<float>(i);
  return t;
}

inline Case gather(Tensor params, Tensor indices, std::optional<int64_t> axis = std::nullopt,
                   int64_t batch_dims = 0) {
  Case c;
  c.op = Op::kGather;
  c.params = std::move(params);
  c.indices = std::move(indices);
  if (axis) c.axis = scalar64(*axis);
  c.batch_dims = batch_dims;
  return c;
}
inline Case gather_nd(Tensor params, Tensor indices, int64_t batch_dims = 0,
                      std::string policy = "") {
  Case c;
  c.op = Op::kGatherNd;
  c.params = std::move(params);
  c.indices = std::move(indices);
  c.batch_dims = batch_dims;
  c.bad_indices_policy = std::move(policy);
  return c;
}
inline Case scatter_nd(Tensor indices, Tensor updates, Tensor shape, std::string policy = "") {
  Case c;
  c.op = Op::kScatterNd;
  c.indices = std::move(indices);
  c.updates = std::move(updates);
  c.shape = std::move(shape);
  c.bad_indices_policy = std::move(policy);
  return c;
}
inline Case tensor_scatter(Op op, Tensor tensor, Tensor indices, Tensor updates,
                           std::string policy = "") {
  Case c;
  c.op = op;
  c.tensor = std::move(tensor);
  c.indices = std::move(indices);
  c.updates = std::move(updates);
  c.bad_indices_policy = std::move(policy);
  return c;
}
inline Case on_gpu(Case c) {
  c.semantics = Semantics::kTfGpu;
  return c;
}

/// The outcome is an error of this class with exactly this message.
inline void expect_error(const Outcome& o, ErrorClass cls, const std::string& message) {
  ASSERT_FALSE(o.ok()) << "expected error: " << message;
  EXPECT_EQ(error_class_name(o.error().cls), error_class_name(cls)) << o.error().message;
  EXPECT_EQ(o.error().message, message);
}
inline void expect_invalid(const Case& c, const std::string& message) {
  expect_error(reference::run(c), ErrorClass::kInvalidArgument, message);
}
inline void expect_bad_index(const Case& c, const std::string& message) {
  expect_error(reference::run(c), ErrorClass::kBadIndex, message);
}
inline void expect_class(const Case& c, ErrorClass cls) {
  Outcome o = reference::run(c);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(error_class_name(o.error().cls), error_class_name(cls)) << o.error().message;
}

/// The outcome is a tensor bit-equal to `want`.
inline void expect_tensor(const Outcome& o, const Tensor& want) {
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->shape(), want.shape())
      << o->shape().to_string() << " vs " << want.shape().to_string();
  EXPECT_TRUE(o->bit_equal(want));
}
inline void expect_output(const Case& c, const Tensor& want) {
  expect_tensor(reference::run(c), want);
}

}  // namespace gscheck::testing
