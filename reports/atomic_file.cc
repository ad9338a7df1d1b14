#include "reports/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace gscheck::reports {
namespace {

Error io_error(const std::string& what, const std::string& path, int err) {
  return Error{ErrorClass::kInternal, path + ": " + what + " failed: " + std::strerror(err) +
                                          " (errno " + std::to_string(err) + ")"};
}

// What a path that is not a regular file is, in words.
const char* kind_of(mode_t m) {
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// Temporaries "<name>.tmp.<pid>.<n>" of writers that are gone.
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.filename().string() + ".tmp.";
  std::error_code ec;
  fs::directory_iterator it(p.parent_path().empty() ? fs::path(".") : p.parent_path(), ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos ||
        rest.find_first_not_of("0123456789.") != std::string::npos)
      continue;
    const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

// The standard output reports to "-" go to (reserve_stdout_for_reports), else fd 1.
std::atomic<int> g_report_stdout{-1};

}  // namespace

void reserve_stdout_for_reports() {
  if (g_report_stdout.load() >= 0) return;
  std::fflush(stdout);
  const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return;  // then "-" writes to fd 1 as it is
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  g_report_stdout.store(fd);
}

Status check_output_path(const std::string& path) {
  if (path == "-") return {};
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return io_error("looking at the output path", path, errno);
  }
  if (S_ISREG(st.st_mode)) return {};
  return Error{ErrorClass::kInvalidArgument, path + ": refusing to write a report over " +
                                                 kind_of(st.st_mode) +
                                                 "; give a new name or a regular file"};
}

AtomicFile::AtomicFile(std::string path, std::string tmp, int fd)
    : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : path_(std::move(o.path_)), tmp_(std::move(o.tmp_)), fd_(o.fd_) {
  o.fd_ = -1;
}

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

Expected<AtomicFile> AtomicFile::create(const std::string& path) {
  namespace fs = std::filesystem;
  if (path == "-") {  // written through: a reader of the pipe sees it as it comes
    const int out = g_report_stdout.load();
    const int fd = ::fcntl(out >= 0 ? out : STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) return io_error("duplicating the standard output", path, errno);
    return AtomicFile(path, "", fd);
  }
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return io_error("creating the folder " + dir.string(), path, ec.value());
  }
  GSCHECK_RETURN_IF_ERROR(check_output_path(path));
  remove_stale_temporaries(path);
  // Unique per process and call, so concurrent writers never share a temporary.
  static std::atomic<unsigned> counter{0};
  std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("creating " + tmp, path, errno);
  return AtomicFile(path, std::move(tmp), fd);
}

Status AtomicFile::write(std::string_view text) {
  if (fd_ < 0) return Error{ErrorClass::kInternal, path_ + ": write after commit"};
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("writing", path_, errno);
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Status AtomicFile::commit() {
  if (fd_ < 0) return Error{ErrorClass::kInternal, path_ + ": commit after commit"};
  const int fd = fd_;
  fd_ = -1;
  if (tmp_.empty()) {  // "-": nothing to sync or rename (fsync of a pipe fails with EINVAL)
    if (::close(fd) != 0) return io_error("closing", path_, errno);
    return {};
  }
  auto fail = [&](const std::string& what, int err) -> Status {
    ::unlink(tmp_.c_str());
    return io_error(what, path_, err);
  };
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return fail("fsync", err);
  }
  if (::close(fd) != 0) return fail("closing", errno);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) return fail("renaming " + tmp_ + " to it", errno);
  // The rename itself is durable once the folder is synced.
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

Status write_file_atomically(const std::string& path, std::string_view text) {
  auto f = AtomicFile::create(path);
  if (!f.ok()) return f.error();
  GSCHECK_RETURN_IF_ERROR(f->write(text));
  return f->commit();
}

}  // namespace gscheck::reports
