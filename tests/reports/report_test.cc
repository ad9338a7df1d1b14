#include "reports/report.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "reports/combine.h"
#include "reports/known_failures.h"

namespace gscheck::reports {
namespace {

using nlohmann::json;

Case scatter_case() {
  Case c;
  c.name = "tensor_scatter_nd_add/x";
  c.op = Op::kTensorScatterAdd;
  c.semantics = Semantics::kTfGpu;
  c.tensor = Tensor::from_values<float>(Shape{2, 2}, {0, 0, 0, 0});
  c.indices = Tensor::from_values<int64_t>(Shape{1, 1}, {1});
  c.updates = Tensor::from_values<float>(Shape{1, 2}, {1, 2});
  return c;
}

Report sample_report() {
  Report r;
  r.run.command = "run";
  r.run.argv = {"gscheck", "run", "--seed", "7"};
  r.run.started_at = "2026-11-30T02:50:00Z";
  r.run.seed = 7;
  r.run.sweep = 3;
  r.run.backend.name = "cuda-emu";
  r.run.backend.ops = {Op::kGather, Op::kTensorScatterAdd};
  r.run.backend.dtypes = {DType::kFloat32};
  r.run.backend.index_dtypes = {DType::kInt32, DType::kInt64};
  r.run.backend.semantics = {Semantics::kTfGpu};
  r.run.elapsed_s = 1.5;

  CaseResult pass;
  describe_case(scatter_case(), pass);
  pass.file = "corpus/golden/x.json";
  pass.backend = "cuda-emu";
  pass.verdict = Verdict::kPassed;
  pass.outcome = outcome_summary(Tensor::from_values<float>(Shape{2}, {1, 2}));
  pass.reason = "bit-exact";
  pass.checks.push_back({"expect", {true, "bit-exact (4 elements)", {}, 0, {}, true}});
  pass.elapsed_ms = 0.25;
  pass.repro = "gscheck eval --backend cuda-emu corpus/golden/x.json";

  CaseResult fail = pass;
  fail.name = "tensor_scatter_nd_add/<bad> & \"quoted\"";
  fail.verdict = Verdict::kFailed;
  fail.reason = "1 of 4 elements differ";
  fail.checks = {{"reference",
                  {false,
                   "1 of 4 elements differ; first at [1,0]: expected 1, got 2",
                   {{{1, 0}, "1", "2", {}}},
                   1,
                   {},
                   true}}};

  CaseResult mistrusted = pass;
  mistrusted.name = "gather/mistrusted";
  mistrusted.op = Op::kGather;
  mistrusted.verdict = Verdict::kMistrusted;
  mistrusted.reason = "the reference disagrees with expect";

  CaseResult unimplemented = pass;
  unimplemented.name = "sweep/7/0/gather_nd";
  unimplemented.file.clear();
  unimplemented.op = Op::kGatherNd;
  unimplemented.verdict = Verdict::kUnimplemented;
  unimplemented.reason = "gather_nd is not in the backend's capabilities";
  unimplemented.outcome = outcome_summary(Error{ErrorClass::kUnimplemented, "no \x01 kernel\xff"});

  CaseResult unparsed;
  unparsed.name = "broken.json";
  unparsed.file = "broken.json";
  unparsed.verdict = Verdict::kFailed;
  unparsed.reason = "broken.json: name: missing";
  r.cases = {pass, fail, mistrusted, unimplemented, unparsed};
  return r;
}

TEST(Report, VerdictNames) {
  EXPECT_EQ(verdict_name(Verdict::kPassed), "PASSED");
  EXPECT_EQ(verdict_name(Verdict::kMistrusted), "MISTRUSTED");
  EXPECT_EQ(verdict_name(Verdict::kSkipped), "SKIPPED");
  EXPECT_TRUE(is_failure(Verdict::kFailed));
  EXPECT_TRUE(is_failure(Verdict::kMistrusted));
  EXPECT_FALSE(is_failure(Verdict::kUnimplemented));
  EXPECT_FALSE(is_failure(Verdict::kSkipped));
  EXPECT_EQ(verdict_name(Verdict::kNondeterministic), "NONDETERMINISTIC");
  EXPECT_TRUE(is_failure(Verdict::kNondeterministic));
  EXPECT_EQ(std::size(kAllVerdicts), 10u);
  EXPECT_EQ(verdict_name(Verdict::kUnsafe), "UNSAFE");
  EXPECT_TRUE(is_failure(Verdict::kUnsafe));
  EXPECT_EQ(verdict_from_name("UNSAFE"), Verdict::kUnsafe);
  EXPECT_EQ(verdict_name(Verdict::kDeclined), "DECLINED");
  EXPECT_TRUE(is_failure(Verdict::kDeclined));
  EXPECT_EQ(verdict_name(Verdict::kXfail), "XFAIL");
  EXPECT_EQ(verdict_name(Verdict::kXpass), "XPASS");
  EXPECT_FALSE(is_failure(Verdict::kXfail));
  EXPECT_FALSE(is_failure(Verdict::kXfail, /*strict=*/true));
  EXPECT_FALSE(is_failure(Verdict::kXpass));
  EXPECT_TRUE(is_failure(Verdict::kXpass, /*strict=*/true));
  for (Verdict v : kAllVerdicts) EXPECT_EQ(verdict_from_name(verdict_name(v)), v);
  EXPECT_FALSE(verdict_from_name("PASS").has_value());
}

TEST(Report, KnownFailuresInJsonJunitAndTables) {
  Report r = sample_report();
  r.run.known_failures = "known.json";
  CaseResult xfail = r.cases[1];
  xfail.verdict = Verdict::kXfail;
  xfail.known = CaseResult::Known{Verdict::kFailed, "tensor_scatter_nd_add/*", "it aborts",
                                  "https://tracker.invalid/1"};
  CaseResult xpass = r.cases[0];
  xpass.name = "tensor_scatter_nd_add/fixed";
  xpass.verdict = Verdict::kXpass;
  xpass.known =
      CaseResult::Known{Verdict::kPassed, "tensor_scatter_nd_add/fixed", "was wrong", "docs/x.md"};
  r.cases = {r.cases[0], xfail, xpass};
  const Totals t = totals(r);
  EXPECT_EQ(t.failures(), 0);
  EXPECT_EQ(t.failures(/*strict=*/true), 1);
  const json j = report_to_json(r);
  EXPECT_EQ(j["known_failures"], "known.json");
  EXPECT_EQ(j["strict"], false);
  EXPECT_EQ(j["totals"]["XFAIL"], 1);
  EXPECT_EQ(j["totals"]["XPASS"], 1);
  EXPECT_EQ(j["cases"][1]["verdict"], "XFAIL");
  EXPECT_EQ(j["cases"][1]["known_failure"]["verdict"], "FAILED");
  EXPECT_EQ(j["cases"][1]["known_failure"]["link"], "https://tracker.invalid/1");
  EXPECT_FALSE(j["cases"][0].contains("known_failure"));
  EXPECT_EQ(j["matrix"][0]["counts"]["XFAIL"], 1);
  EXPECT_NE(summary_table(r).find("xfail  xpass"), std::string::npos) << summary_table(r);

  std::string x = junit_xml(r);
  EXPECT_NE(x.find("<skipped message=\"XFAIL: it aborts (https://tracker.invalid/1)\"/>"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<system-out>XPASS: known to fail (was wrong, docs/x.md) but passed"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("failures=\"0\""), std::string::npos) << x;
  r.run.strict = true;
  x = junit_xml(r);
  EXPECT_NE(x.find("<failure message=\"XPASS: known to fail (was wrong, docs/x.md) but passed\" "
                   "type=\"XPASS\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("failures=\"1\""), std::string::npos) << x;
}

TEST(Report, DescribeCaseAndOutcome) {
  CaseResult r;
  describe_case(scatter_case(), r);
  EXPECT_EQ(r.name, "tensor_scatter_nd_add/x");
  EXPECT_EQ(r.op, Op::kTensorScatterAdd);
  EXPECT_EQ(r.semantics, Semantics::kTfGpu);
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_EQ(r.inputs[0].name, "tensor");
  EXPECT_EQ(r.inputs[1].name, "indices");
  EXPECT_EQ(r.inputs[1].dtype, DType::kInt64);
  EXPECT_EQ(r.inputs[2].shape, (Shape{1, 2}));
  EXPECT_EQ(outcome_summary(Tensor::from_values<int8_t>(Shape{2, 1}, {1, 2})), "int8 [2,1]");
  EXPECT_EQ(outcome_summary(bad_index("indices[0] = 5 is not in [0, 3)")),
            "error bad_index: indices[0] = 5 is not in [0, 3)");
}

TEST(Report, TotalsAndTable) {
  const Report r = sample_report();
  const Totals t = totals(r);
  EXPECT_EQ(t.all.at(Verdict::kPassed), 1);
  EXPECT_EQ(t.all.at(Verdict::kFailed), 2);
  EXPECT_EQ(t.failures(), 3);
  EXPECT_EQ(t.per_op.at("tensor_scatter_nd_add").at(Verdict::kFailed), 1);
  EXPECT_EQ(t.per_op.at("").at(Verdict::kFailed), 1);
  const std::string table = summary_table(r);
  EXPECT_NE(
      table.find("tensor_scatter_nd_add             1        1      0          0             0"
                 "        0                0        0"),
      std::string::npos)
      << table;
  EXPECT_NE(
      table.find("total                             1        2      0          1             1"
                 "        0                0        0"),
      std::string::npos)
      << table;
}

TEST(Report, Json) {
  const json j = report_to_json(sample_report());
  EXPECT_EQ(j["gscheck_report"], 1);
  EXPECT_EQ(j["tool"]["name"], "gscheck");
  EXPECT_EQ(j["tool"]["version"], std::string(tool_version()));
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["backend"]["ops"], json({"gather", "tensor_scatter_nd_add"}));
  EXPECT_EQ(j["backend"]["semantics"], json({"tf-gpu"}));
  EXPECT_EQ(j["totals"]["cases"], 5);
  EXPECT_EQ(j["totals"]["FAILED"], 2);
  EXPECT_EQ(j["per_op"]["unparsed"]["FAILED"], 1);
  EXPECT_EQ(j["per_op"]["gather"]["MISTRUSTED"], 1);
  ASSERT_EQ(j["cases"].size(), 5u);
  const json& fail = j["cases"][1];
  EXPECT_EQ(fail["verdict"], "FAILED");
  EXPECT_EQ(fail["inputs"]["updates"], json({{"dtype", "float32"}, {"shape", {1, 2}}}));
  EXPECT_EQ(fail["checks"][0]["against"], "reference");
  EXPECT_EQ(fail["checks"][0]["mismatches"][0]["index"], json({1, 0}));
  EXPECT_EQ(fail["checks"][0]["mismatch_count"], 1);
  EXPECT_TRUE(j["cases"][3]["file"].is_null());
  EXPECT_TRUE(j["cases"][4]["op"].is_null());
  EXPECT_EQ(j["cases"][0]["repro"], "gscheck eval --backend cuda-emu corpus/golden/x.json");
}

TEST(Report, JunitXml) {
  const std::string x = junit_xml(sample_report());
  EXPECT_EQ(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gscheck run "
                    "cuda-emu\" tests=\"5\" failures=\"2\" errors=\"1\" skipped=\"1\"",
                    0),
            0u)
      << x;
  EXPECT_NE(x.find("<testsuite name=\"cuda-emu.tensor_scatter_nd_add\" tests=\"2\" failures=\"1\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"tensor_scatter_nd_add/&lt;bad&gt; &amp; &quot;quoted&quot;\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<failure message=\"1 of 4 elements differ\" type=\"FAILED\">"),
            std::string::npos);
  EXPECT_NE(x.find("  at [1,0]: expected 1, got 2\n"), std::string::npos);
  EXPECT_NE(x.find("<error message=\"the reference disagrees with expect\" type=\"MISTRUSTED\">"),
            std::string::npos);
  EXPECT_NE(x.find("<skipped message=\"UNIMPLEMENTED: gather_nd is not in"), std::string::npos);
  EXPECT_NE(x.find("<testsuite name=\"cuda-emu.unparsed\""), std::string::npos);
  // Control bytes and invalid UTF-8 never reach the XML.
  EXPECT_EQ(x.find('\x01'), std::string::npos);
  EXPECT_EQ(x.find('\xff'), std::string::npos);
  size_t opens = 0, closes = 0;
  for (size_t p = 0; (p = x.find("<testcase ", p)) != std::string::npos; ++p) ++opens;
  for (size_t p = 0; (p = x.find("</testcase>", p)) != std::string::npos; ++p) ++closes;
  EXPECT_EQ(opens, 5u);
  EXPECT_EQ(closes, 4u);  // the passing case is self-closing
}

