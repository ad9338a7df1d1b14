// One op call (a case): the op, its inputs and attributes, and the device semantics it runs under.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"

namespace gscheck {

/// The ops under test, named as TensorFlow's Python functions.
enum class Op : unsigned char {
  kGather,               ///< tf.gather (GatherV2)
  kGatherNd,             ///< tf.gather_nd (GatherNd)
  kScatterNd,            ///< tf.scatter_nd (ScatterNd)
  kTensorScatterUpdate,  ///< tf.tensor_scatter_nd_update
  kTensorScatterAdd,     ///< tf.tensor_scatter_nd_add
  kTensorScatterSub,     ///< tf.tensor_scatter_nd_sub
  kTensorScatterMin,     ///< tf.tensor_scatter_nd_min
  kTensorScatterMax,     ///< tf.tensor_scatter_nd_max
};
inline constexpr Op kAllOps[] = {
    Op::kGather,           Op::kGatherNd,         Op::kScatterNd,        Op::kTensorScatterUpdate,
    Op::kTensorScatterAdd, Op::kTensorScatterSub, Op::kTensorScatterMin, Op::kTensorScatterMax};

/// "gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update", ...
std::string_view op_name(Op op);
/// Inverse of op_name; nullopt for an unknown name.
std::optional<Op> op_from_name(std::string_view name);
/// True for scatter_nd and tensor_scatter_nd_*.
bool is_scatter(Op op);
/// True for tensor_scatter_nd_*.
bool is_tensor_scatter(Op op);

/// Whose out-of-range rules a case follows (spec: "Two device semantics"; the XLA profiles:
/// docs/spec_notes.md, "XLA semantics"). Every profile but tf-cpu leaves duplicates unordered.
enum class Semantics : unsigned char {
  kTfCpu,  ///< bad indices raise; duplicates applied in row order
  kTfGpu,  ///< bad indices zero (gather) or skip (scatter)
  kXla,    ///< TF under jit_compile, jax.lax: gathers clamp each coordinate, scatters drop the row
  kJax,    ///< jax.numpy indexing: a negative coordinate wraps once, then the xla rule
};
inline constexpr Semantics kAllSemantics[] = {Semantics::kTfCpu, Semantics::kTfGpu, Semantics::kXla,
                                              Semantics::kJax};
/// "tf-cpu", "tf-gpu", "xla" or "jax".
std::string_view semantics_name(Semantics s);
std::optional<Semantics> semantics_from_name(std::string_view name);
/// Every semantics name, "tf-cpu, tf-gpu, xla, jax" (for messages).
std::string semantics_names();

/// Which TensorFlow interface a case calls (docs/case_format.md, "API level").
enum class Api : unsigned char {
  /// The Python API (tf.gather, tf.gather_nd, ...): axis=None means axis = batch_dims, a constant
  /// axis 0 drops batch_dims, gather_nd's batch_dims is Python's lowering with its own checks.
  kPython,
  /// The raw kernels (GatherV2, GatherNd, ScatterNd, TensorScatter*), as tf.raw_ops calls them:
  /// gather's axis is always given and batch_dims is never dropped; gather_nd has no batch_dims.
  kKernel,
};
inline constexpr Api kAllApis[] = {Api::kPython, Api::kKernel};
/// "python" or "kernel".
std::string_view api_name(Api a);
std::optional<Api> api_from_name(std::string_view name);

/// One op call. Inputs are named as in TensorFlow's Python signatures; which are present depends
/// on the op (gather/gather_nd: params, indices; scatter_nd: indices, updates, shape;
/// tensor_scatter_nd_*: tensor, indices, updates). Absent inputs are a malformed case.
struct Case {
  std::string name;  ///< free text, used in reports and file names
  Op op = Op::kGather;
  Semantics semantics = Semantics::kTfCpu;
  Api api = Api::kPython;  ///< Python API (the default) or raw kernel

  std::optional<Tensor> params;   ///< gather, gather_nd
  std::optional<Tensor> indices;  ///< every op
  std::optional<Tensor> updates;  ///< scatter family
  std::optional<Tensor> tensor;   ///< tensor_scatter_nd_*
  std::optional<Tensor> shape;    ///< scatter_nd: the output shape, an integer tensor (a vector)

  /// gather only: the axis tensor (normally a scalar int); nullopt is Python's axis=None.
  std::optional<Tensor> axis;
  /// gather and gather_nd: Python's batch_dims (scatter ops must leave it 0).
  int64_t batch_dims = 0;
  /// gather_nd and scatter family: "", "DEFAULT", "ERROR", "IGNORE" (anything else is rejected
  /// by the op with TensorFlow's message). gather has no such attribute and must leave it "".
  std::string bad_indices_policy;
};

/// The bad_indices_policy values TensorFlow knows: "" and "DEFAULT" (the same), "ERROR",
/// "IGNORE". What each does depends on the semantics and is each implementation's own business.
enum class BadIndicesPolicy { kDefault, kError, kIgnore };
/// nullopt for any other text (TensorFlow rejects it).
std::optional<BadIndicesPolicy> bad_indices_policy_from_name(std::string_view s);

/// True when no Python-level rule applies to the case, so it means the same at either API level:
/// every scatter, gather_nd without batch_dims, gather with a one-element axis that is not 0
/// while batch_dims != 0 (Python refuses an axis of 0 or 2+ elements with NumPy's ValueError).
bool same_at_both_apis(const Case& c);

/// Check that the case has exactly the inputs its op takes and attributes it allows; the message
/// names the offending field. This is a well-formedness check, not TensorFlow's validation.
Status check_well_formed(const Case& c);

/// The bytes the case's output would take by shape arithmetic alone, before any of TensorFlow's
/// checks (an invalid case has a shape too: gather_nd's rows times its slice), saturating at
/// UINT64_MAX; 0 where no shape can be read (a missing input, an axis out of range, a negative
/// dim). Elements of a string output count 16 bytes (one wire entry, no text). For budgets only.
uint64_t nominal_output_bytes(const Case& c);
/// The output's rank by the same arithmetic; 0 where no shape can be read.
int64_t nominal_output_rank(const Case& c);

/// Total bytes of the case's input tensors (strings counted by sizeof(std::string) + length).
int64_t input_bytes(const Case& c);

/// The result of running a case: the output tensor, or an error.
using Outcome = Expected<Tensor>;

/// What a case file says the outcome must be.
struct Expect {
  std::optional<Tensor> output;            ///< the expected output tensor, or
  std::optional<ErrorClass> error_class;   ///< the expected error class
  std::optional<std::string> error_regex;  ///< ECMAScript regex the message must match (search)
};

/// A case and, optionally, its expected outcome: the content of one case file.
struct CaseFile {
  Case c;
  std::optional<Expect> expect;
  std::string description;  ///< optional prose: where the case comes from, why it matters
};

}  // namespace gscheck
