// Every float16 and bfloat16 bit pattern through the case format's text, both ways, and the
// decimal text TensorFlow prints for each value read back to the same bits.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/case_json.h"
#include "core/dtype.h"

namespace gscheck {
namespace {

using nlohmann::json;

template <class T>
float value_of(uint16_t bits) {
  return to_float(T{bits});
}

template <class T>
bool is_nan_bits(uint16_t bits) {
  return std::isnan(value_of<T>(bits));
}

// One element written as the case format writes it (numbers), through text, and read back.
template <class T>
Expected<uint16_t> text_round_trip(uint16_t bits, json* written) {
  const Tensor t = Tensor::from_values<T>(Shape{1}, {T{bits}});
  *written = tensor_to_json(t, TensorEncoding::kNumbers);
  auto back = tensor_from_json(json::parse(written->dump()), "t");
  if (!back.ok()) return back.error();
  return back->template data_as<T>()[0].bits;
}

// The bits a decimal JSON number text reads as.
template <class T>
Expected<uint16_t> read_number_text(const std::string& text) {
  const json j = json::parse(R"({"dtype": ")" + std::string(dtype_name(dtype_of<T>())) +
                             R"(", "shape": [1], "data": [)" + text + "]}");
  auto t = tensor_from_json(j, "t");
  if (!t.ok()) return t.error();
  return t->template data_as<T>()[0].bits;
}

// numpy's str()/repr() of a float16 (what TensorFlow prints through .numpy()): the shortest
// decimal that reads back to the same float16, the closest to the value among those (Dragon4's
// unique mode). Built from the correctly rounded P-digit decimal and its two neighbours, which
// covers the asymmetric gap below a power of two. HalfText.Float16MatchesNumpy checks it against
// numpy's own table.
std::string float16_shortest(uint16_t bits) {
  if (bits & 0x8000) return "-" + float16_shortest(bits & 0x7fff);
  const double d = value_of<Float16>(bits);
  for (int p = 1; p <= 17; ++p) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific, p - 1);
    const std::string sci(buf, r.ptr);
    const auto e = sci.find('e');
    std::string digits = sci.substr(0, e);
    std::erase(digits, '.');
    const long long mant = std::stoll(digits);
    const int exp10 = std::stoi(sci.substr(e + 1)) - (p - 1);
    std::string best;
    double best_err = INFINITY;
    for (long long m : {mant, mant - 1, mant + 1}) {
      if (m < 0 || (m == 0 && d != 0)) continue;
      const std::string text = std::to_string(m) + "e" + std::to_string(exp10);
      double back = 0;
      std::from_chars(text.data(), text.data() + text.size(), back);
      if (float16_from_float(static_cast<float>(back)).bits != bits) continue;
      if (std::fabs(back - d) < best_err) best_err = std::fabs(back - d), best = text;
    }
    if (!best.empty()) return best;
  }
  return "";
}

// ml_dtypes' bfloat16 repr (TensorFlow's .numpy() elements): the value as a float through an
// ostream with its default precision, i.e. %g with 6 significant digits.
std::string bfloat16_tf_text(uint16_t bits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(value_of<BFloat16>(bits)));
  return buf;
}

template <class T>
void check_every_pattern(uint16_t quiet_nan) {
  int checked = 0;
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    json written;
    auto back = text_round_trip<T>(bits, &written);
    ASSERT_TRUE(back.ok()) << std::hex << b << ": " << back.error().message;
    ASSERT_EQ(*back, bits) << std::hex << b << " written as " << written.dump();
    // Readable numbers for everything but a NaN with a payload, which only data_b64 reproduces.
    const bool payload_nan = is_nan_bits<T>(bits) && (bits & 0x7fff) != quiet_nan;
    ASSERT_EQ(written.contains("data_b64"), payload_nan) << std::hex << b << written.dump();
    ++checked;
  }
  EXPECT_EQ(checked, 65536);
  // "nan" and "-nan" are the quiet NaN without payload, written and read.
  json written;
  ASSERT_TRUE(text_round_trip<T>(quiet_nan, &written).ok());
  EXPECT_EQ(written["data"][0], "nan");
  ASSERT_TRUE(text_round_trip<T>(quiet_nan | 0x8000, &written).ok());
  EXPECT_EQ(written["data"][0], "-nan");
  EXPECT_EQ(*read_number_text<T>("\"nan\""), quiet_nan);
  EXPECT_EQ(*read_number_text<T>("\"-nan\""), quiet_nan | 0x8000);
  // The signed zeros: "-0.0" (string or number) is -0; the JSON integer -0 is 0.
  EXPECT_EQ(*read_number_text<T>("\"-0.0\""), 0x8000);
  EXPECT_EQ(*read_number_text<T>("-0.0"), 0x8000);
  EXPECT_EQ(*read_number_text<T>("-0"), 0);
}