TEST(Report, WritesFiles) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("gscheck_report_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const Report r = sample_report();
  const std::string json_path = (dir / "out" / "report.json").string();
  ASSERT_TRUE(write_json_report(json_path, r).ok());
  std::ifstream in(json_path);
  std::stringstream text;
  text << in.rdbuf();
  const json back = json::parse(text.str());
  EXPECT_EQ(back["cases"].size(), 5u);
  // The invalid byte in the outcome is replaced, not fatal.
  EXPECT_NE(back["cases"][3]["outcome"].get<std::string>().find("no \x01 kernel"),
            std::string::npos);
  ASSERT_TRUE(write_junit((dir / "junit.xml").string(), r).ok());
  EXPECT_TRUE(fs::exists(dir / "junit.xml"));
  Status bad = write_junit((dir / "junit.xml" / "nested").string(), r);
  EXPECT_FALSE(bad.ok());
  fs::remove_all(dir);
}

// A report path that is not a regular file is refused, never replaced: a symlink (as root,
// /dev/stdout -> a pipe or a tty), a FIFO, a device; --report X --junit X is refused; a
// temporary left by a writer that was killed is swept on the next write.
TEST(Report, OutputsNeverClobber) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("gscheck_clobber_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Report r = sample_report();
  const fs::path target = dir / "precious.txt";
  { std::ofstream(target) << "precious"; }
  fs::create_symlink(target, dir / "link.json");
  Status st = write_json_report((dir / "link.json").string(), r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("symbolic link"), std::string::npos) << st.error().message;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  std::ifstream in(target);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "precious");
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  st = write_json_report((dir / "fifo.json").string(), r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("FIFO"), std::string::npos) << st.error().message;
  st = write_junit("/dev/null", r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("device"), std::string::npos) << st.error().message;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  const std::string same = (dir / "both.json").string();
  auto stream = ReportStream::open(r.run, same, same);
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.error().message.find("--junit"), std::string::npos);

  // A temporary of a process that no longer exists (pid 2^22 + 1 is above pid_max's default)
  // goes; one of a live process (this one) stays.
  const fs::path out = dir / "report.json";
  const fs::path stale = dir / "report.json.tmp.4194305.0";
  const fs::path live = dir / ("report.json.tmp." + std::to_string(::getpid()) + ".99");
  { std::ofstream(stale) << "{"; }
  { std::ofstream(live) << "{"; }
  ASSERT_TRUE(write_json_report(out.string(), r).ok());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  fs::remove_all(dir);
}

