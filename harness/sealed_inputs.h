// The case files a run grades, read whole and hashed before any graded code runs (a plugin's
// init(), a Python module's import) and never read again: a backend that rewrites them, or the
// targets of their symlinks, changes nothing it is graded by. The report records the digests.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace gscheck::harness {

class SealedInputs {
 public:
  /// Reads each file (at most max_bytes each, as load_case_file would); a file that cannot be
  /// read keeps its error and grades as load_case_file's error would.
  static SealedInputs read(const std::vector<std::string>& files, int64_t max_bytes);

  struct File {
    Expected<std::string> text = Error{ErrorClass::kInternal, "not read"};
    std::string sha256;  ///< of the text; "" when it could not be read
  };
  /// The file as read, or nullptr for a path that was not sealed.
  const File* find(const std::string& path) const;
  /// SHA-256 over "<sha256>  <path>\n" per file in path order (sha256sum's format; an unreadable
  /// file's digest is "-"): one value naming every case file of the run.
  std::string digest() const;
  std::size_t size() const { return files_.size(); }
  int64_t bytes() const { return bytes_; }

 private:
  std::map<std::string, File> files_;
  int64_t bytes_ = 0;
};

}  // namespace gscheck::harness
