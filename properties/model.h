// The properties' own view of a well-shaped case: which slice each index row addresses.
// Written from the spec for the properties and the mutant backends; the reference and the cuda
// kernels have their own index math and share none of this.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/case.h"

namespace gscheck::props {

/// Where each index row reads (gathers) or writes (scatters). Rows come in batches; within a
/// batch, row r addresses the slice at tuple (column values) of a [column_dims] grid.
///   gather:    out[batch, o, r, s]  = params[batch, o, idx, s]      (o < outer)
///   gather_nd: out[batch, r, s]     = params[batch, tuple, s]
///   scatter:   out[tuple, s]       op= updates[r, s]                 (one batch)
struct Geometry {
  int64_t batches = 1;
  int64_t outer = 1;                 ///< gather only: params dims between the batch dims and axis
  int64_t rows = 0;                  ///< index rows per batch
  std::vector<int64_t> column_dims;  ///< the dimension each index column addresses
  int64_t slice = 1;                 ///< elements per addressed slice
  Shape out_shape;                   ///< the output shape by the op's formula
  int64_t batch_dims = 0;            ///< normalised (gather: 0 when Python drops it)
  int64_t axis = 0;                  ///< gather: normalised axis

  int64_t depth() const { return static_cast<int64_t>(column_dims.size()); }
  /// Number of addressable tuples (product of column_dims).
  int64_t tuples() const;
};

/// The geometry of a case whose shapes and attributes fit its op; nullopt otherwise (the case
/// must then fail validation).
std::optional<Geometry> geometry(const Case& c);

/// Index values of row r of batch b (depth values; one for gather).
std::vector<int64_t> index_row(const Case& c, const Geometry& g, int64_t b, int64_t r);
/// Row-major flat position of a tuple in the column grid; nullopt when a value is out of range.
std::optional<int64_t> tuple_flat(const Geometry& g, const std::vector<int64_t>& tuple);

/// What kind of case this is, for the class tables.
struct CaseClass {
  bool out_of_bounds = false;  ///< some index row addresses nothing
  bool duplicates = false;     ///< two rows of one batch address the same slice
  bool empty = false;          ///< some input or the output has zero elements
  int rank = 0;                ///< rank of params (gathers) or of the output (scatters)
};
/// Classify a case (well-shaped or not: an invalid case only gets its rank and emptiness).
CaseClass classify(const Case& c);

}  // namespace gscheck::props