// Reports read back are input like any other: numbers that do not fit are errors, not
// undefined casts; a shard count no run can have is refused; diff refuses duplicate names.
TEST(Report, ReadBackIsDistrustful) {
  const Report r = sample_report();
  json j = report_to_json(r);
  ASSERT_TRUE(report_from_json(j).ok());
  json big = j;
  big["sweep"] = 1e30;
  auto bad = report_from_json(big);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("\"sweep\" is not an integer"), std::string::npos)
      << bad.error().message;
  big = j;
  big["sweep"] = std::numeric_limits<uint64_t>::max();
  ASSERT_FALSE(report_from_json(big).ok());
  json shards = j;
  shards["shard"] = {{"index", 1}, {"count", INT64_MAX}};
  bad = report_from_json(shards);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("shards are"), std::string::npos) << bad.error().message;

  Report dup = r;
  dup.cases.push_back(dup.cases.front());
  auto d = diff_reports(r, dup);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find(dup.cases.front().name), std::string::npos);
  EXPECT_TRUE(diff_reports(r, r).ok());
}

// Diff matches names exactly though it keeps only their hashes: a name twice in the old report,
// or twice among the new report's own cases, is refused by name; removed and fixed cases carry the
// old report's reason, removed ones in the old report's order.
TEST(Report, DiffNamesDuplicatesAndKeepsOldReasons) {
  const Report r = sample_report();
  Report old_dup = r;
  old_dup.cases.push_back(old_dup.cases.back());
  auto d = diff_reports(old_dup, r);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("the old report has two cases named \"" + r.cases.back().name),
            std::string::npos)
      << d.error().message;

  Report new_dup = r;
  CaseResult extra = new_dup.cases.front();
  extra.name = "gather/only_in_new";
  new_dup.cases.push_back(extra);
  new_dup.cases.push_back(extra);
  d = diff_reports(r, new_dup);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("the new report has two cases named \"gather/only_in_new\""),
            std::string::npos)
      << d.error().message;

  Report old = r;
  for (int i = 0; i < 3; ++i) {
    CaseResult gone = r.cases.front();
    gone.name = "gather/gone_" + std::to_string(2 - i);  // old order: gone_2, gone_1, gone_0
    gone.reason = "old reason " + std::to_string(i);
    old.cases.push_back(gone);
  }
  Report fixed = r;
  ASSERT_EQ(r.cases[1].verdict, Verdict::kFailed);
  fixed.cases[1].verdict = Verdict::kPassed;
  fixed.cases[1].reason = "bit-exact";
  d = diff_reports(old, fixed);
  ASSERT_TRUE(d.ok()) << d.error().message;
  std::vector<std::string> removed;
  for (const CaseChange& c : d->cases) {
    if (c.change == Change::kRemoved) {
      removed.push_back(c.name);
      EXPECT_EQ(c.reason, "old reason " + std::to_string(removed.size() - 1));
    }
    if (c.change == Change::kFixed) {
      EXPECT_EQ(c.reason, r.cases[1].reason);
    }
  }
  EXPECT_EQ(removed, (std::vector<std::string>{"gather/gone_2", "gather/gone_1", "gather/gone_0"}));
  EXPECT_EQ(d->unchanged, static_cast<int64_t>(r.cases.size()) - 1);
}

