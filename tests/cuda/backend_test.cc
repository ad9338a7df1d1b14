// The cuda-emu backend end to end: ops, out-of-range handling under both semantics, checked
// mode, deterministic row order, capabilities, validation errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "cuda/cuda_backends.h"
#include "tests/cuda/cuda_test_util.h"

namespace gscheck::cuda {
namespace {

using namespace gscheck::cuda::testing;

std::unique_ptr<Backend> emu(bool det = false) {
  return make_cuda_emu_backend(3, KernelOptions{det, /*max_blocks=*/4});
}

template <class T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.num_elements());
}

TEST(CudaEmuGather, AxisAndBatchDims) {
  // params [2,3,2], axis 1, indices [2,2] with batch_dims 1: out[b, i, k] = p[b, idx[b,i], k].
  Case c = gather_case(iota_f32({2, 3, 2}), ints<int32_t>({2, 2}, {2, 0, 1, 1}), 1, 1);
  auto out = emu()->run(c);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<float>(*out), (std::vector<float>{4, 5, 0, 1, 8, 9, 8, 9}));
}

TEST(CudaEmuGather, OutOfRangeZeroesUnderTfGpuAndErrorsUnderTfCpu) {
  Case c = gather_case(iota_f32({4, 2}, 1), ints<int64_t>({3}, {3, 7, -1}));
  auto gpu = emu()->run(c);
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(values<float>(*gpu), (std::vector<float>{7, 8, 0, 0, 0, 0}));
  c.semantics = Semantics::kTfCpu;
  auto cpu = emu()->run(c);
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.error().cls, ErrorClass::kBadIndex);
  EXPECT_EQ(cpu.error().message, "indices[1] = 7 is not in [0, 4)");  // the first bad one
}

TEST(CudaEmuGather, NothingIsReadWhenTheOutputIsEmpty) {
  // params [5,0]: slices are empty, so the bad index 9 is never looked at.
  Case c = gather_case(Tensor::zeros(DType::kFloat32, {5, 0}).value(), ints<int32_t>({2}, {9, 1}),
                       0, 0, Semantics::kTfCpu);
  auto out = emu()->run(c);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->shape(), (Shape{2, 0}));
}

TEST(CudaEmuGatherNd, BadCoordinateZeroesTheWholeRow) {
  Case c = gather_nd_case(iota_f32({2, 3, 2}), ints<int32_t>({3, 2}, {1, 2, 0, 3, 0, 0}));
  auto out = emu()->run(c);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(values<float>(*out), (std::vector<float>{10, 11, 0, 0, 0, 1}));
  c.semantics = Semantics::kTfCpu;
  auto cpu = emu()->run(c);
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.error().cls, ErrorClass::kBadIndex);
  EXPECT_EQ(cpu.error().message, "indices[1] = [0, 3] does not index into param shape [2,3,2]");
  c.bad_indices_policy = "IGNORE";  // tf-cpu with IGNORE zeroes like the GPU
  auto ignore = emu()->run(c);
  ASSERT_TRUE(ignore.ok());
  EXPECT_EQ(values<float>(*ignore), (std::vector<float>{10, 11, 0, 0, 0, 1}));
}

TEST(CudaEmuGatherNd, BatchDims) {
  // params [2,3], indices [2,1,1], batch_dims 1: out[b, j] = params[b, idx[b, j, 0]].
  Case c = gather_nd_case(iota_f32({2, 3}), ints<int64_t>({2, 1, 1}, {2, 0}), 1);
  auto out = emu()->run(c);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->shape(), (Shape{2, 1}));
  EXPECT_EQ(values<float>(*out), (std::vector<float>{2, 3}));
}

TEST(CudaEmuScatter, BadRowsAreSkippedAndTfCpuNamesTheLastOne) {
  Case c = tensor_scatter_case(Op::kTensorScatterAdd, ints<int32_t>({4}, {1, 1, 1, 1}),
                               ints<int32_t>({4, 1}, {0, 9, 3, -2}),
                               ints<int32_t>({4}, {10, 20, 30, 40}));
  auto out = emu()->run(c);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(values<int32_t>(*out), (std::vector<int32_t>{11, 1, 1, 31}));
  c.semantics = Semantics::kTfCpu;
  auto cpu = emu()->run(c);
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.error().cls, ErrorClass::kBadIndex);
  EXPECT_EQ(cpu.error().message, "indices[3] = [-2] does not index into shape [4]");
}

