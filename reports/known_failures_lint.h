// `gscheck known-failures check`: whether a known-failures file explains exactly the failures it
// names. Fed every case result of a run graded with lint on (harness/checker.h CheckOptions).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reports/known_failures.h"
#include "reports/report.h"

namespace gscheck::reports {

class KnownFailuresLint {
 public:
  explicit KnownFailuresLint(const KnownFailures& known);
  void add(const CaseResult& r);
  /// One line per problem; empty when every entry is needed and no wider than its failures:
  /// an entry that explains nothing, dtypes it lists that no case needed, two entries explaining
  /// the same differences, a passing case an entry declares failing (XPASS), an injected bug an
  /// entry would forgive on a case the backend got right. A host_dependent entry may explain
  /// nothing only where each case file of its shown_by ran and PASSED (the host does not show it).
  std::vector<std::string> findings() const;
  /// Per entry: cases selected, differences explained, cases XFAIL, XPASS, injected bugs absorbed;
  /// then a line per host-dependent entry this host does not show.
  std::string table() const;

 private:
  struct Use {
    int64_t selected = 0, differences = 0, cases = 0, xpass = 0;
    std::set<DType> dtypes;  ///< data dtypes of the cases it explained
    std::map<std::string, int64_t> absorbed;
    std::string absorbed_example, xpass_example;
    /// host_dependent entries: per shown_by file, the verdict of its case (nullopt: not run).
    std::vector<std::optional<Verdict>> shown;
  };
  /// A host-dependent entry that explains nothing, each of whose shown_by files PASSED: the
  /// host does not show the departure.
  bool not_shown_here(std::size_t i) const;
  const KnownFailures& known_;
  std::vector<Use> use_;
  std::map<std::pair<std::size_t, std::size_t>, int64_t> overlaps_;
};

}  // namespace gscheck::reports
