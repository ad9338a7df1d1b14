// Acceptance test of the properties: a correct naive backend passes all of them, and each
// planted bug makes at least one fail within the quick profile. Counterexamples go to a
// temporary directory, never into the repository.
#include "properties/mutants.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/case_json.h"
#include "properties/checks.h"

namespace gscheck::props {
// gtest prints test parameters through this.
void PrintTo(Bug bug, std::ostream* os) { *os << bug_name(bug); }
}  // namespace gscheck::props

namespace {

using gscheck::props::Bug;

bool holds(const gscheck::props::PropertyDef& p, const gscheck::props::Targets& ts) {
  return rc::check(p.name, [&] { p.check(ts); });
}

class Mutants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/gscheck_mutants_XXXXXX";
    const char* dir = mkdtemp(tmpl);
    ASSERT_NE(dir, nullptr);
    regressions_dir_ = dir;
    setenv("GSCHECK_REGRESSIONS_DIR", dir, 1);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(regressions_dir_, ec);
  }
  static std::string regressions_dir_;
};
std::string Mutants::regressions_dir_;

TEST_F(Mutants, CorrectNaiveBackendPassesEveryProperty) {
  auto backend = gscheck::props::make_naive_backend(Bug::kNone);
  const gscheck::props::Targets ts = {{"naive", backend.get()}};
  for (const auto& p : gscheck::props::all_properties()) EXPECT_TRUE(holds(p, ts)) << p.name;
}

class PlantedBug : public Mutants, public ::testing::WithParamInterface<Bug> {};

TEST_P(PlantedBug, IsCaughtByTheProperties) {
  auto backend = gscheck::props::make_naive_backend(GetParam());
  const std::string name = backend->capabilities().name;
  const gscheck::props::Targets ts = {{name, backend.get()}};
  std::vector<std::string> caught;
  bool differential_caught = false;
  for (const auto& p : gscheck::props::all_properties()) {
    if (holds(p, ts)) continue;
    caught.emplace_back(p.name);
    if (p.check == gscheck::props::check_differential) differential_caught = true;
  }
  std::string list;
  for (const auto& n : caught) list += " " + n;
  std::cout << name << " caught by" << (caught.empty() ? " nothing" : list) << std::endl;
  EXPECT_FALSE(caught.empty()) << "no property caught " << name;
  if (differential_caught) {
    // The shrunk counterexample becomes a case file whose expect is the reference's outcome.
    const std::optional<std::string> path = gscheck::props::flush_regression();
    ASSERT_TRUE(path.has_value());
    EXPECT_EQ(std::filesystem::path(*path).parent_path(), std::filesystem::path(regressions_dir_));
    const gscheck::Expected<gscheck::CaseFile> f = gscheck::load_case_file(*path);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_TRUE(f.value().expect.has_value());
  }
}

INSTANTIATE_TEST_SUITE_P(Mutants, PlantedBug, ::testing::ValuesIn(gscheck::props::kPlantedBugs),
                         [](const ::testing::TestParamInfo<Bug>& info) {
                           return std::string(gscheck::props::bug_name(info.param));
                         });

}  // namespace
