#include "core/backend.h"

#include <algorithm>
#include <chrono>

namespace gscheck {
namespace {

template <class T>
bool has(const std::vector<T>& list, T v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// The first capability c falls outside of; "" when none.
std::string outside(const Capabilities& caps, const Case& c) {
  if (!has(caps.ops, c.op)) return std::string(op_name(c.op)) + " is not implemented";
  if (!has(caps.semantics, c.semantics))
    return std::string(semantics_name(c.semantics)) + " semantics are not claimed";
  if (!has(caps.apis, c.api) && !same_at_both_apis(c))
    return "the " + std::string(api_name(c.api)) + " API level is not implemented";
  const std::optional<Tensor>& data =
      !is_scatter(c.op) ? c.params : (c.tensor ? c.tensor : c.updates);
  if (!data || !c.indices) return "the case lacks the inputs its op takes";
  if (!has(caps.index_dtypes, c.indices->dtype()))
    return std::string(dtype_name(c.indices->dtype())) + " indices are not implemented";
  if (!has(caps.dtypes, data->dtype()))
    return std::string(dtype_name(data->dtype())) + " elements are not implemented";
  if (caps.max_case_bytes > 0) {
    const uint64_t out = nominal_output_bytes(c);
    const auto in = static_cast<uint64_t>(input_bytes(c));
    const auto limit = static_cast<uint64_t>(caps.max_case_bytes);
    if (out > limit || in > limit - out)
      return "its inputs and output (" + std::to_string(in) + " + " + std::to_string(out) +
             " bytes) are over the backend's own budget of " + std::to_string(limit) + " bytes";
  }
  return "";
}

}  // namespace

Status admit(const Capabilities& caps, const Case& c) {
  std::string why = outside(caps, c);
  if (why.empty()) return {};
  return Error{ErrorClass::kUnimplemented, "outside the backend's capabilities: " + why};
}

std::function<TimedOutcome()> Backend::prepare(const Case& c) {
  return [this, &c] {
    const auto start = std::chrono::steady_clock::now();
    Outcome o = run(c);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    return TimedOutcome{std::move(o), took.count()};
  };
}

}  // namespace gscheck