// The sample plus a case whose repeats differed on a backend declaring determinism.
Report report_with_nondeterministic() {
  Report r = sample_report();
  CaseResult nondet = r.cases[0];
  nondet.name = "tensor_scatter_nd_add/nondet";
  nondet.bad_indices_policy = "IGNORE";
  nondet.verdict = Verdict::kNondeterministic;
  nondet.reason = "declared deterministic, but run 2 of 2 differs from run 1";
  nondet.runs = 2;
  nondet.differing_runs = 1;
  r.cases.push_back(nondet);
  return r;
}

TEST(Report, NondeterministicIsAFailureEverywhere) {
  const Report r = report_with_nondeterministic();
  const Totals t = totals(r);
  EXPECT_EQ(t.all.at(Verdict::kNondeterministic), 1);
  EXPECT_EQ(t.failures(), 4);
  const std::string table = summary_table(r);
  EXPECT_NE(
      table.find("tensor_scatter_nd_add             1        1      0          0             0"
                 "        0                1        0"),
      std::string::npos)
      << table;

  const json j = report_to_json(r);
  EXPECT_EQ(j["totals"]["NONDETERMINISTIC"], 1);
  EXPECT_EQ(j["per_op"]["tensor_scatter_nd_add"]["NONDETERMINISTIC"], 1);
  EXPECT_EQ(j["per_op"]["gather"]["NONDETERMINISTIC"], 0);
  const json& c = j["cases"][5];
  EXPECT_EQ(c["verdict"], "NONDETERMINISTIC");
  EXPECT_EQ(c["runs"], 2);
  EXPECT_EQ(c["differing_runs"], 1);
  EXPECT_EQ(c["bad_indices_policy"], "IGNORE");
  EXPECT_EQ(j["cases"][0]["runs"], 0);  // the sample never set it: not run

  const std::string x = junit_xml(r);
  EXPECT_NE(x.find("tests=\"6\" failures=\"3\" errors=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("<testsuite name=\"cuda-emu.tensor_scatter_nd_add\" tests=\"3\" failures=\"2\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("type=\"NONDETERMINISTIC\">"), std::string::npos) << x;
  EXPECT_NE(x.find("runs: 2, 1 differing bitwise from the first\n"), std::string::npos) << x;
}

