// Case files are read and hashed once, before the backend starts, and graded from that text.
#include "harness/sealed_inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "core/sha256.h"

namespace gscheck::harness {
namespace {

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/gscheck_sealed_XXXXXX";
  const int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << text;
  return path;
}

TEST(SealedInputs, ReadOnceHashedAndNeverReadAgain) {
  // FIPS 180-2's example: SHA-256("abc").
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string a = write_temp("{\"a\": 1}"), b = write_temp("{\"b\": 2}");
  const std::string missing = a + ".missing";
  const SealedInputs s = SealedInputs::read({a, b, missing}, 1 << 20);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s.bytes(), 16);
  // Rewritten after sealing: the sealed text is what grades.
  std::ofstream(a) << "{\"a\": 999}";
  ASSERT_NE(s.find(a), nullptr);
  ASSERT_TRUE(s.find(a)->text.ok());
  EXPECT_EQ(*s.find(a)->text, "{\"a\": 1}");
  EXPECT_EQ(s.find(a)->sha256, sha256_hex("{\"a\": 1}"));
  ASSERT_FALSE(s.find(missing)->text.ok());
  EXPECT_EQ(s.find(missing)->text.error().message.rfind(missing + ": ", 0), 0u);
  EXPECT_EQ(s.find("/not/sealed.json"), nullptr);
  // The digest is sha256sum's listing, in path order, "-" for an unreadable file.
  std::map<std::string, std::string> lines{
      {a, sha256_hex("{\"a\": 1}")}, {b, sha256_hex("{\"b\": 2}")}, {missing, "-"}};
  std::string listing;
  for (const auto& [path, h] : lines) listing += h + "  " + path + "\n";
  EXPECT_EQ(s.digest(), sha256_hex(listing));
  std::remove(a.c_str());
  std::remove(b.c_str());
}

}  // namespace
}  // namespace gscheck::harness
