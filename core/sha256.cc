#include "core/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace gscheck {
namespace {

struct MdFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string hex(const unsigned char* d, unsigned n) {
  static const char* digits = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (unsigned i = 0; i < n; ++i) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  // EVP_Digest fails only without memory; gscheck's callers hold the data already.
  if (EVP_Digest(data.data(), data.size(), d, &n, EVP_sha256(), nullptr) != 1) std::abort();
  return hex(d, n);
}

Expected<std::string> sha256_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rbe"), &std::fclose);
  if (!f) return parse_error(path + ": cannot read: " + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, MdFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) std::abort();
  char buf[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0)
    if (EVP_DigestUpdate(ctx.get(), buf, got) != 1) std::abort();
  if (std::ferror(f.get())) return parse_error(path + ": cannot read: " + std::strerror(errno));
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  if (EVP_DigestFinal_ex(ctx.get(), d, &n) != 1) std::abort();
  return hex(d, n);
}

}  // namespace gscheck
