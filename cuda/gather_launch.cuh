// gather (tf.gather / GatherV2): the host launcher (buffers, launch through
// cuda/gather_dispatch.cuh, TensorFlow's bad-index message). Plain C++ without nvcc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/executor.h"
#include "cuda/gather_device.cuh"
#include "cuda/gather_dispatch.cuh"
#include "cuda/launch_common.cuh"
#include "cuda/ops.h"

namespace gscheck::cuda {

template <Executor Exec>
Outcome run_gather(Exec& ex, const Case& c, const GatherPlan& p, const RunConfig& cfg) {
  const Tensor& params = *c.params;
  const Tensor& indices = *c.indices;
  auto out = Tensor::uninitialized(params.dtype(), p.out_shape);
  if (!out.ok() || p.out_elements == 0) return out;
  const auto elem = static_cast<uint32_t>(dtype_size(params.dtype()));
  auto bufs = GatherBuffers<Exec>::create(ex, params, indices, out->byte_size(), elem);
  if (!bufs.ok()) return bufs.error();

  const int64_t counts[] = {params.num_elements(), indices.num_elements(), p.out_elements};
  const uint64_t rows = static_cast<uint64_t>(p.batch * p.outer * p.n_idx);
  Status st = with_index_type(indices.dtype(), [&](auto index_tag) -> Status {
    using Index = decltype(index_tag);
    return with_offset_type(counts, [&](auto off_tag) -> Status {
      using Off = decltype(off_tag);
      GatherIndexMap<Index, Off> map{reinterpret_cast<const Index*>(bufs->indices.get()),
                                     DivBy<Off>(static_cast<Off>(p.n_idx)),
                                     DivBy<Off>(static_cast<Off>(p.outer)),
                                     static_cast<Off>(p.axis_dim), bufs->bad.ptr()};
      return launch_gather<Off>(ex, map, bufs->params.get(), bufs->out.data(), rows,
                                static_cast<uint64_t>(p.inner), elem);
    });
  });
  if (!st.ok()) return st.error();
  auto b = bufs->finish(ex, *out, elem);
  if (!b.ok()) return b.error();
  if (cfg.checked && b->any()) {  // TensorFlow reports the first bad index
    return bad_index("indices" + position_string(indices.shape().dims(), b->first) + " = " +
                     std::to_string(indices.int_at(b->first)) + " is not in [0, " +
                     std::to_string(p.axis_dim) + ")");
  }
  return out;
}

}  // namespace gscheck::cuda
