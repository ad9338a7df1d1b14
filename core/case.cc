#include "core/case.h"

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <vector>

namespace gscheck {

std::optional<BadIndicesPolicy> bad_indices_policy_from_name(std::string_view s) {
  if (s.empty() || s == "DEFAULT") return BadIndicesPolicy::kDefault;
  if (s == "ERROR") return BadIndicesPolicy::kError;
  if (s == "IGNORE") return BadIndicesPolicy::kIgnore;
  return std::nullopt;
}
namespace {
constexpr std::array<std::string_view, 8> kOpNames = {"gather",
                                                      "gather_nd",
                                                      "scatter_nd",
                                                      "tensor_scatter_nd_update",
                                                      "tensor_scatter_nd_add",
                                                      "tensor_scatter_nd_sub",
                                                      "tensor_scatter_nd_min",
                                                      "tensor_scatter_nd_max"};
}  // namespace

std::string_view op_name(Op op) { return kOpNames[static_cast<size_t>(op)]; }

std::optional<Op> op_from_name(std::string_view name) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (kOpNames[i] == name) return static_cast<Op>(i);
  return std::nullopt;
}

bool is_scatter(Op op) { return op >= Op::kScatterNd; }
bool is_tensor_scatter(Op op) { return op >= Op::kTensorScatterUpdate; }

std::string_view semantics_name(Semantics s) {
  switch (s) {
    case Semantics::kTfCpu:
      return "tf-cpu";
    case Semantics::kTfGpu:
      return "tf-gpu";
    case Semantics::kXla:
      return "xla";
    case Semantics::kJax:
      return "jax";
  }
  return "?";
}

std::optional<Semantics> semantics_from_name(std::string_view name) {
  for (Semantics s : kAllSemantics)
    if (semantics_name(s) == name) return s;
  return std::nullopt;
}

std::string semantics_names() {
  std::string out;
  for (Semantics s : kAllSemantics) {
    if (!out.empty()) out += ", ";
    out += semantics_name(s);
  }
  return out;
}

std::string_view api_name(Api a) { return a == Api::kPython ? "python" : "kernel"; }

std::optional<Api> api_from_name(std::string_view name) {
  if (name == "python") return Api::kPython;
  if (name == "kernel") return Api::kKernel;
  return std::nullopt;
}

bool same_at_both_apis(const Case& c) {
  if (c.op == Op::kGatherNd) return c.batch_dims == 0;
  if (c.op != Op::kGather) return true;
  if (!c.axis) return false;
  // Python tests `axis != 0` with NumPy: ValueError for 0 or 2+ elements; the kernel does not.
  if (c.axis->num_elements() != 1) return false;
  const bool constant_zero = is_integer(c.axis->dtype()) && c.axis->int_at(0) == 0;
  return !(constant_zero && c.batch_dims != 0);
}

Status check_well_formed(const Case& c) {
  const std::string op(op_name(c.op));
  auto need = [&](const std::optional<Tensor>& t, const char* field, bool wanted) -> Status {
    if (wanted && !t) return parse_error(op + " needs input '" + field + "'");
    if (!wanted && t) return parse_error(op + " takes no input '" + field + "'");
    return {};
  };
  const bool gathers = !is_scatter(c.op);
  GSCHECK_RETURN_IF_ERROR(need(c.params, "params", gathers));
  GSCHECK_RETURN_IF_ERROR(need(c.indices, "indices", true));
  GSCHECK_RETURN_IF_ERROR(need(c.updates, "updates", !gathers));
  GSCHECK_RETURN_IF_ERROR(need(c.tensor, "tensor", is_tensor_scatter(c.op)));
  GSCHECK_RETURN_IF_ERROR(need(c.shape, "shape", c.op == Op::kScatterNd));
  if (c.op != Op::kGather && c.axis) return parse_error(op + " takes no attribute 'axis'");
  if (is_scatter(c.op) && c.batch_dims != 0)
    return parse_error(op + " takes no attribute 'batch_dims'");
  if (c.api == Api::kKernel && c.op == Op::kGather && !c.axis)
    return parse_error(
        "the GatherV2 kernel takes axis as an input: a kernel-level gather needs "
        "attribute 'axis' (axis=None is Python's)");
  if (c.api == Api::kKernel && c.op == Op::kGatherNd && c.batch_dims != 0)
    return parse_error(
        "the GatherNd kernel has no attribute 'batch_dims' (Python's tf.gather_nd "
        "lowers it): a kernel-level gather_nd must leave it 0");
  if (c.op == Op::kGather && !c.bad_indices_policy.empty())
    return parse_error("gather takes no attribute 'bad_indices_policy'");
  if (c.axis && !is_integer(c.axis->dtype()))
    return parse_error("attribute 'axis' must be an integer tensor");
  if (c.shape && !is_integer(c.shape->dtype()))
    return parse_error("input 'shape' must be an integer tensor");
  if (!is_integer(c.indices->dtype()))
    return parse_error("input 'indices' must be an integer tensor, got " +
                       std::string(dtype_name(c.indices->dtype())));
  return {};
}

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
      return Nominal{times(*rows, *slice),
                     static_cast<int64_t>(ix.size() + p.size()) - 1 - b - depth};
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

int64_t nominal_output_rank(const Case& c) {
  const auto shape = output_shape(c);
  return shape ? shape->rank : 0;
}

int64_t input_bytes(const Case& c) {
  int64_t total = 0;
  for (const auto* t : {&c.params, &c.indices, &c.updates, &c.tensor, &c.shape, &c.axis}) {
    if (!*t) continue;
    const Tensor& x = **t;
    if (x.dtype() == DType::kString) {
      for (const auto& s : x.strings())
        total += static_cast<int64_t>(sizeof(std::string) + s.size());
    } else {
      total += static_cast<int64_t>(x.byte_size());
    }
  }
  return total;
}

}  // namespace gscheck
