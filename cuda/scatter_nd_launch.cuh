// scatter_nd and tensor_scatter_nd_*: the host launcher (uploads, the output, the destination
// kernel, the kernel table's dtype checks, TensorFlow's bad-index message). Plain C++ without
// nvcc.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/executor.h"
#include "cuda/guarded_output.h"
#include "cuda/kernel_table.h"
#include "cuda/launch_common.cuh"
#include "cuda/ops.h"
#include "cuda/scatter_nd_dispatch.cuh"

namespace gscheck::cuda {

template <Executor Exec>
Outcome run_scatter_nd(Exec& ex, const Case& c, const ScatterPlan& p, const RunConfig& cfg) {
  const Tensor& indices = *c.indices;
  const Tensor& updates = *c.updates;
  const DType dt = updates.dtype();
  Expected<Tensor> out = c.op == Op::kScatterNd ? Tensor::zeros(dt, p.out_shape) : *c.tensor;
  if (!out.ok() || p.rows == 0 || p.out_elements == 0) return out;
  const ScatterKind kind = scatter_kind(c.op);
  const auto elem = static_cast<uint32_t>(dtype_size(dt));

  auto d_indices = upload(ex, indices.data(), indices.byte_size());
  if (!d_indices.ok()) return d_indices.error();
  auto d_updates = upload(ex, updates.data(), updates.byte_size());
  if (!d_updates.ok()) return d_updates.error();
  // Scatter outputs start from the input (or zeros): every element is defined, no poison.
  auto g = GuardedOutput<Exec>::create(ex, out->byte_size(), std::nullopt);
  if (!g.ok()) return g.error();
  GSCHECK_RETURN_IF_ERROR(ex.to_device(g->data(), out->data(), out->byte_size()));
  auto bad = BadRecord<Exec>::create(ex);
  if (!bad.ok()) return bad.error();

  const int64_t counts[] = {indices.num_elements(), updates.num_elements(), p.out_elements};
  Status st = with_index_type(indices.dtype(), [&](auto index_tag) -> Status {
    using Index = decltype(index_tag);
    return with_offset_type(counts, [&](auto off_tag) -> Status {
      using Off = decltype(off_tag);
      // A racing 16-byte store could tear, so complex128 update always takes the sorted path.
      const bool sorted = cfg.sorted_scatter || (kind == ScatterKind::kUpdate &&
                                                 elem > ScatterPolicy::kMaxAtomicStoreBytes);
      auto dest = ex.scratch(0, p.rows * sizeof(Off) * (sorted ? 2 : 1));
      if (!dest.ok()) return dest.error();
      Off* d_dest = reinterpret_cast<Off*>(*dest);
      Off* d_rows = sorted ? d_dest + p.rows : nullptr;  // the atomic path writes no row numbers
      GSCHECK_RETURN_IF_ERROR((launch_scatter_dest<Index, Off>(
          ex, p, reinterpret_cast<const Index*>(d_indices->get()), d_dest, d_rows, bad->ptr())));
      return visit_dtype(dt, [&](auto tag) -> Status {
        using E = typename decltype(tag)::type;
        if constexpr (kernel_takes_dtype(dtype_of<E>())) {
          using T = typename StorageOf<E>::type;
          if (!kind_has_kernel(kind, dt)) {
            return Error{
                ErrorClass::kUnsupported,
                std::string(op_name(c.op)) + " has no kernel for " + std::string(dtype_name(dt))};
          }
          return apply_scatter_rows<T, Off>(ex, p, kind, sorted, d_updates->get(), g->data(),
                                            d_dest, d_rows);
        } else {
          return Error{ErrorClass::kUnimplemented,
                       "cuda scatter kernels do not take " + std::string(dtype_name(dt))};
        }
      });
    });
  });
  if (!st.ok()) return st.error();
  GSCHECK_RETURN_IF_ERROR(g->finish(ex, reinterpret_cast<uint8_t*>(out->data()), elem));
  auto b = bad->read(ex);
  if (!b.ok()) return b.error();
  if (cfg.checked && b->any()) {
    // tf-cpu applies rows in order and reports the last bad one.
    const std::vector<int64_t>& idims = indices.shape().dims();
    const std::vector<int64_t> row_dims(idims.begin(), idims.end() - 1);
    std::string tuple;
    for (int k = 0; k < p.depth; ++k) {
      tuple += (k ? ", " : "") + std::to_string(indices.int_at(b->last * p.depth + k));
    }
    return bad_index("indices" + position_string(row_dims, b->last) + " = [" + tuple +
                     "] does not index into shape " + p.out_shape.to_string());
  }
  return out;
}

}  // namespace gscheck::cuda
