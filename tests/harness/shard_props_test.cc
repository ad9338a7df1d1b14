// --shard K/N as properties over random K/N and sweep sizes: the shards' sweeps, run by the
// Runner itself, cover every position exactly once, each in order, each shard as many as
// shard_positions() says; the case files split the same way (shard_files).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "harness/runner.h"

namespace gscheck::harness {
namespace {

// Position p yields a one-element gather named after p; every 7th position yields none (a
// sampler's draw that is not admitted), which still counts as the shard's position.
class CountingSource final : public CaseSource {
 public:
  int64_t position() const override { return p_; }
  std::optional<Case> next() override {
    const int64_t p = p_++;
    if (p % 7 == 6) return std::nullopt;
    Case c;
    c.name = "sweep/" + std::to_string(p);
    c.op = Op::kGather;
    c.params = Tensor::from_values<float>(Shape{2}, {1, 2});
    c.indices = Tensor::from_values<int32_t>(Shape{1}, {static_cast<int32_t>(p % 2)});
    return c;
  }
  void skip() override { ++p_; }

 private:
  int64_t p_ = 0;
};

class Names final : public ResultSink {
 public:
  void add(const reports::CaseResult& r) override { names.push_back(r.name); }
  int stop(const std::string&, double, int status) override { return status; }
  std::vector<std::string> names;
};

RC_GTEST_PROP(ShardProps, ShardsCoverEverySweepPositionOnce, ()) {
  // Past 1,024 positions a sweep is checked in several batches.
  const int64_t count = *rc::gen::weightedOneOf<int64_t>(
      {{4, rc::gen::inRange<int64_t>(0, 200)}, {1, rc::gen::inRange<int64_t>(1000, 2600)}});
  const int64_t n = *rc::gen::inRange<int64_t>(1, 40);
  const int jobs = *rc::gen::inRange(1, 4);
  auto backend = make_backend("reference");
  RC_ASSERT(backend.ok());
  CaseChecker checker(**backend, nullptr, {});
  std::map<std::string, int64_t> seen;  // name -> shard
  for (int64_t k = 1; k <= n; ++k) {
    const reports::Shard shard{k, n};
    Names sink;
    CountingSource source;
    Runner runner(checker, sink, {"reference", jobs, 0, shard});
    const auto end =
        runner.run_sweep(source, count, std::nullopt, [](int64_t p) { return std::to_string(p); });
    RC_ASSERT(end.reached == count);
    int64_t mine = 0, last = -1;
    for (int64_t p = 0; p < count; ++p) mine += Runner::in_shard(p, shard);
    RC_ASSERT(Runner::shard_positions(count, shard) == mine);
    for (const std::string& name : sink.names) {
      const int64_t p = std::stoll(name.substr(6));
      RC_ASSERT(p > last);  // in order
      last = p;
      RC_ASSERT(Runner::in_shard(p, shard));
      RC_ASSERT(seen.emplace(name, k).second);  // in no other shard
    }
  }
  std::set<std::string> want;
  for (int64_t p = 0; p < count; ++p)
    if (p % 7 != 6) want.insert("sweep/" + std::to_string(p));
  RC_ASSERT(seen.size() == want.size());
  for (const auto& [name, k] : seen) RC_ASSERT(want.count(name) == 1u);
}

RC_GTEST_PROP(ShardProps, ShardFilesSplitTheListInOrder, ()) {
  const int files = *rc::gen::inRange(0, 300);
  const int64_t n = *rc::gen::inRange<int64_t>(1, 50);
  std::vector<std::string> all;
  for (int i = 0; i < files; ++i) all.push_back("f" + std::to_string(i));
  std::vector<std::string> back(all.size());
  std::size_t total = 0;
  for (int64_t k = 1; k <= n; ++k) {
    const auto mine = Runner::shard_files(all, reports::Shard{k, n});
    total += mine.size();
    // The m-th file of shard k is file m*n + k-1 (how report merge puts them back).
    for (std::size_t m = 0; m < mine.size(); ++m) {
      const auto at = m * static_cast<std::size_t>(n) + static_cast<std::size_t>(k - 1);
      RC_ASSERT(at < back.size());
      back[at] = mine[m];
    }
  }
  RC_ASSERT(total == all.size());
  RC_ASSERT(back == all);
  RC_ASSERT(Runner::shard_files(all, std::nullopt) == all);
}

}  // namespace
}  // namespace gscheck::harness
