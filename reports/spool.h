// Texts written one after another to an unlinked temporary file and read back by where they
// are: how `report merge` and `report diff` keep a few words per case in memory, not the case.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gscheck::reports {

class Spool {
 public:
  /// Where a text is: its offset and length.
  struct Where {
    uint64_t offset = 0, size = 0;
  };
  /// what names the spool's user in errors ("report merge").
  explicit Spool(std::string what) : what_(std::move(what)) {}
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  ~Spool() {
    if (f_) std::fclose(f_);
  }

  Expected<Where> append(std::string_view text) {
    if (!f_) f_ = std::tmpfile();  // unlinked: gone with the process however it ends
    if (!f_ || std::fwrite(text.data(), 1, text.size(), f_) != text.size())
      return Error{ErrorClass::kInternal, what_ + ": writing the case spool failed"};
    flushed_ = false;
    const Where w{size_, text.size()};
    size_ += text.size();
    return w;
  }

  Expected<std::string> read(Where w) {
    if (!flushed_ && f_ && std::fflush(f_) != 0)
      return Error{ErrorClass::kInternal, what_ + ": writing the case spool failed"};
    flushed_ = true;
    std::string text(w.size, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = f_ ? ::pread(fileno(f_), text.data() + got, text.size() - got,
                                     static_cast<off_t>(w.offset + got))
                           : -1;
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Error{ErrorClass::kInternal, what_ + ": rereading the case spool failed"};
      got += static_cast<std::size_t>(n);
    }
    return text;
  }

 private:
  std::string what_;
  std::FILE* f_ = nullptr;
  uint64_t size_ = 0;
  bool flushed_ = true;
};

}  // namespace gscheck::reports
