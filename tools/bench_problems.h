// `gscheck bench` problems: data, like benchdnn's batch files. A problem is one op on one table
// with one index pattern; a problems file lists them, and a list in a field expands into one
// problem per value (the cross product of every listed field).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/status.h"

namespace gscheck::tools {

/// How the index rows pick table rows.
enum class IndexPattern {
  kUniform,      ///< uniform over the table's rows
  kSorted,       ///< uniform, then sorted ascending
  kPermutation,  ///< distinct rows (index_count <= rows), in a scrambled order
  kZipf,         ///< Zipf-like (s = 1: log-uniform ranks), ranks scattered over the table
  kHotKey,       ///< every index row names the same row
  kOutOfBounds,  ///< uniform, and 1% of the index rows past the table (computes under tf-gpu)
};

std::string_view pattern_name(IndexPattern p);

/// One problem: op x dtype x slice bytes x index pattern x table bytes x index count.
struct BenchProblem {
  Op op = Op::kGather;
  DType dtype = DType::kFloat32;
  DType index_dtype = DType::kInt32;
  int64_t slice_bytes = 64;  ///< bytes of one row of the table (a multiple of dtype's)
  IndexPattern pattern = IndexPattern::kUniform;
  int64_t table_bytes = 1 << 20;  ///< params (gathers) or the output tensor (scatters)
  int64_t index_count = 1024;     ///< index rows
  Semantics semantics = Semantics::kTfCpu;
  /// The file named the semantics; else the timed backend's first claimed one is used (where
  /// out-of-bounds rows compute, for that pattern): resolve_semantics().
  bool semantics_given = false;

  int64_t rows() const { return table_bytes / slice_bytes; }
  /// "gather/float32/64B/uniform/table=1MiB/n=100000" (also the Google Benchmark name).
  std::string name() const;
  /// Bytes one call moves, by DESIGN.md: gathers N*depth*sizeof(index) + 2*out_bytes; scatters
  /// out_bytes + upd_bytes + N*depth*sizeof(index), + out_bytes when the input tensor is read.
  int64_t bytes_moved() const;
};

/// The semantics a problem without one runs under on a backend claiming `claimed`: tf-cpu when
/// claimed (out_of_bounds_1pct: the first of tf-gpu, xla, jax claimed), else the first claimed.
Semantics resolve_semantics(const BenchProblem& p, const std::vector<Semantics>& claimed);

/// The problems of a problems file's JSON (reports/bench_problems.schema.json); errors name the
/// problem (its position) and the field.
Expected<std::vector<BenchProblem>> parse_problems(const nlohmann::json& j);

/// Reads and parses a problems file; errors name the file.
Expected<std::vector<BenchProblem>> read_problems(const std::string& path);

/// Input set `set` of problem p: every input drawn afresh from (seed, problem, set), so no two
/// sets of a problem give the same output; values are small integers (sums stay exact).
Expected<Case> make_problem_case(const BenchProblem& p, uint64_t seed, int set);

/// Draws set `set`'s indices (and updates) afresh, in place, for its `draw`-th timed call: the
/// same pattern, shapes and table, other rows (a kept output is then wrong). c must be
/// make_problem_case(p, seed, set)'s.
void redraw_problem_case(const BenchProblem& p, uint64_t seed, int set, uint64_t draw, Case& c);

}  // namespace gscheck::tools
