// The differential sweep shared by the cuda-emu and real-GPU tests: sampled cases, each run on
// the backend and on the reference, compared outcome by outcome.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/registry.h"
#include "compare/compare.h"
#include "core/case_json.h"
#include "properties/sample.h"
#include "reference/reference.h"

namespace gscheck::cuda::testing {

struct SweepCounts {
  int compared = 0;
  int not_claimed = 0;  ///< unimplemented by the backend (outside its capabilities)
  int failed = 0;
  int errors = 0;  ///< cases whose expected outcome is an error
};

/// Run every case on b and on the reference; report each disagreement with its case file text.
inline SweepCounts sweep_against_reference(Backend& b, const std::vector<Case>& cases) {
  SweepCounts n;
  const compare::Options opts = compare::options_for(b.capabilities());
  for (const Case& c : cases) {
    const Outcome got = b.run(c);
    if (!got.ok() && got.error().cls == ErrorClass::kUnimplemented) {
      ++n.not_claimed;
      continue;
    }
    const Outcome want = reference::run(c);
    ++n.compared;
    if (!want.ok()) ++n.errors;
    const compare::Comparison v = compare::compare_outcomes(c, want, got, opts);
    if (!v.pass) {
      ++n.failed;
      if (n.failed <= 5) {
        ADD_FAILURE() << b.capabilities().name << " disagrees with the reference on " << c.name
                      << ": " << v.summary << "\n"
                      << case_file_text(CaseFile{c, std::nullopt, ""});
      }
    }
  }
  return n;
}

}  // namespace gscheck::cuda::testing
