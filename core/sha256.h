// SHA-256 of bytes, as lowercase hex: how a report names the exact inputs and programs that
// graded a run (OpenSSL's libcrypto; nothing of gscheck's own).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace gscheck {

/// The 64-character lowercase hex digest of data.
std::string sha256_hex(std::string_view data);
/// The digest of a whole file, read in blocks (kParse when it cannot be read).
Expected<std::string> sha256_file(const std::string& path);

}  // namespace gscheck
