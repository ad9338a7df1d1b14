// gscheck_fuzz_replay: run the fuzz targets' checks without libFuzzer (CI, crash triage), turn a
// fuzz input into a case file, and check regression case files.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/case_json.h"
#include "fuzz/harness.h"

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  gscheck_fuzz_replay --target TARGET INPUT...\n"
    "      run TARGET's check once per input file (a directory: every file in it), as libFuzzer\n"
    "      would replay it; a mismatch writes a case file and aborts\n"
    "  gscheck_fuzz_replay --target TARGET --write-case FILE INPUT\n"
    "      write the case decoded from INPUT to FILE, with the reference outcome as expect\n"
    "  gscheck_fuzz_replay --case PATH...\n"
    "      check case files (a directory: every *.json below it) against the reference and\n"
    "      every backend; exit 1 on any failure\n"
    "  gscheck_fuzz_replay --backend-targets\n"
    "      print the differential targets with an op $GSCHECK_FUZZ_BACKEND claims, one a line\n"
    "TARGET: gather, gather_nd, scatter_nd, tensor_scatter, case_json\n";

int usage_error(const std::string& why) {
  std::fprintf(stderr, "gscheck_fuzz_replay: %s\n%s", why.c_str(), kUsage);
  return 2;
}

// Input files: a file as is; a directory's regular files, sorted.
std::vector<std::filesystem::path> expand_inputs(const std::vector<std::string>& args,
                                                 std::string& error) {
  std::vector<std::filesystem::path> files;
  for (const std::string& a : args) {
    std::error_code ec;
    if (std::filesystem::is_directory(a, ec)) {
      std::vector<std::filesystem::path> in_dir;
      for (const auto& entry : std::filesystem::directory_iterator(a, ec))
        if (entry.is_regular_file()) in_dir.push_back(entry.path());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (std::filesystem::is_regular_file(a, ec)) {
      files.emplace_back(a);
    } else {
      error = "no such input: " + a;
      return {};
    }
  }
  return files;
}

bool read_file(const std::filesystem::path& p, std::vector<uint8_t>& bytes) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string target, write_case;
  std::vector<std::string> inputs, case_paths;
  bool case_mode = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if ((a == "--target" || a == "--write-case") && i + 1 < argc) {
      (a == "--target" ? target : write_case) = argv[++i];
    } else if (a == "--case") {
      case_mode = true;
    } else if (a == "--backend-targets" && argc == 2) {
      for (gscheck::fuzz::Family f : gscheck::fuzz::backend_families())
        std::printf("%s\n", std::string(gscheck::fuzz::family_name(f)).c_str());
      return 0;
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a.starts_with("-")) {
      return usage_error("unknown option " + std::string(a));
    } else {
      (case_mode ? case_paths : inputs).emplace_back(a);
    }
  }

  if (case_mode) {
    if (case_paths.empty() || !target.empty()) return usage_error("--case takes case files only");
    const auto files = gscheck::list_case_files(case_paths);
    if (!files.ok()) return usage_error(files.error().message);
    int failed = 0;
    for (const std::string& f : *files) failed += gscheck::fuzz::check_case_file(f) ? 0 : 1;
    std::printf("%zu case files, %d failed\n", files->size(), failed);
    return failed == 0 ? 0 : 1;
  }

  const auto family = gscheck::fuzz::family_from_name(target);
  if (!family && target != "case_json") return usage_error("unknown or missing --target");
  if (inputs.empty()) return usage_error("no inputs");
  if (!write_case.empty()) {
    if (!family) return usage_error("case_json inputs are case files already");
    if (inputs.size() != 1) return usage_error("--write-case takes exactly one input");
    gscheck::fuzz::set_write_case_path(write_case);
  }
  std::string error;
  const auto files = expand_inputs(inputs, error);
  if (!error.empty()) return usage_error(error);

  std::vector<uint8_t> bytes;
  for (const auto& f : files) {
    if (!read_file(f, bytes)) return usage_error("cannot read " + f.string());
    if (family) {
      gscheck::fuzz::run_differential(*family, bytes.data(), bytes.size());
    } else {
      gscheck::fuzz::run_case_json(bytes.data(), bytes.size());
    }
  }
  if (!write_case.empty()) {
    if (gscheck::fuzz::cases_written() != 1) return 1;
    std::printf("wrote %s\n", write_case.c_str());
    return 0;
  }
  std::printf("%s: %zu inputs replayed, no mismatch\n", target.c_str(), files.size());
  return 0;
}