TEST(CudaEmuScatter, ScatterNdSumsDuplicatesAndOrsBools) {
  Case c = scatter_nd_case(ints<int64_t>({3, 1}, {1, 1, 0}),
                           ints<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}), {3, 2});
  auto out = emu()->run(c);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(values<int32_t>(*out), (std::vector<int32_t>{5, 6, 4, 6, 0, 0}));
  Case b = scatter_nd_case(ints<int32_t>({3, 1}, {2, 2, 0}),
                           Tensor::from_values<bool>({3}, {false, true, false}), {3});
  auto bo = emu()->run(b);
  ASSERT_TRUE(bo.ok()) << bo.error().message;
  EXPECT_EQ(values<bool>(*bo), (std::vector<bool>{false, false, true}));
}

TEST(CudaEmuScatter, MinMaxSubUpdate) {
  const Tensor start = Tensor::from_values<float>({3}, {5, 5, 5});
  const Tensor idx = ints<int32_t>({4, 1}, {0, 0, 2, 1});
  const Tensor upd = Tensor::from_values<float>({4}, {7, 3, 9, 1});
  const std::pair<Op, std::vector<float>> expect[] = {
      {Op::kTensorScatterMin, {3, 1, 5}},
      {Op::kTensorScatterMax, {7, 5, 9}},
      {Op::kTensorScatterSub, {-5, 4, -4}},
      {Op::kTensorScatterUpdate, {3, 1, 9}},  // last row wins under tf-cpu
  };
  for (const auto& [op, want] : expect) {
    for (bool det : {false, true}) {
      Case c = tensor_scatter_case(op, start, idx, upd, Semantics::kTfCpu);
      auto out = emu(det)->run(c);
      ASSERT_TRUE(out.ok()) << op_name(op);
      EXPECT_EQ(values<float>(*out), want) << op_name(op) << " det=" << det;
    }
  }
}

// Row order matters for float sums; tf-cpu adds rows in order. Both the tf-cpu runs of cuda-emu
// and every run of cuda-emu-det must reproduce it bit for bit.
TEST(CudaEmuDeterministic, SortedPathEqualsRowOrder) {
  const int rows = 2000, dests = 3, slice = 5;
  std::vector<int32_t> idx(rows);
  std::vector<float> upd(rows * slice);
  std::vector<Float16> upd_h(rows * slice);
  for (int r = 0; r < rows; ++r) {
    idx[r] = (r * 7) % dests;
    for (int j = 0; j < slice; ++j) {
      const float v = std::ldexp(1.0f + 0.37f * ((r * 31 + j) % 17), (r % 23) - 11) *
                      (((r + j) % 3) ? 1.0f : -1.0f);
      upd[r * slice + j] = v;
      upd_h[r * slice + j] = float16_from_float(v / 64);
    }
  }
  std::vector<float> want(dests * slice, 0.5f);
  std::vector<Float16> want_h(dests * slice, float16_from_float(0.5f));
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < slice; ++j) {
      want[idx[r] * slice + j] += upd[r * slice + j];
      want_h[idx[r] * slice + j] =
          float16_from_float(to_float(want_h[idx[r] * slice + j]) + to_float(upd_h[r * slice + j]));
    }
  }
  const Tensor indices = ints<int32_t>({rows, 1}, idx);
  for (const auto& [sem, det] : {std::pair{Semantics::kTfCpu, false},
                                 {Semantics::kTfGpu, true},
                                 {Semantics::kTfCpu, true}}) {
    Case c = tensor_scatter_case(
        Op::kTensorScatterAdd,
        Tensor::from_values<float>({dests, slice}, std::vector<float>(dests * slice, 0.5f)),
        indices, Tensor::from_values<float>({rows, slice}, upd), sem);
    auto out = emu(det)->run(c);
    ASSERT_TRUE(out.ok());
    ASSERT_EQ(std::memcmp(out->data(), want.data(), want.size() * sizeof(float)), 0)
        << semantics_name(sem) << " det=" << det;
    Case h = tensor_scatter_case(
        Op::kTensorScatterAdd,
        Tensor::from_values<Float16>({dests, slice},
                                     std::vector<Float16>(dests * slice, float16_from_float(0.5f))),
        indices, Tensor::from_values<Float16>({rows, slice}, upd_h), sem);
    auto hout = emu(det)->run(h);
    ASSERT_TRUE(hout.ok());
    EXPECT_EQ(values<Float16>(*hout), want_h) << semantics_name(sem) << " det=" << det;
  }
  // Update: the last row of each destination wins.
  Case u = tensor_scatter_case(Op::kTensorScatterUpdate,
                               Tensor::zeros(DType::kFloat32, {dests, slice}).value(), indices,
                               Tensor::from_values<float>({rows, slice}, upd), Semantics::kTfGpu);
  auto uo = emu(true)->run(u);
  ASSERT_TRUE(uo.ok());
  for (int d = 0; d < dests; ++d) {
    int last = rows - 1;
    while (idx[last] != d) --last;
    for (int j = 0; j < slice; ++j)
      EXPECT_EQ(uo->data_as<float>()[d * slice + j], upd[last * slice + j]);
  }
}

