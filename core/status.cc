#include "core/status.h"

#include <array>

namespace gscheck {
namespace {
constexpr std::array<std::string_view, 7> kNames = {
    "invalid_argument", "bad_index", "unsupported", "resource_exhausted",
    "unimplemented",    "internal",  "parse"};
}  // namespace

std::string_view error_class_name(ErrorClass c) { return kNames[static_cast<size_t>(c)]; }

std::optional<ErrorClass> error_class_from_name(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<ErrorClass>(i);
  return std::nullopt;
}
}  // namespace gscheck
