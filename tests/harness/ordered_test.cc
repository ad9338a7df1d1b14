#include "harness/ordered.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace gscheck::harness {
namespace {

// Results come out in index order whatever order the threads finish in.
TEST(ForEachOrdered, EmitsInIndexOrderWithManyJobs) {
  for (int jobs : {1, 2, 7}) {
    std::vector<int> seen;
    std::mt19937 rng(static_cast<unsigned>(jobs));
    std::vector<int> delays(200);
    for (int& d : delays) d = static_cast<int>(rng() % 300);
    for_each_ordered<int>(
        delays.size(), jobs,
        [&](std::size_t i) {
          std::this_thread::sleep_for(std::chrono::microseconds(delays[i]));
          return static_cast<int>(i) * 3;
        },
        [&](int&& r) { seen.push_back(r); });
    ASSERT_EQ(seen.size(), delays.size());
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<int>(i) * 3);
  }
}

}  // namespace
}  // namespace gscheck::harness