TEST(CudaEmuScatter, ErrorPolicyRaisesUnderTfGpuToo) {
  Case c = tensor_scatter_case(Op::kTensorScatterUpdate, ints<int64_t>({3}, {0, 0, 0}),
                               ints<int64_t>({2, 1}, {5, 1}), ints<int64_t>({2}, {7, 8}));
  c.bad_indices_policy = "ERROR";
  auto out = emu()->run(c);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().cls, ErrorClass::kBadIndex);
  c.bad_indices_policy = "";
  auto skip = emu()->run(c);
  ASSERT_TRUE(skip.ok());
  EXPECT_EQ(values<int64_t>(*skip), (std::vector<int64_t>{0, 8, 0}));
}

TEST(CudaEmuScatter, Complex128UpdateNeverTears) {
  // 16-byte elements take the sorted path even under tf-gpu: the last row wins, whole.
  using C = std::complex<double>;
  std::vector<C> upd;
  for (int r = 0; r < 500; ++r) upd.push_back(C(r, -r));
  Case c = tensor_scatter_case(
      Op::kTensorScatterUpdate, Tensor::zeros(DType::kComplex128, {2}).value(),
      ints<int32_t>({500, 1}, std::vector<int32_t>(500, 1)), Tensor::from_values<C>({500}, upd));
  auto out = make_cuda_emu_backend(4)->run(c);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(values<C>(*out), (std::vector<C>{C(0, 0), C(499, -499)}));
}

TEST(CudaEmuAtomics, HotKeyScatterAddLosesNothing) {
  const int rows = 50000;
  Case c = tensor_scatter_case(Op::kTensorScatterAdd, ints<int64_t>({2}, {0, 0}),
                               ints<int32_t>({rows, 1}, std::vector<int32_t>(rows, 1)),
                               ints<int64_t>({rows}, std::vector<int64_t>(rows, 3)));
  auto out = make_cuda_emu_backend(4)->run(c);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(values<int64_t>(*out), (std::vector<int64_t>{0, 3 * rows}));
  // Packed half2 path (even slice): 2048 adds of 1/1024 and 1/2048 are exact.
  const int hr = 2048;
  std::vector<Float16> upd;
  for (int r = 0; r < hr; ++r) {
    upd.push_back(float16_from_float(1.0f / 1024));
    upd.push_back(float16_from_float(1.0f / 2048));
  }
  Case h =
      tensor_scatter_case(Op::kTensorScatterAdd, Tensor::zeros(DType::kFloat16, {1, 2}).value(),
                          ints<int32_t>({hr, 1}, std::vector<int32_t>(hr, 0)),
                          Tensor::from_values<Float16>({hr, 2}, upd));
  auto ho = make_cuda_emu_backend(4)->run(h);
  ASSERT_TRUE(ho.ok());
  EXPECT_EQ(to_float(ho->data_as<Float16>()[0]), 2.0f);
  EXPECT_EQ(to_float(ho->data_as<Float16>()[1]), 1.0f);
}

// The tf-gpu reduce kernel on a hot key: float32 in 4- and 2-wide units and single elements,
// a carried unit per thread, and NaN updates that must not change min / max.
TEST(CudaEmuAtomics, HotKeyReduceWidthsAndNaNUpdates) {
  for (int slice : {4, 2, 3}) {
    const int rows = 3000;
    std::vector<float> upd;
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < slice; ++j)
        upd.push_back(r == 7 ? NAN : static_cast<float>((r * 13 + j) % 101));
    std::vector<int32_t> idx(rows, 1);
    idx[5] = 0;  // one row elsewhere
    const Tensor start = Tensor::zeros(DType::kFloat32, {2, slice}).value();
    for (Op op : {Op::kTensorScatterMin, Op::kTensorScatterMax, Op::kTensorScatterAdd}) {
      Case c =
          tensor_scatter_case(op, start, ints<int32_t>({rows, 1}, idx),
                              Tensor::from_values<float>({rows, slice}, upd), Semantics::kTfGpu);
      auto out = make_cuda_emu_backend(4, KernelOptions{false, 3})->run(c);
      ASSERT_TRUE(out.ok()) << op_name(op);
      const std::vector<float> got = values<float>(*out);
      for (int j = 0; j < slice; ++j) {
        float want = 0;
        if (op == Op::kTensorScatterMin) want = 0;    // start 0 <= every update
        if (op == Op::kTensorScatterMax) want = 100;  // (r*13+j) % 101 reaches 100
        if (op == Op::kTensorScatterAdd) {
          EXPECT_TRUE(std::isnan(got[slice + j])) << "a NaN update poisons a sum";
          continue;
        }
        EXPECT_EQ(got[slice + j], want) << op_name(op) << " slice " << slice << " col " << j;
        EXPECT_EQ(got[j], op == Op::kTensorScatterMax ? static_cast<float>((5 * 13 + j) % 101) : 0)
            << op_name(op);
      }
    }
  }
}