TEST(Report, CapabilityMatrix) {
  Report r = report_with_nondeterministic();
  CaseResult f64 = r.cases[0];  // same op, a dtype declared later: sorts after float32
  f64.name = "tensor_scatter_nd_add/f64";
  f64.inputs[0].dtype = DType::kFloat64;
  f64.inputs[2].dtype = DType::kFloat64;
  r.cases.push_back(f64);
  CaseResult odd = r.cases[0];  // a fuzzed policy: counted in the "other" row
  odd.name = "tensor_scatter_nd_add/odd";
  odd.bad_indices_policy = "ignore ";
  r.cases.push_back(odd);
  CaseResult gather_nd = r.cases[3];  // unimplemented gather_nd, with the same inputs
  gather_nd.name = "gather_nd/second";
  r.cases.push_back(gather_nd);

  const std::vector<MatrixRow> m = capability_matrix(r);
  ASSERT_EQ(m.size(), 7u);
  // Ops in declaration order, unparsed last; within an op, dtype then policy.
  EXPECT_EQ(m[0].op, Op::kGather);
  EXPECT_EQ(m[1].op, Op::kGatherNd);
  EXPECT_EQ(m[1].counts.at(Verdict::kUnimplemented), 2);
  EXPECT_EQ(m[2].op, Op::kTensorScatterAdd);
  EXPECT_EQ(m[2].dtype, DType::kFloat32);
  EXPECT_EQ(m[2].index_dtype, DType::kInt64);
  EXPECT_EQ(m[2].bad_indices_policy, "");
  EXPECT_EQ(m[2].counts.at(Verdict::kPassed), 1);
  EXPECT_EQ(m[2].counts.at(Verdict::kFailed), 1);
  EXPECT_EQ(m[3].bad_indices_policy, "IGNORE");
  EXPECT_EQ(m[3].counts.at(Verdict::kNondeterministic), 1);
  EXPECT_EQ(m[4].bad_indices_policy, "other");
  EXPECT_EQ(m[4].counts.at(Verdict::kPassed), 1);
  EXPECT_EQ(m[5].dtype, DType::kFloat64);
  EXPECT_FALSE(m[6].op.has_value());
  EXPECT_FALSE(m[6].dtype.has_value());
  EXPECT_FALSE(m[6].index_dtype.has_value());
  int64_t cases = 0;
  for (const MatrixRow& row : m)
    for (const auto& [v, n] : row.counts) cases += n;
  EXPECT_EQ(cases, static_cast<int64_t>(r.cases.size()));

  const std::string table = matrix_table(r);
  EXPECT_EQ(table.rfind("op                         dtype      index  policy    passed  failed "
                        "unsafe mistrusted unimplemented declined nondeterministic skipped xfail "
                        "xpass\n",
                        0),
            0u)
      << table;
  EXPECT_NE(
      table.find("tensor_scatter_nd_add      float32    int64  IGNORE         0       0"
                 "      0          0             0        0                1       0     0     "
                 "0\n"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("(unparsed)                 -          -      -              0       1"),
            std::string::npos)
      << table;

  const json j = report_to_json(r);
  ASSERT_EQ(j["matrix"].size(), 7u);
  EXPECT_EQ(j["matrix"][3], json({{"op", "tensor_scatter_nd_add"},
                                  {"dtype", "float32"},
                                  {"index_dtype", "int64"},
                                  {"bad_indices_policy", "IGNORE"},
                                  {"counts",
                                   {{"PASSED", 0},
                                    {"FAILED", 0},
                                    {"MISTRUSTED", 0},
                                    {"UNIMPLEMENTED", 0},
                                    {"NONDETERMINISTIC", 1},
                                    {"SKIPPED", 0},
                                    {"XFAIL", 0},
                                    {"XPASS", 0},
                                    {"DECLINED", 0},
                                    {"UNSAFE", 0}}}}));
  EXPECT_EQ(j["matrix"][4]["bad_indices_policy"], "other");
  EXPECT_TRUE(j["matrix"][6]["op"].is_null());
  EXPECT_TRUE(j["matrix"][6]["dtype"].is_null());
  EXPECT_EQ(matrix_policy("IGNORE"), "IGNORE");
  EXPECT_EQ(matrix_policy(""), "");
  EXPECT_EQ(matrix_policy("Ignore"), "other");
  EXPECT_EQ(data_dtype(r.cases[0]), DType::kFloat32);  // tensor, not updates: listed first
  EXPECT_EQ(index_dtype(r.cases[4]), std::nullopt);
}

TEST(Report, UtcNow) {
  const std::string now = utc_now();
  ASSERT_EQ(now.size(), 20u) << now;
  EXPECT_EQ(now[4], '-');
  EXPECT_EQ(now[10], 'T');
  EXPECT_EQ(now.back(), 'Z');
}

// Only XML 1.0 characters come out (U+FFFE/U+FFFF, surrogates and overlong forms
// passed the escaper and junitparser/xmllint rejected the file).
TEST(Report, XmlEscapeEmitsOnlyXmlCharacters) {
  EXPECT_EQ(xml_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
  EXPECT_EQ(xml_escape("line\nnext\ttab\rcr"), "line\nnext\ttab&#13;cr");
  EXPECT_EQ(xml_escape("\xef\xbf\xbf"), "\\xef\\xbf\\xbf");           // U+FFFF
  EXPECT_EQ(xml_escape("\xef\xbf\xbe"), "\\xef\\xbf\\xbe");           // U+FFFE
  EXPECT_EQ(xml_escape("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate, encoded
  EXPECT_EQ(xml_escape("\xe0\x80\x80"), "\\xe0\\x80\\x80");           // overlong NUL
  EXPECT_EQ(xml_escape("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(xml_escape("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // beyond U+10FFFF
  EXPECT_EQ(xml_escape(std::string("\x01\x1b\0", 3)), "\\x01\\x1b\\x00");
  EXPECT_EQ(xml_escape("\xff"), "\\xff");
  // Characters XML allows pass unchanged: U+FFFD, U+E000, U+10000, U+10FFFF, U+0085.
  for (std::string ok : {"\xef\xbf\xbd", "\xee\x80\x80", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
                         "\xc2\x85", "h\xc3\xa9"})
    EXPECT_EQ(xml_escape(ok), ok);
}

// In an attribute, a literal line feed or tab would be read back as a space.
TEST(Report, XmlAttributeKeepsLineBreaksAndTabs) {
  EXPECT_EQ(xml_attribute("a\nb\tc\rd<\""), "a&#10;b&#9;c&#13;d&lt;&quot;");
  EXPECT_EQ(xml_escape("a\nb\tc"), "a\nb\tc");
  EXPECT_EQ(xml_attribute("\x01"), "\\x01");
}

TEST(Report, InterruptedRunIsAnErrorInJunitAndMarkedInJson) {
  Report r;
  r.run.command = "run";
  r.run.backend.name = "reference";
  r.run.started_at = "2026-12-01T10:00:00Z";
  r.run.interrupted = "SIGINT";
  const std::string x = junit_xml(r);
  EXPECT_NE(x.find("tests=\"1\" failures=\"0\" errors=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("type=\"INTERRUPTED\""), std::string::npos) << x;
  EXPECT_EQ(report_to_json(r)["interrupted"], "SIGINT");
  r.run.interrupted.clear();
  EXPECT_TRUE(report_to_json(r)["interrupted"].is_null());
  EXPECT_EQ(junit_xml(r).find("INTERRUPTED"), std::string::npos);
}

// The streamed files are the whole-report files, byte for byte.
TEST(Report, StreamWritesTheSameFilesAsTheWholeReport) {
  const Report r = sample_report();
  const auto dir = std::filesystem::temp_directory_path() / "gscheck_report_stream_test";
  std::filesystem::remove_all(dir);
  const std::string json_path = (dir / "r.json").string(), xml_path = (dir / "j.xml").string();
  auto stream = ReportStream::open(r.run, json_path, xml_path);
  ASSERT_TRUE(stream.ok());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  // Until finish(): this run's files, marked as not finished.
  EXPECT_NE(json::parse(slurp(json_path))["interrupted"].get<std::string>().find("not finished"),
            std::string::npos);
  for (const auto& c : r.cases) ASSERT_TRUE((*stream)->add(c).ok());
  ASSERT_TRUE((*stream)->finish(r.run.elapsed_s, "").ok());
  EXPECT_EQ(slurp(json_path),
            report_to_json(r).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  EXPECT_EQ(slurp(xml_path), junit_xml(r));
  EXPECT_EQ((*stream)->tally().cases(), static_cast<int64_t>(r.cases.size()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gscheck::reports

namespace gscheck::reports {
namespace {

// out_of_range_index reads the dimension an index addresses: a gather's axis, or batch_dims
// where the Python API's axis is None (the case has no axis tensor).
TEST(KnownFailureFacts, OutOfRangeIndexFollowsGatherAxisNone) {
  Case c;
  c.op = Op::kGather;
  c.params = Tensor::from_values<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  c.indices = Tensor::from_values<int32_t>(Shape{1}, {2});  // in range for dim 1, not dim 0
  EXPECT_TRUE(CaseView(c, nullptr, nullptr).fact(CaseFact::kOutOfRangeIndex));
  c.axis = Tensor::from_values<int32_t>(Shape{}, {1});
  EXPECT_FALSE(CaseView(c, nullptr, nullptr).fact(CaseFact::kOutOfRangeIndex));
  c.axis.reset();
  c.indices = Tensor::from_values<int32_t>(Shape{1}, {-1});
  EXPECT_TRUE(CaseView(c, nullptr, nullptr).fact(CaseFact::kOutOfRangeIndex));
  c.indices = Tensor::from_values<int32_t>(Shape{1}, {1});
  EXPECT_FALSE(CaseView(c, nullptr, nullptr).fact(CaseFact::kOutOfRangeIndex));
  c.api = Api::kKernel;  // GatherV2 needs an axis: a case without one has no such index
  c.indices = Tensor::from_values<int32_t>(Shape{1}, {5});
  EXPECT_FALSE(CaseView(c, nullptr, nullptr).fact(CaseFact::kOutOfRangeIndex));
}

// nonzero_batch_dims as tf.gather resolves it: -1 with rank-1 indices is no batch (TF-XLA's
// batched int64 rule matched such a gather in the conformance sweep, 2026-12-07).
TEST(KnownFailureFacts, NonzeroBatchDimsCountsANegativeFromTheIndicesRank) {
  Case c;
  c.op = Op::kGather;
  c.params = Tensor::from_values<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  c.indices = Tensor::from_values<int64_t>(Shape{2}, {0, 1});
  const auto nonzero = [&] {
    return CaseView(c, nullptr, nullptr).fact(CaseFact::kNonzeroBatchDims);
  };
  EXPECT_FALSE(nonzero());
  c.batch_dims = -1;
  EXPECT_FALSE(nonzero());  // -1 + rank 1 = 0
  c.indices = Tensor::from_values<int64_t>(Shape{2, 1}, {0, 1});
  EXPECT_TRUE(nonzero());  // -1 + rank 2 = 1
  c.batch_dims = 1;
  EXPECT_TRUE(nonzero());
  c.op = Op::kGatherNd;  // gather_nd takes no negative batch_dims: as written
  c.batch_dims = -2;
  EXPECT_TRUE(nonzero());
}

// rank_over_64 reads every input's rank; index_outside_int32 only int64 index values.
TEST(KnownFailureFacts, RankDimAndIndexLimits) {
  Case c;
  c.op = Op::kGather;
  c.params = Tensor::from_values<float>(Shape{std::vector<int64_t>(64, 1)}, {1});
  c.indices = Tensor::from_values<int64_t>(Shape{2}, {0, int64_t{INT32_MAX}});
  EXPECT_FALSE(CaseView(c, nullptr, nullptr).fact(CaseFact::kRankOver64));
  EXPECT_FALSE(CaseView(c, nullptr, nullptr).fact(CaseFact::kIndexOutsideInt32));
  c.params = Tensor::from_values<float>(Shape{std::vector<int64_t>(65, 1)}, {1});
  c.indices = Tensor::from_values<int64_t>(Shape{2}, {0, int64_t{INT32_MIN} - 1});
  EXPECT_TRUE(CaseView(c, nullptr, nullptr).fact(CaseFact::kRankOver64));
  EXPECT_TRUE(CaseView(c, nullptr, nullptr).fact(CaseFact::kIndexOutsideInt32));
  c.indices = Tensor::from_values<int32_t>(Shape{1}, {INT32_MIN});
  EXPECT_FALSE(CaseView(c, nullptr, nullptr).fact(CaseFact::kIndexOutsideInt32));
  // dim_over_int32: a shape dimension, or a scatter_nd shape value; depth_zero: indices [N, 0].
  EXPECT_FALSE(CaseView(c, nullptr, nullptr).fact(CaseFact::kDimOverInt32));
  c.params = Tensor::from_values<float>(Shape{int64_t{INT32_MAX} + 1, 0}, {});
  EXPECT_TRUE(CaseView(c, nullptr, nullptr).fact(CaseFact::kDimOverInt32));
  Case s;
  s.op = Op::kScatterNd;
  s.indices = Tensor::from_values<int32_t>(Shape{2, 0}, {});
  s.updates = Tensor::from_values<float>(Shape{2}, {1, 2});
  s.shape = Tensor::from_values<int64_t>(Shape{1}, {int64_t{INT32_MAX} + 1});
  EXPECT_TRUE(CaseView(s, nullptr, nullptr).fact(CaseFact::kDimOverInt32));
  EXPECT_TRUE(CaseView(s, nullptr, nullptr).fact(CaseFact::kDepthZero));
  s.indices = Tensor::from_values<int32_t>(Shape{2, 1}, {0, 1});
  s.shape = Tensor::from_values<int64_t>(Shape{1}, {INT32_MAX});
  EXPECT_FALSE(CaseView(s, nullptr, nullptr).fact(CaseFact::kDimOverInt32));
  EXPECT_FALSE(CaseView(s, nullptr, nullptr).fact(CaseFact::kDepthZero));
}

// empty_slice: the dims after those an index row addresses hold a 0 (spec "lazy validation": a
// gather's inner size 0); an outer size 0 or an empty address space is not an empty slice.
TEST(KnownFailureFacts, EmptySliceIsTheDimsAfterTheAddressedOnes) {
  const auto empty_slice = [](const Case& c) {
    return CaseView(c, nullptr, nullptr).fact(CaseFact::kEmptySlice);
  };
  Case c;
  c.op = Op::kGather;
  c.params = Tensor::from_values<float>(Shape{4, 0}, {});
  c.indices = Tensor::from_values<int32_t>(Shape{1}, {7});
  c.axis = Tensor::from_values<int32_t>(Shape{}, {0});
  EXPECT_TRUE(empty_slice(c));  // inner size 0
  c.params = Tensor::from_values<float>(Shape{0, 3}, {});
  c.axis = Tensor::from_values<int32_t>(Shape{}, {1});
  EXPECT_FALSE(empty_slice(c));  // outer size 0: the slice is [1] after axis 1
  c.axis = Tensor::from_values<int32_t>(Shape{}, {0});
  EXPECT_FALSE(empty_slice(c));  // the addressed dim is 0, the slice [3] is not
  c.op = Op::kGatherNd;
  c.axis.reset();
  c.params = Tensor::from_values<float>(Shape{2, 3, 0}, {});
  c.indices = Tensor::from_values<int32_t>(Shape{1, 2}, {1, 2});
  EXPECT_TRUE(empty_slice(c));
  c.indices = Tensor::from_values<int32_t>(Shape{1, 3}, {1, 2, 0});
  EXPECT_FALSE(empty_slice(c));  // depth 3: a row addresses one element
  c.op = Op::kScatterNd;
  c.params.reset();
  c.shape = Tensor::from_values<int32_t>(Shape{2}, {5, 0});
  c.indices = Tensor::from_values<int32_t>(Shape{1, 1}, {3});
  EXPECT_TRUE(empty_slice(c));
  c.shape = Tensor::from_values<int32_t>(Shape{3}, {5, 0, 2});
  c.indices = Tensor::from_values<int32_t>(Shape{1, 2}, {3, 0});
  EXPECT_FALSE(empty_slice(c));
}

}  // namespace
}  // namespace gscheck::reports
