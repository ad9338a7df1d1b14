#include "fuzz/wire_check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/plugin/host_codec.h"
#include "backends/plugin/wire.h"

namespace gscheck::fuzz {

namespace w = worker;

int run_wire_result(const uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  uint32_t budget = 0;
  uint16_t payload_size = 0;
  std::memcpy(&budget, data, 4);
  std::memcpy(&payload_size, data + 4, 2);
  budget %= 1u << 20;
  data += 6;
  size -= 6;
  const std::size_t n = payload_size < size ? payload_size : size;
  const std::string payload(reinterpret_cast<const char*>(data), n);
  const int fd = ::memfd_create("wire-result-fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (size > n && ::write(fd, data + n, size - n) != static_cast<ssize_t>(size - n)) {
    ::close(fd);
    return 0;
  }
  plugin::LogTail log;
  const plugin::Decoded d = plugin::read_result(payload, "", fd, budget, log);
  ::close(fd);
  if (d.outcome.ok() && d.outcome.value().byte_size() > static_cast<int64_t>(budget)) abort();
  return 0;
}

int run_wire_call(const uint8_t* data, std::size_t size) {
  std::vector<unsigned char> in(data, data + size);  // exactly `size` bytes: ASan bounds them
  const unsigned char* base = in.data();
  if (w::check_call(base, size)) return 0;
  w::WireCall wc;
  std::memcpy(&wc, base, sizeof wc);
  volatile uint64_t sum = 0;
  auto touch = [&](uint64_t off, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) sum = sum + base[off + i];
  };
  touch(wc.policy_offset, wc.policy_size);
  for (const w::WireTensor& t : wc.inputs) {
    if (!t.present) continue;
    touch(t.dims_offset, 8ull * static_cast<uint32_t>(t.rank));
    touch(t.data_offset, t.data_bytes);
    if (t.dtype != 15) continue;  // GSC_STRING
    for (uint64_t i = 0; i < t.data_bytes / w::kStringEntryBytes; ++i) {
      uint64_t e[2];
      std::memcpy(e, base + t.data_offset + w::kStringEntryBytes * i, sizeof e);
      touch(e[0], e[1]);
    }
  }
  return 0;
}

}  // namespace gscheck::fuzz
