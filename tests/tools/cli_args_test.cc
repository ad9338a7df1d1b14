#include "tools/cli_args.h"

#include <gtest/gtest.h>

namespace gscheck::tools {
namespace {

TEST(CliArgs, ValuesFlagsPositionalsAndDoubleDash) {
  auto p = parse_args(
      {"a.json", "--backend", "cuda-emu", "--report=out.json", "--quiet", "--", "--not-an-option"},
      {{"--backend", true}, {"--report", true}, {"--quiet", false}});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->value("--backend"), "cuda-emu");
  EXPECT_EQ(p->value("--report"), "out.json");
  EXPECT_TRUE(p->has("--quiet"));
  EXPECT_FALSE(p->has("--junit"));
  EXPECT_EQ(p->positional, (std::vector<std::string>{"a.json", "--not-an-option"}));
  EXPECT_TRUE(parse_args({"-h"}, {})->has("--help"));
}

TEST(CliArgs, Errors) {
  const std::vector<OptionSpec> specs = {{"--backend", true}, {"--quiet", false}};
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Bad& b : std::vector<Bad>{
           {{"--backnd", "x"}, "unknown option '--backnd'"},
           {{"--backend"}, "option '--backend' needs a value"},
           {{"--quiet=yes"}, "option '--quiet' takes no value"},
           {{"--backend", "a", "--backend", "b"}, "option '--backend' given twice"},
       }) {
    auto p = parse_args(b.args, specs);
    ASSERT_FALSE(p.ok()) << b.message;
    EXPECT_EQ(p.error().cls, ErrorClass::kParse);
    EXPECT_EQ(p.error().message, b.message);
  }
  EXPECT_EQ(*parse_int_option("--sweep", "12", 0, 100), 12);
  EXPECT_EQ(parse_int_option("--sweep", "12x", 0, 100).error().message,
            "--sweep: expected an integer in [0, 100], got '12x'");
  EXPECT_FALSE(parse_int_option("--sweep", "101", 0, 100).ok());
  EXPECT_FALSE(parse_int_option("--sweep", "", 0, 100).ok());
  EXPECT_EQ(*parse_fraction_option("--boundary-fraction", "0.25"), 0.25);
  EXPECT_EQ(*parse_fraction_option("--boundary-fraction", "1"), 1.0);
  EXPECT_EQ(parse_fraction_option("--boundary-fraction", "0.5x").error().message,
            "--boundary-fraction: expected a number in [0, 1], got '0.5x'");
  for (const char* bad : {"", "-0.1", "1.5", "nan", " 0.5"})
    EXPECT_FALSE(parse_fraction_option("--boundary-fraction", bad).ok()) << bad;
}

}  // namespace
}  // namespace gscheck::tools
