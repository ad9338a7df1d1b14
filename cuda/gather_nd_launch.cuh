// gather_nd (tf.gather_nd / GatherNd, batch_dims included): the host launcher (buffers, launch
// through cuda/gather_dispatch.cuh, TensorFlow's bad-index message). Plain C++ without nvcc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/executor.h"
#include "cuda/gather_dispatch.cuh"
#include "cuda/gather_nd_device.cuh"
#include "cuda/launch_common.cuh"
#include "cuda/ops.h"

namespace gscheck::cuda {

template <Executor Exec>
Outcome run_gather_nd(Exec& ex, const Case& c, const GatherNdPlan& p, const RunConfig& cfg) {
  const Tensor& params = *c.params;
  const Tensor& indices = *c.indices;
  auto out = Tensor::uninitialized(params.dtype(), p.out_shape);
  if (!out.ok() || p.out_elements == 0) return out;
  const auto elem = static_cast<uint32_t>(dtype_size(params.dtype()));
  auto bufs = GatherBuffers<Exec>::create(ex, params, indices, out->byte_size(), elem);
  if (!bufs.ok()) return bufs.error();

  const int64_t counts[] = {params.num_elements(), indices.num_elements(), p.out_elements};
  Status st = with_index_type(indices.dtype(), [&](auto index_tag) -> Status {
    using Index = decltype(index_tag);
    return with_offset_type(counts, [&](auto off_tag) -> Status {
      using Off = decltype(off_tag);
      GatherNdIndexMap<Index, Off> map{};
      map.d_indices = reinterpret_cast<const Index*>(bufs->indices.get());
      map.depth = p.depth;
      map.rows_per_batch = DivBy<Off>(static_cast<Off>(p.rows_per_batch));
      map.batch_stride = static_cast<Off>(p.batch_stride);
      for (int k = 0; k < p.depth; ++k) {
        map.dims[k] = static_cast<Off>(p.dims[k]);
        map.strides[k] = static_cast<Off>(p.strides[k]);
      }
      map.d_bad = bufs->bad.ptr();
      return launch_gather<Off>(ex, map, bufs->params.get(), bufs->out.data(),
                                static_cast<uint64_t>(p.rows), static_cast<uint64_t>(p.slice),
                                elem);
    });
  });
  if (!st.ok()) return st.error();
  auto b = bufs->finish(ex, *out, elem);
  if (!b.ok()) return b.error();
  if (cfg.checked && b->any()) {
    // TensorFlow reports the last bad row, its tuple with the batch coordinates prepended.
    const std::vector<int64_t>& idims = indices.shape().dims();
    // The row is located in TensorFlow's reshaped indices [batch] + indices.shape[batch_dims:-1].
    std::vector<int64_t> row_dims;
    if (p.batch_dims > 0) row_dims.push_back(p.rows / p.rows_per_batch);
    row_dims.insert(row_dims.end(), idims.begin() + p.batch_dims, idims.end() - 1);
    const std::vector<int64_t> batch_dims(idims.begin(), idims.begin() + p.batch_dims);
    std::string tuple;
    if (p.batch_dims > 0) {
      const std::string bpos = position_string(batch_dims, b->last / p.rows_per_batch);
      tuple = bpos.substr(1, bpos.size() - 2);
    }
    for (int k = 0; k < p.depth; ++k) {
      if (!tuple.empty()) tuple += ", ";
      tuple += std::to_string(indices.int_at(b->last * p.depth + k));
    }
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (tuple[i] == ',' && (i + 1 >= tuple.size() || tuple[i + 1] != ' '))
        tuple.insert(i + 1, " ");
    }
    return bad_index("indices" + position_string(row_dims, b->last) + " = [" + tuple +
                     "] does not index into param shape " + params.shape().to_string());
  }
  return out;
}

}  // namespace gscheck::cuda