TEST(CudaEmuBackend, CapabilitiesAndVariants) {
  auto b = make_cuda_emu_backend();
  EXPECT_EQ(b->capabilities().name, "cuda-emu");
  EXPECT_FALSE(b->capabilities().deterministic);
  EXPECT_EQ(b->capabilities().ops.size(), 8u);
  EXPECT_EQ(b->capabilities().semantics.size(), 2u);
  auto d = make_cuda_emu_backend(0, KernelOptions{.deterministic = true});
  EXPECT_EQ(d->capabilities().name, "cuda-emu-det");
  EXPECT_TRUE(d->capabilities().deterministic);
}

TEST(CudaEmuBackend, RefusesWhatItDoesNotClaimAndWhatTensorFlowLacks) {
  Case c = gather_case(iota_f32({3}), ints<int16_t>({1}, {0}));
  auto r = emu()->run(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().cls, ErrorClass::kUnimplemented);
  Case m = tensor_scatter_case(Op::kTensorScatterMin, Tensor::zeros(DType::kComplex64, {2}).value(),
                               ints<int32_t>({1, 1}, {0}),
                               Tensor::zeros(DType::kComplex64, {1}).value());
  r = emu()->run(m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().cls, ErrorClass::kUnsupported);
  Case p = gather_nd_case(iota_f32({3}), ints<int32_t>({1, 1}, {0}));
  p.bad_indices_policy = "SOMETIMES";  // no GatherNd kernel is registered for it
  r = emu()->run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().cls, ErrorClass::kUnsupported);
  Case s = scatter_nd_case(ints<int32_t>({1, 1}, {0}), iota_f32({1}), {2});
  s.bad_indices_policy = "SOMETIMES";  // the scatter kernels reject it when constructed
  r = emu()->run(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().cls, ErrorClass::kInvalidArgument);
  EXPECT_EQ(r.error().message, "Unknown bad indices handling attribute: SOMETIMES");
}

TEST(CudaEmuBackend, ValidationErrors) {
  auto b = emu();
  auto axis = b->run(gather_case(iota_f32({3}), ints<int32_t>({1}, {0}), 1));
  ASSERT_FALSE(axis.ok());
  EXPECT_EQ(axis.error().message, "Shape must be at least rank 2 but is rank 1");
  auto extreme = b->run(gather_case(iota_f32({3}), ints<int32_t>({1}, {0}), INT64_MIN));
  ASSERT_FALSE(extreme.ok());
  EXPECT_EQ(extreme.error().cls, ErrorClass::kInvalidArgument);
  auto depth = b->run(gather_nd_case(iota_f32({3}), ints<int32_t>({1, 2}, {0, 0})));
  ASSERT_FALSE(depth.ok());
  EXPECT_EQ(depth.error().message,
            "index innermost dimension length must be <= params rank; saw: 2 vs. 1");
  auto upd = b->run(tensor_scatter_case(Op::kTensorScatterAdd, iota_f32({4}),
                                        ints<int32_t>({2, 1}, {0, 1}), iota_f32({3})));
  ASSERT_FALSE(upd.ok());
  EXPECT_EQ(upd.error().cls, ErrorClass::kInvalidArgument);
  // Rank-1 empty indices are one row of depth 0: updates need the tensor's whole shape.
  auto rank1 = b->run(tensor_scatter_case(Op::kTensorScatterAdd, iota_f32({4}),
                                          ints<int32_t>({0}, {}), iota_f32({0})));
  ASSERT_FALSE(rank1.ok());
  EXPECT_EQ(rank1.error().cls, ErrorClass::kInvalidArgument);
  // An empty tensor with empty indices and updates is a no-op, never a read of indices.
  auto noop = b->run(tensor_scatter_case(Op::kTensorScatterAdd, iota_f32({0}),
                                         ints<int32_t>({0}, {}), iota_f32({0})));
  ASSERT_TRUE(noop.ok()) << noop.error().message;
  EXPECT_EQ(noop->shape(), (Shape{0}));
}

TEST(CudaBackend, FactoryReportsWhyItIsUnavailable) {
  auto b = make_cuda_backend();
  if (b.ok()) GTEST_SKIP() << "a GPU is present; covered by cuda_gpu_test";
  EXPECT_TRUE(b.error().cls == ErrorClass::kUnimplemented ||
              b.error().cls == ErrorClass::kInternal);
  EXPECT_FALSE(b.error().message.empty());
}

}  // namespace
}  // namespace gscheck::cuda
