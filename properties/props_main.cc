// gtest main of the property tests: prints RapidCheck's seed first (any run can be replayed with
// RC_PARAMS="seed=..."), and after each test its class table and any counterexample file.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>

#include "properties/props_support.h"

namespace {

class PropertyListener : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& /*info*/) override {
    gscheck::props::print_class_table(std::cout);
    (void)gscheck::props::flush_regression();
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const auto& params = rc::detail::configuration().testParams;
  // Not while ctest lists the tests: its parser reads this output.
  if (!GTEST_FLAG_GET(list_tests))
    std::cout << "gscheck properties: RapidCheck seed " << params.seed << ", max_success "
              << params.maxSuccess << ", max_size " << params.maxSize
              << " (replay: RC_PARAMS=\"seed=" << params.seed << "\")" << std::endl;
  ::testing::UnitTest::GetInstance()->listeners().Append(new PropertyListener);
  return RUN_ALL_TESTS();
}
