#include "reference/reference.h"

#include "reference/ops.h"
#include "reference/validate.h"

namespace gscheck::reference {

std::string Departure::describe() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  switch (bad_index) {
    case BadIndex::kSemantics:
      break;
    case BadIndex::kRaise:
      add("bad_index=raise");
      break;
    case BadIndex::kZeroFill:
      add("bad_index=zero_fill");
      break;
    case BadIndex::kClamp:
      add("bad_index=clamp");
      break;
  }
  if (wrap_negative) add("negative_indices=wrap");
  if (flush_denormals)
    add(min_max_store == MinMaxStore::kFlushed  ? "arithmetic=flush_denormals_in_float"
        : min_max_store == MinMaxStore::kEither ? "arithmetic=flush_denormals_in_float_or_kept"
        : min_max_store == MinMaxStore::kKept   ? "arithmetic=flush_denormals_min_max_kept"
                                                : "arithmetic=flush_denormals");
  switch (int64_cut) {
    case Int64Cut::kNone:
      break;
    case Int64Cut::kLow32Bits:
      add("int64_indices=low_32_bits");
      break;
    case Int64Cut::kLow32BitsAfterWrap:
      add("int64_indices=low_32_bits_after_wrap");
      break;
    case Int64Cut::kJaxNumpy:
      add("int64_indices=jax_numpy");
      break;
    case Int64Cut::kLow32BitsUnsigned:
      add("int64_indices=low_32_bits_unsigned");
      break;
  }
  if (any_order_duplicates) add("duplicates=any_order");
  if (one_row_copied) add("scatter_nd=one_row_copied");
  if (min_max_tie == MinMaxTie::kUpdate) add("min_max_ties=update");
  if (min_max_tie == MinMaxTie::kXla) add("min_max_ties=xla");
  if (canonical_nan) add("nan=canonical");
  return s;
}

namespace {

Outcome run_op(const Case& c, const Options& options) {
  if (c.op == Op::kGather) return detail::run_gather(c, options);
  if (c.op == Op::kGatherNd) return detail::run_gather_nd(c, options);
  return detail::run_scatter_nd(c, options);
}

}  // namespace

Outcome run(const Case& c, const Options& options) {
  if (Status s = check_well_formed(c); !s.ok()) return s.error();
  if (Status s = detail::check_input_ranks(c); !s.ok()) return s.error();
  Outcome out = run_op(c, options);
  if (out.ok() && options.departure.canonical_nan) canonicalize_nans(*out);
  return out;
}

}  // namespace gscheck::reference
