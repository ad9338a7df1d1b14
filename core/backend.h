// The interface every implementation under test satisfies (reference, cuda, cuda-emu, plugins),
// what it claims to implement (the contract it is graded against), and the one check of a case
// against that contract: every caller that decides "is this case the backend's business" uses
// admit() (the grader, the fuzzers, the properties and the backends themselves).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/case.h"

namespace gscheck {

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
  /// A budget of its own, declared up front (0: none beyond --max-bytes): a case whose inputs
  /// and nominal output (nominal_output_bytes) take more is outside its capabilities, e.g.
  /// cuda-emu-race, whose shadow memory tracks 64 MiB of device memory per case. Declared, not
  /// answered: a backend's own resource_exhausted never excuses a case.
  int64_t max_case_bytes = 0;
  /// How its code is kept from harming the run (plugins: the worker's containment, e.g. "pid
  /// and mount namespaces, seccomp" or "process group only: <why>"); "" in gscheck's process.
  std::string containment;
  /// What a replay command needs besides `--backend NAME` (python: "--python-venv DIR").
  std::string replay_flags;
};

/// OK when the op, the element dtype (params for gathers, the starting tensor or else the
/// updates for scatters), the index dtype, the semantics and the API level of c are all claimed,
/// and the case fits max_case_bytes; else kUnimplemented naming the first one that is not, in
/// that order: "outside the backend's capabilities: <why>".
Status admit(const Capabilities& caps, const Case& c);

/// One compare of instrumented code (SanitizerCoverage trace-cmp, or one case of a switch):
/// where it is, its operands, their width in bytes (1, 2, 4 or 8). The layout is the worker's
/// wire format (plugin/wire.h).
struct CoverageCompare {
  uint64_t pc = 0;
  uint64_t a = 0;
  uint64_t b = 0;
  uint64_t size = 0;
};

/// An outcome and the seconds gscheck's own clock gave its call: from the request to the answer
/// (a plugin's: from sending the call to its result frame, before the output is copied out).
struct TimedOutcome {
  Outcome outcome;
  double seconds = 0;
};

/// An implementation of the ops. run() never throws and never aborts on bad input: every
/// failure is an Error outcome (ErrorClass::kUnimplemented for cases outside its capabilities).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const Capabilities& capabilities() const = 0;
  virtual Outcome run(const Case& c) = 0;
  /// A case about to run many times (gscheck bench): what every run of it would repeat outside
  /// the kernel (a plugin's inputs laid out and sealed) is done once here. The call returned
  /// behaves exactly as run(c) on c as it is then: c's indices and updates may be rewritten
  /// between calls, with the same shapes (gscheck bench draws them afresh); c must outlive it.
  virtual std::function<TimedOutcome()> prepare(const Case& c);
  /// Coverage-guided fuzzing: the code under test's own coverage counters after the last run()
  /// (a plugin built with SanitizerCoverage, PluginOptions::coverage), valid until the next
  /// call; empty when it has none. Guidance only: the graded code can write them.
  virtual std::span<const uint8_t> coverage() const { return {}; }
  /// The compares its code made in the last run() (SanitizerCoverage trace-cmp), for the fuzzer's
  /// compare-guided mutations; empty when it has none. Guidance only, like coverage().
  virtual std::span<const CoverageCompare> coverage_compares() const { return {}; }
};

}  // namespace gscheck
