// Files that are either the old version or the complete new one, never a mix: what reports are
// written with (and what any other writer of run artifacts should use).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace gscheck::reports {

/// OK when path names nothing yet or a regular file; else kInvalidArgument naming what it is (a
/// symlink, FIFO, device, socket or folder is never replaced: as root, renaming over /dev/null or
/// following /dev/stdout would clobber what the name stood for).
Status check_output_path(const std::string& path);

/// The path "-" names the standard output: AtomicFile writes it through, unbuffered and in
/// order, with nothing to rename. Call this once before anything is printed when a report goes
/// to "-": it keeps the real standard output for reports and points fd 1 at stderr, so the
/// human-readable lines never mix with the JSON a pipe reads.
void reserve_stdout_for_reports();

/// Write text to path atomically: a new temporary file in the same folder (parents created),
/// the whole text written, fsync, rename over path, fsync of the folder. A reader (or a run
/// killed at any point, SIGKILL included) sees the previous file or the complete new one; two
/// writers of one path leave one of their files whole. On failure the temporary is removed and
/// the error (kInternal) names the step, the path and the errno text.
Status write_file_atomically(const std::string& path, std::string_view text);

/// The same, for text written in pieces: create(), write() as often as needed, commit(). A file
/// destroyed before commit() removes its temporary and leaves path as it was. create() refuses
/// what check_output_path refuses, and removes the temporaries of this path that writers which
/// no longer run left behind (a run killed by SIGKILL mid-write).
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
