#include "backends/reference_backend.h"

#include "reference/reference.h"

namespace gscheck {
namespace {

class ReferenceBackend final : public Backend {
 public:
  explicit ReferenceBackend(int64_t max_output_bytes) {
    options_.max_output_bytes = max_output_bytes;
    caps_.name = "reference";
    caps_.ops.assign(std::begin(kAllOps), std::end(kAllOps));
    caps_.dtypes.assign(std::begin(kAllDTypes), std::end(kAllDTypes));
    // Every integer dtype: the reference itself answers TensorFlow's errors for the ones
    // TensorFlow has no kernel for.
    for (DType dt : kAllDTypes)
      if (is_integer(dt)) caps_.index_dtypes.push_back(dt);
    caps_.semantics.assign(std::begin(kAllSemantics), std::end(kAllSemantics));
    caps_.deterministic = true;
    caps_.tf_messages = true;
  }
  const Capabilities& capabilities() const override { return caps_; }
  Outcome run(const Case& c) override { return reference::run(c, options_); }

 private:
  Capabilities caps_;
  reference::Options options_;
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend(int64_t max_output_bytes) {
  return std::make_unique<ReferenceBackend>(max_output_bytes);
}

}  // namespace gscheck
