// Files that are either the old version or the complete new one, never a mix: what reports are
// written with (and what any other writer of run artifacts should use).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace gscheck::reports {

/// Write text to path atomically: a new temporary file in the same folder (parents created),
/// the whole text written, fsync, rename over path, fsync of the folder. A reader (or a run
/// killed at any point, SIGKILL included) sees the previous file or the complete new one; two
/// writers of one path leave one of their files whole. On failure the temporary is removed and
/// the error (kInternal) names the step, the path and the errno text.
Status write_file_atomically(const std::string& path, std::string_view text);

/// The same, for text written in pieces: create(), write() as often as needed, commit(). A file
/// destroyed before commit() removes its temporary and leaves path as it was.
class AtomicFile {
 public:
  static Expected<AtomicFile> create(const std::string& path);
  AtomicFile(AtomicFile&& o) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  ~AtomicFile();
  Status write(std::string_view text);
  Status commit();

 private:
  AtomicFile(std::string path, std::string tmp, int fd);
  std::string path_, tmp_;
  int fd_ = -1;
};

}  // namespace gscheck::reports
