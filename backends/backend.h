// The interface every implementation under test satisfies: reference, cuda, cuda-emu, plugins.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/case.h"

namespace gscheck {

/// What a backend claims to implement: the contract it is graded against.
struct Capabilities {
  std::string name;                  ///< registry name, e.g. "cuda-emu"
  std::vector<Op> ops;               ///< ops it implements
  std::vector<DType> dtypes;         ///< element dtypes it implements (for every op listed)
  std::vector<DType> index_dtypes;   ///< index dtypes it implements
  std::vector<Semantics> semantics;  ///< device semantics it claims to follow
  /// API levels it implements (in-tree backends: both; plugins: what they declare).
  std::vector<Api> apis = {Api::kPython, Api::kKernel};
  bool deterministic = true;  ///< same inputs give bit-identical outputs on every run
  bool tf_messages = false;   ///< error messages promised to match TensorFlow's text
  /// Only the bad_index texts (checked mode) match TensorFlow's; implied by tf_messages.
  bool tf_bad_index_messages = false;
  /// Half types (float16, bfloat16) accumulated in float32 (widens the summation bound).
  bool accumulates_half_in_float = false;

  /// True when op, params/updates dtype, index dtype, semantics and API level of c are claimed.
  bool supports(const Case& c) const;
};

/// An implementation of the ops. run() never throws and never aborts on bad input: every
/// failure is an Error outcome (ErrorClass::kUnimplemented for cases outside its capabilities).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const Capabilities& capabilities() const = 0;
  virtual Outcome run(const Case& c) = 0;
};

/// Names of the backends this build offers ("reference", "cuda-emu", "cuda" where built).
std::vector<std::string> backend_names();
/// Create a backend by name; an unknown name or an unavailable device is an error naming why.
/// max_bytes is the memory budget for one case's output (--max-bytes), given to every backend.
Expected<std::unique_ptr<Backend>> make_backend(std::string_view name,
                                                int64_t max_bytes = kDefaultMaxCaseBytes);

}  // namespace gscheck
