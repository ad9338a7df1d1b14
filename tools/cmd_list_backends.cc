// `gscheck list-backends`: each backend of this build and the contract it declares.
#include <cstdio>

#include "backends/registry.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace gscheck::tools {
namespace {

constexpr const char* kUsage =
    "usage: gscheck list-backends\n"
    "  Lists the backends of this build with the ops, element dtypes, index dtypes and\n"
    "  semantics each claims; a backend that cannot start here says why.\n";

template <class T, class Name>
std::string join(const std::vector<T>& values, Name name) {
  std::string s;
  for (const T& v : values) s += (s.empty() ? "" : ", ") + std::string(name(v));
  return s.empty() ? "(none)" : s;
}

}  // namespace

int cmd_list_backends(const std::vector<std::string>& args) {
  auto parsed = parse_args(args, {});
  if (!parsed.ok() || !parsed->positional.empty()) {
    std::fprintf(stderr, "gscheck list-backends: %s\n%s",
                 parsed.ok() ? ("unexpected argument '" + parsed->positional[0] + "'").c_str()
                             : parsed.error().message.c_str(),
                 kUsage);
    return 2;
  }
  if (parsed->has("--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  for (const auto& name : backend_names()) {
    auto b = make_backend(name);
    if (!b.ok()) {
      std::printf("%s\n  unavailable: %s\n", name.c_str(), b.error().message.c_str());
      continue;
    }
    const Capabilities& c = (*b)->capabilities();
    std::printf("%s\n", name.c_str());
    std::printf("  ops:           %s\n", join(c.ops, op_name).c_str());
    std::printf("  dtypes:        %s\n", join(c.dtypes, dtype_name).c_str());
    std::printf("  index dtypes:  %s\n", join(c.index_dtypes, dtype_name).c_str());
    std::printf("  semantics:     %s\n", join(c.semantics, semantics_name).c_str());
    std::printf("  api levels:    %s\n", join(c.apis, api_name).c_str());
    std::printf("  deterministic: %s\n", c.deterministic ? "yes" : "no");
    std::printf("  tf messages:   %s\n",
                c.tf_messages ? "yes" : (c.tf_bad_index_messages ? "bad_index only" : "no"));
    std::printf("  half sums in float32: %s\n", c.accumulates_half_in_float ? "yes" : "no");
    if (c.max_case_bytes > 0)
      std::printf("  own budget:    %lld bytes of inputs and output per case\n",
                  static_cast<long long>(c.max_case_bytes));
  }
  return 0;
}

}  // namespace gscheck::tools