TEST(HalfText, Float16EveryPatternRoundTrips) { check_every_pattern<Float16>(0x7e00); }
TEST(HalfText, BFloat16EveryPatternRoundTrips) { check_every_pattern<BFloat16>(0x7fc0); }

template <class T>
void check_tf_text(std::string (*tf_text)(uint16_t)) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    if (!std::isfinite(value_of<T>(bits))) continue;  // TF prints "nan"/"inf": no bits to keep
    const std::string text = tf_text(bits);
    auto got = read_number_text<T>(text);
    ASSERT_TRUE(got.ok()) << text;
    // JSON's integer -0 is the integer 0 (docs/case_format.md): bfloat16's "-0" reads as +0.
    const uint16_t want = text == "-0" ? 0 : bits;
    ASSERT_EQ(*got, want) << std::hex << b << " from TF's text " << text;
  }
}

TEST(HalfText, Float16ReadsTensorFlowsText) { check_tf_text<Float16>(float16_shortest); }
TEST(HalfText, BFloat16ReadsTensorFlowsText) { check_tf_text<BFloat16>(bfloat16_tf_text); }

// Decimals one double ulp either side of the midpoint of two neighbours read as the nearer
// neighbour: the decimal is rounded once, straight to the half type (rounding it to float first
// lands on the midpoint, and ties-to-even then picks the wrong side for half of the pairs).
template <class T>
void check_midpoints() {
  for (uint32_t b = 0; b < 0x7fff; ++b) {
    const auto lo = static_cast<uint16_t>(b), hi = static_cast<uint16_t>(b + 1);
    const double vlo = value_of<T>(lo), vhi = value_of<T>(hi);
    if (!std::isfinite(vlo) || !std::isfinite(vhi)) continue;
    const double mid = vlo + (vhi - vlo) / 2;  // exact: a half type has at most 11 bits
    for (int side : {-1, 1}) {
      const double x = std::nextafter(mid, side < 0 ? 0.0 : INFINITY);
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific, 16);
      const std::string text(buf, r.ptr);
      for (int sign : {1, -1}) {
        auto got = read_number_text<T>((sign < 0 ? "-" : "") + text);
        ASSERT_TRUE(got.ok()) << text;
        const uint16_t want = static_cast<uint16_t>((side < 0 ? lo : hi) | (sign < 0 ? 0x8000 : 0));
        ASSERT_EQ(*got, want) << std::hex << b << " midpoint side " << side << ": " << text;
      }
    }
  }
}

TEST(HalfText, Float16MidpointsRoundOnce) { check_midpoints<Float16>(); }
TEST(HalfText, BFloat16MidpointsRoundOnce) { check_midpoints<BFloat16>(); }

// With GSCHECK_FLOAT16_NUMPY_TABLE set (ctest core.half_text_numpy, the pinned TensorFlow venv's
// numpy), float16_shortest must give numpy's str() value for every finite pattern: the table has
// one line per pattern 0x0000..0x7bff.
TEST(HalfText, Float16MatchesNumpy) {
  const char* path = std::getenv("GSCHECK_FLOAT16_NUMPY_TABLE");
  if (path == nullptr) GTEST_SKIP() << "GSCHECK_FLOAT16_NUMPY_TABLE not set";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::string line;
  uint32_t b = 0;
  for (; std::getline(in, line); ++b) {
    ASSERT_LT(b, 0x7c00u);
    double numpy_value = 0, ours = 0;
    const std::string mine = float16_shortest(static_cast<uint16_t>(b));
    std::from_chars(line.data(), line.data() + line.size(), numpy_value);
    std::from_chars(mine.data(), mine.data() + mine.size(), ours);
    ASSERT_EQ(numpy_value, ours) << std::hex << b << ": numpy " << line << ", ours " << mine;
  }
  EXPECT_EQ(b, 0x7c00u);
}

}  // namespace
}  // namespace gscheck
