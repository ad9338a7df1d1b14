#include "core/case_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

#include "core/message_regex.h"

namespace gscheck {
namespace {

using nlohmann::json;
static_assert(std::endian::native == std::endian::little, "data_b64 is little-endian raw memory");

Error field_error(const std::string& path, const std::string& msg) {
  return parse_error(path.empty() ? msg : path + ": " + msg);
}

std::string idx(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string key(const std::string& path, const char* name) {
  const std::string n = excerpt(name);  // names may come from the file
  return path.empty() ? n : path + "." + n;
}

const char* json_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a non-integer number";
    default:
      return "a number";
  }
}

Error expected_error(const std::string& path, const char* what, const json& got) {
  return field_error(path, std::string("expected ") + what + ", got " + json_kind(got));
}

// ---- integers -------------------------------------------------------------------------------

// A JSON integer (or a decimal string: int64/uint64 beyond 2^53) as a value of T.
template <class T>
Status int_from_json(const json& v, const std::string& path, T* out) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  Wide w = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (std::is_signed_v<T> && u > static_cast<uint64_t>(INT64_MAX))
      return field_error(path, std::to_string(u) + " is out of range for " +
                                   std::string(dtype_name(dtype_of<T>())));
    w = static_cast<Wide>(u);
  } else if (v.is_number_integer()) {
    const int64_t s = v.get<int64_t>();
    if (!std::is_signed_v<T> && s < 0)
      return field_error(path, std::to_string(s) + " is out of range for " +
                                   std::string(dtype_name(dtype_of<T>())));
    w = static_cast<Wide>(s);
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, w);
    if (s.empty() || ec == std::errc::result_out_of_range)
      return field_error(path, "\"" + excerpt(s) + "\" is out of range for " +
                                   std::string(dtype_name(dtype_of<T>())));
    if (ec != std::errc() || p != end)
      return field_error(path, "expected an integer, got the string \"" + excerpt(s) + "\"");
  } else {
    return expected_error(path, "an integer", v);
  }
  if constexpr (sizeof(T) < sizeof(Wide)) {
    if (w < static_cast<Wide>(std::numeric_limits<T>::min()) ||
        w > static_cast<Wide>(std::numeric_limits<T>::max()))
      return field_error(path, std::to_string(w) + " is out of range for " +
                                   std::string(dtype_name(dtype_of<T>())));
  }
  *out = static_cast<T>(w);
  return {};
}

template <class T>
json int_to_json(T v) {
  constexpr int64_t kExact = int64_t{1} << 53;  // beyond this, JSON readers may round doubles
  if constexpr (std::is_signed_v<T>) {
    if (v > kExact || v < -kExact) return std::to_string(v);
    return static_cast<int64_t>(v);
  } else {
    if (v > static_cast<uint64_t>(kExact)) return std::to_string(v);
    return static_cast<uint64_t>(v);
  }
}

// ---- floating point -------------------------------------------------------------------------

// double -> float rounded to odd: rounding that to a narrower type (<= 22 bits of mantissa)
// is then the correctly rounded double -> half result, with no double-rounding error.
float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  return std::bit_cast<float>(bits | 1u);
}

template <class T>
struct FloatTraits;
template <>
struct FloatTraits<float> {
  using Bits = uint32_t;
  static constexpr Bits kQuietNan = 0x7fc00000u, kSign = 0x80000000u;
  static Bits bits(float v) { return std::bit_cast<Bits>(v); }
  static float from_bits(Bits b) { return std::bit_cast<float>(b); }
  static double to_double(float v) { return v; }
  static float from_double(double d) { return static_cast<float>(d); }
};
template <>
struct FloatTraits<double> {
  using Bits = uint64_t;
  static constexpr Bits kQuietNan = 0x7ff8000000000000u, kSign = 0x8000000000000000u;
  static Bits bits(double v) { return std::bit_cast<Bits>(v); }
  static double from_bits(Bits b) { return std::bit_cast<double>(b); }
  static double to_double(double v) { return v; }
  static double from_double(double d) { return d; }
};
template <>
struct FloatTraits<Float16> {
  using Bits = uint16_t;
  static constexpr Bits kQuietNan = 0x7e00u, kSign = 0x8000u;
  static Bits bits(Float16 v) { return v.bits; }
  static Float16 from_bits(Bits b) { return {b}; }
  static double to_double(Float16 v) { return to_float(v); }
  static Float16 from_double(double d) { return float16_from_float(round_to_odd_float(d)); }
};
template <>
struct FloatTraits<BFloat16> {
  using Bits = uint16_t;
  static constexpr Bits kQuietNan = 0x7fc0u, kSign = 0x8000u;
  static Bits bits(BFloat16 v) { return v.bits; }
  static BFloat16 from_bits(Bits b) { return {b}; }
  static double to_double(BFloat16 v) { return to_float(v); }
  static BFloat16 from_double(double d) { return bfloat16_from_float(round_to_odd_float(d)); }
};

template <class T>
Status float_from_json(const json& v, const std::string& path, T* out) {
  using F = FloatTraits<T>;
  if (v.is_number()) {
    *out = F::from_double(v.get<double>());
    return {};
  }
  if (!v.is_string())
    return expected_error(path, "a number or \"nan\"/\"inf\"/\"-inf\"/\"-0.0\"", v);
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "nan") {
    *out = F::from_bits(F::kQuietNan);
  } else if (s == "-nan") {
    *out = F::from_bits(F::kQuietNan | F::kSign);
  } else if (s == "inf") {
    *out = F::from_double(std::numeric_limits<double>::infinity());
  } else if (s == "-inf") {
    *out = F::from_double(-std::numeric_limits<double>::infinity());
  } else if (s == "-0.0") {
    *out = F::from_double(-0.0);
  } else {
    return field_error(
        path, "expected a number or \"nan\", \"-nan\", \"inf\", \"-inf\", \"-0.0\", got \"" +
                  excerpt(s) + "\"");
  }
  return {};
}

// The JSON value for a float, or null when no value reproduces its bits (a NaN payload).
template <class T>
json float_to_json(T v) {
  using F = FloatTraits<T>;
  const auto b = F::bits(v);
  const double d = F::to_double(v);
  if (std::isnan(d)) {
    if (b == F::kQuietNan) return "nan";
    if (b == (F::kQuietNan | F::kSign)) return "-nan";
    return nullptr;
  }
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0 && (b & F::kSign)) return "-0.0";
  if constexpr (std::is_same_v<T, double>) {
    return d;  // nlohmann prints the shortest text that reads back as the same double
  } else {
    // The shortest decimal that reads back to the same bits (halves print as "0.1", not as the
    // float "0.099975586").
    char buf[32];
    for (int precision = 1; precision <= 17; ++precision) {
      auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::general, precision);
      double back = 0;
      std::from_chars(buf, r.ptr, back);
      if (F::bits(F::from_double(back)) == b) return back;
    }
    return d;  // exact: every float/half value is a double
  }
}

// ---- elements -------------------------------------------------------------------------------

template <class T>
Status element_from_json(const json& v, const std::string& path, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return expected_error(path, "true or false", v);
    *out = v.get<bool>();
    return {};
  } else if constexpr (std::is_integral_v<T>) {
    return int_from_json(v, path, out);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return expected_error(path, "a string", v);
    *out = v.get<std::string>();
    return {};
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    if (!v.is_array() || v.size() != 2) return expected_error(path, "a [re, im] pair", v);
    R re, im;
    GSCHECK_RETURN_IF_ERROR(float_from_json(v[0], idx(path, 0), &re));
    GSCHECK_RETURN_IF_ERROR(float_from_json(v[1], idx(path, 1), &im));
    *out = T(re, im);
    return {};
  } else {
    return float_from_json(v, path, out);
  }
}

// The JSON value of an element, or null when only base64 keeps its bits.
template <class T>
json element_to_json(const T& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return int_to_json(v);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    json re = float_to_json(v.real()), im = float_to_json(v.imag());
    if (re.is_null() || im.is_null()) return nullptr;
    return json::array({std::move(re), std::move(im)});
  } else {
    return float_to_json(v);
  }
}

// ---- base64 ---------------------------------------------------------------------------------

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      extra = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

// ---- tensors --------------------------------------------------------------------------------

constexpr const char* kDataFields[] = {"data", "data_b64", "fill", "iota"};

// Bytes a tensor of this dtype/shape needs, counting string lengths where known.
std::optional<int64_t> budget_bytes(DType dt, const Shape& shape, int64_t string_len) {
  auto base = tensor_bytes(dt, shape);
  if (!base || dt != DType::kString) return base;
  auto extra = checked_mul(*shape.num_elements(), string_len);
  if (!extra || *extra > INT64_MAX - *base) return std::nullopt;
  return *base + *extra;
}

Error over_budget(const std::string& path, DType dt, const Shape& shape, int64_t max_bytes) {
  return Error{ErrorClass::kResourceExhausted, path + ": a " + std::string(dtype_name(dt)) +
                                                   " tensor of shape " + shape.to_string() +
                                                   " exceeds the memory budget of " +
                                                   std::to_string(max_bytes) + " bytes"};
}

Expected<Shape> shape_from_json(const json& j, const std::string& path) {
  if (!j.is_array()) return expected_error(path, "an array of dimensions", j);
  if (j.size() > static_cast<std::size_t>(kMaxRank))
    return field_error(path, "rank " + std::to_string(j.size()) + " exceeds the maximum " +
                                 std::to_string(kMaxRank));
  Shape shape;
  for (std::size_t i = 0; i < j.size(); ++i) {
    int64_t d;
    GSCHECK_RETURN_IF_ERROR(int_from_json(j[i], idx(path, i), &d));
    if (d < 0) return field_error(idx(path, i), "dimension must be >= 0, got " + std::to_string(d));
    shape.dims().push_back(d);
  }
  if (!shape.num_elements())
    return field_error(path, "shape " + shape.to_string() + " has more than 2**63 - 1 elements");
  return shape;
}

template <class T>
Status fill_iota(const json& s, const std::string& path, Tensor& t) {
  const int64_t n = t.num_elements();
  if constexpr (std::is_same_v<T, bool>) {
    (void)s, (void)n;
    return field_error(path, "iota is not defined for bool");
  } else if constexpr (std::is_same_v<T, std::string>) {
    int64_t start;
    GSCHECK_RETURN_IF_ERROR(int_from_json(s, path, &start));
    auto& out = t.strings();
    for (int64_t i = 0; i < n; ++i) {
      int64_t v;
      if (__builtin_add_overflow(start, i, &v))
        return field_error(path, "start + " + std::to_string(i) + " overflows int64");
      out[static_cast<std::size_t>(i)] = std::to_string(v);
    }
    return {};
  } else if constexpr (std::is_integral_v<T>) {
    T start;
    GSCHECK_RETURN_IF_ERROR(int_from_json(s, path, &start));
    if (n > 0) {
      // start + (n - 1) must fit T; computed with an overflow check (no signed wrap-around).
      using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      Wide last;
      if (__builtin_add_overflow(static_cast<Wide>(start), static_cast<Wide>(n - 1), &last) ||
          last > static_cast<Wide>(std::numeric_limits<T>::max()))
        return field_error(path, "iota from " + std::to_string(start) + " over " +
                                     std::to_string(n) + " elements leaves the range of " +
                                     std::string(dtype_name(dtype_of<T>())));
    }
    T* out = t.data_as<T>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(start + static_cast<T>(i));
    return {};
  } else {
    if (!s.is_number()) return expected_error(path, "a number", s);
    const double start = s.get<double>();
    T* out = t.data_as<T>();
    for (int64_t i = 0; i < n; ++i) {
      const double v = start + static_cast<double>(i);
      if constexpr (std::is_same_v<T, std::complex<float>>) {
        out[i] = T(static_cast<float>(v), 0.0f);
      } else if constexpr (std::is_same_v<T, std::complex<double>>) {
        out[i] = T(v, 0.0);
      } else {
        out[i] = FloatTraits<T>::from_double(v);
      }
    }
    return {};
  }
}

}  // namespace

std::string base64_encode(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (size - i == 1) {
    const uint32_t v = uint32_t{p[i]} << 16;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += "==";
  } else if (size - i == 2) {
    const uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      int d = 0;
      if (k >= 4 - pad) {
        if (c != '=') return std::nullopt;
      } else {
        d = b64_value(c);
        if (d < 0) return std::nullopt;
      }
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    out += static_cast<char>(v >> 16);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

Expected<Tensor> tensor_from_json(const json& j, const std::string& path, int64_t max_bytes) {
  if (!j.is_object()) return expected_error(path, "a tensor object", j);
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (k != "dtype" && k != "shape" &&
        std::find(std::begin(kDataFields), std::end(kDataFields), k) == std::end(kDataFields))
      return field_error(key(path, k.c_str()),
                         "unknown field (a tensor has dtype, shape and one of data, data_b64, "
                         "fill, iota)");
  }
  if (!j.contains("dtype")) return field_error(key(path, "dtype"), "missing");
  const json& jd = j["dtype"];
  if (!jd.is_string()) return expected_error(key(path, "dtype"), "a dtype name", jd);
  const auto dt = dtype_from_name(jd.get_ref<const std::string&>());
  if (!dt)
    return field_error(key(path, "dtype"),
                       "unknown dtype \"" + excerpt(jd.get_ref<const std::string&>()) + "\"");
  if (!j.contains("shape")) return field_error(key(path, "shape"), "missing");
  auto shape = shape_from_json(j["shape"], key(path, "shape"));
  if (!shape.ok()) return shape.error();
  const int64_t n = *shape->num_elements();

  const char* data_field = nullptr;
  for (const char* f : kDataFields) {
    if (!j.contains(f)) continue;
    if (data_field)
      return field_error(
          path, std::string("has both '") + data_field + "' and '" + f + "'; give exactly one");
    data_field = f;
  }
  if (!data_field) return field_error(path, "missing data (one of data, data_b64, fill, iota)");
  const std::string dpath = key(path, data_field);
  const json& data = j[data_field];
  const std::string_view field = data_field;

  // Check sizes against the data before allocating, and the budget before allocating anything.
  int64_t string_len = 0;
  if (field == "data" || (field == "data_b64" && *dt == DType::kString)) {
    if (!data.is_array()) return expected_error(dpath, "an array", data);
    if (static_cast<int64_t>(data.size()) != n)
      return field_error(dpath, "has " + std::to_string(data.size()) + " elements, but shape " +
                                    shape->to_string() + " needs " + std::to_string(n));
  } else if (field == "fill" && data.is_string()) {
    string_len = static_cast<int64_t>(data.get_ref<const std::string&>().size());
  } else if (field == "iota" && *dt == DType::kString) {
    string_len = 20;  // the longest int64 in decimal
  }
  auto bytes = budget_bytes(*dt, *shape, string_len);
  if (!bytes || *bytes > max_bytes) return over_budget(path, *dt, *shape, max_bytes);
  // Every element is written below (data, data_b64, fill and iota all cover the whole tensor).
  auto made = Tensor::uninitialized(*dt, *shape, max_bytes);
  if (!made.ok()) return Error{made.error().cls, path + ": " + made.error().message};
  Tensor t = std::move(made).value();

  Status st = visit_dtype(*dt, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* out = t.data_as<T>();
    if (field == "data") {
      for (int64_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::size_t>(i);
        GSCHECK_RETURN_IF_ERROR(element_from_json(data[u], idx(dpath, u), &out[i]));
      }
      return {};
    }
    if (field == "fill") {
      T v{};
      GSCHECK_RETURN_IF_ERROR(element_from_json(data, dpath, &v));
      std::fill(out, out + n, v);
      return {};
    }
    if (field == "iota") return fill_iota<T>(data, dpath, t);
    // data_b64
    if constexpr (std::is_same_v<T, std::string>) {
      for (int64_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::size_t>(i);
        if (!data[u].is_string()) return expected_error(idx(dpath, u), "a base64 string", data[u]);
        auto s = base64_decode(data[u].get_ref<const std::string&>());
        if (!s) return field_error(idx(dpath, u), "invalid base64");
        out[i] = std::move(*s);
      }
      return {};
    } else {
      if (!data.is_string()) return expected_error(dpath, "a base64 string", data);
      auto raw = base64_decode(data.get_ref<const std::string&>());
      if (!raw) return field_error(dpath, "invalid base64");
      if (raw->size() != t.byte_size())
        return field_error(dpath, "decodes to " + std::to_string(raw->size()) + " bytes, but " +
                                      std::string(dtype_name(*dt)) + " " + shape->to_string() +
                                      " needs " + std::to_string(t.byte_size()));
      if constexpr (std::is_same_v<T, bool>) {
        for (std::size_t i = 0; i < raw->size(); ++i)
          if (static_cast<unsigned char>((*raw)[i]) > 1)
            return field_error(dpath, "bool element " + std::to_string(i) + " is byte " +
                                          std::to_string(static_cast<unsigned char>((*raw)[i])) +
                                          ", not 0 or 1");
      }
      if (!raw->empty()) std::memcpy(t.data(), raw->data(), raw->size());
      return {};
    }
  });
  if (!st.ok()) return st.error();
  return t;
}

json tensor_to_json(const Tensor& t, TensorEncoding encoding) {
  json j;
  j["dtype"] = std::string(dtype_name(t.dtype()));
  j["shape"] = t.shape().dims();
  const int64_t n = t.num_elements();
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = t.data_as<T>();
    if constexpr (std::is_same_v<T, std::string>) {
      const bool text = encoding == TensorEncoding::kNumbers &&
                        std::all_of(in, in + n, [](const std::string& s) { return valid_utf8(s); });
      if (text) {
        j["data"] = json(std::vector<std::string>(in, in + n));
      } else {
        json arr = json::array();
        for (int64_t i = 0; i < n; ++i) arr.push_back(base64_encode(in[i].data(), in[i].size()));
        j["data_b64"] = std::move(arr);
      }
    } else {
      if (encoding == TensorEncoding::kNumbers) {
        json arr = json::array();
        bool exact = true;
        for (int64_t i = 0; i < n && exact; ++i) {
          json v = element_to_json(in[i]);
          exact = !v.is_null();
          arr.push_back(std::move(v));
        }
        if (exact) {
          j["data"] = std::move(arr);
          return;
        }
      }
      j["data_b64"] = base64_encode(t.data(), t.byte_size());
    }
  });
  return j;
}

// ---- case files -----------------------------------------------------------------------------

namespace {

constexpr const char* kInputNames[] = {"params", "tensor", "indices", "updates", "shape"};

std::optional<Tensor>* input_slot(Case& c, std::string_view name) {
  if (name == "params") return &c.params;
  if (name == "tensor") return &c.tensor;
  if (name == "indices") return &c.indices;
  if (name == "updates") return &c.updates;
  if (name == "shape") return &c.shape;
  return nullptr;
}
const std::optional<Tensor>* input_slot(const Case& c, std::string_view name) {
  return input_slot(const_cast<Case&>(c), name);
}

// Tensors are parsed under one budget for the whole file.
struct Budget {
  int64_t left;
  Expected<Tensor> parse(const json& j, const std::string& path) {
    auto t = tensor_from_json(j, path, left);
    if (t.ok())
      left -= *budget_bytes(t->dtype(), t->shape(), 0) +
              (t->dtype() == DType::kString ? string_bytes(*t) : 0);
    return t;
  }
  static int64_t string_bytes(const Tensor& t) {
    int64_t s = 0;
    for (const auto& x : t.strings()) s += static_cast<int64_t>(x.size());
    return s;
  }
};

Status parse_attrs(const json& a, Case& c, Budget& budget) {
  if (!a.is_object()) return expected_error("attrs", "an object", a);
  for (const auto& [k, v] : a.items()) {
    const std::string path = "attrs." + excerpt(k);
    if (k == "axis") {
      if (v.is_null()) continue;
      if (v.is_object()) {
        auto t = budget.parse(v, path);
        if (!t.ok()) return t.error();
        c.axis = std::move(t).value();
        continue;
      }
      int64_t axis;
      GSCHECK_RETURN_IF_ERROR(int_from_json(v, path, &axis));
      // A plain integer is a scalar int32 axis tensor (Python's default), int64 when it must be.
      if (axis >= INT32_MIN && axis <= INT32_MAX) {
        c.axis = Tensor::from_values<int32_t>(Shape{}, {static_cast<int32_t>(axis)});
      } else {
        c.axis = Tensor::from_values<int64_t>(Shape{}, {axis});
      }
    } else if (k == "batch_dims") {
      GSCHECK_RETURN_IF_ERROR(int_from_json(v, path, &c.batch_dims));
    } else if (k == "bad_indices_policy") {
      if (!v.is_string()) return expected_error(path, "a string", v);
      c.bad_indices_policy = v.get<std::string>();
    } else {
      return field_error(path, "unknown attribute (expected axis, batch_dims, bad_indices_policy)");
    }
  }
  return {};
}

Status parse_expect(const json& e, CaseFile& f, Budget& budget) {
  if (!e.is_object()) return expected_error("expect", "an object", e);
  Expect x;
  for (const auto& [k, v] : e.items()) {
    (void)v;
    if (k != "output" && k != "error")
      return field_error("expect." + excerpt(k), "unknown field (expected output or error)");
  }
  if (e.contains("output") == e.contains("error"))
    return field_error("expect", "give exactly one of 'output' and 'error'");
  if (e.contains("output")) {
    auto t = budget.parse(e["output"], "expect.output");
    if (!t.ok()) return t.error();
    x.output = std::move(t).value();
  } else {
    const json& err = e["error"];
    if (!err.is_object()) return expected_error("expect.error", "an object", err);
    for (const auto& [k, v] : err.items()) {
      (void)v;
      if (k != "class" && k != "message")
        return field_error("expect.error." + excerpt(k), "unknown field (expected class, message)");
    }
    if (!err.contains("class")) return field_error("expect.error.class", "missing");
    const json& cls = err["class"];
    if (!cls.is_string()) return expected_error("expect.error.class", "an error class name", cls);
    x.error_class = error_class_from_name(cls.get_ref<const std::string&>());
    if (!x.error_class)
      return field_error("expect.error.class",
                         "unknown error class \"" + excerpt(cls.get_ref<const std::string&>()) +
                             "\" (expected invalid_argument, bad_index, unsupported, "
                             "resource_exhausted, unimplemented, internal, parse)");
    if (err.contains("message")) {
      const json& m = err["message"];
      if (!m.is_string()) return expected_error("expect.error.message", "a regular expression", m);
      if (auto re = MessageRegex::compile(m.get_ref<const std::string&>()); !re.ok())
        return field_error("expect.error.message", re.error().message);
      x.error_regex = m.get<std::string>();
    }
  }
  f.expect = std::move(x);
  return {};
}

// Known keys first, in a reading order; the rest alphabetically.
int key_rank(const std::string& k) {
  static constexpr const char* kOrder[] = {
      "gscheck_case", "name",      "description", "op",
      "api",          "semantics", "attrs",       "inputs",
      "expect",       "output",    "error",       "class",
      "message",      "axis",      "batch_dims",  "bad_indices_policy",
      "params",       "tensor",    "indices",     "updates",
      "dtype",        "shape",     "data",        "data_b64",
      "fill",         "iota"};
  for (std::size_t i = 0; i < std::size(kOrder); ++i)
    if (k == kOrder[i]) return static_cast<int>(i);
  return static_cast<int>(std::size(kOrder));
}

bool is_flat(const json& j) {
  if (!j.is_array()) return !j.is_object();
  return std::all_of(j.begin(), j.end(), [](const json& e) {
    return !e.is_object() && (!e.is_array() || std::none_of(e.begin(), e.end(), [](const json& x) {
      return x.is_structured();
    }));
  });
}

void pretty(const json& j, int indent, std::string& out) {
  if (is_flat(j)) {
    // Text in a case (a backend's message in a reproducer) may not be UTF-8: U+FFFD, no throw.
    out += j.dump(-1, ' ', false, json::error_handler_t::replace);
    return;
  }
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  if (j.is_array()) {
    out += "[\n";
    for (std::size_t i = 0; i < j.size(); ++i) {
      out += pad;
      pretty(j[i], indent + 2, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<std::size_t>(indent), ' ') + "]";
    return;
  }
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) {
    (void)v;
    keys.push_back(k);
  }
  std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    return key_rank(a) < key_rank(b);
  });
  if (keys.empty()) {
    out += "{}";
    return;
  }
  out += "{\n";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out += pad + json(keys[i]).dump(-1, ' ', false, json::error_handler_t::replace) + ": ";
    pretty(j[keys[i]], indent + 2, out);
    out += i + 1 < keys.size() ? ",\n" : "\n";
  }
  out += std::string(static_cast<std::size_t>(indent), ' ') + "}";
}

}  // namespace

Expected<CaseFile> case_file_from_json(const json& j, int64_t max_bytes) {
  if (!j.is_object()) return expected_error("", "a case object", j);
  static constexpr const char* kFields[] = {"gscheck_case", "name",  "description", "op",    "api",
                                            "semantics",    "attrs", "inputs",      "expect"};
  for (const auto& item : j.items()) {
    const std::string& k = item.key();  // clang 14 cannot capture a structured binding
    if (std::find_if(std::begin(kFields), std::end(kFields),
                     [&](const char* f) { return k == f; }) == std::end(kFields))
      return field_error(excerpt(k), "unknown field");
  }
  if (!j.contains("gscheck_case")) return field_error("gscheck_case", "missing (format version 1)");
  if (const json& v = j["gscheck_case"]; v != kCaseFormatVersion) {
    // Only a number is quoted: dump() of an arbitrary value is unbounded (and recursive).
    const std::string got = v.is_number() ? excerpt(v.dump()) : std::string(json_kind(v));
    return field_error("gscheck_case",
                       "unsupported format version " + got + " (this build reads 1)");
  }
  CaseFile f;
  Case& c = f.c;
  if (!j.contains("name")) return field_error("name", "missing");
  if (!j["name"].is_string()) return expected_error("name", "a string", j["name"]);
  c.name = j["name"].get<std::string>();
  if (j.contains("description")) {
    if (!j["description"].is_string())
      return expected_error("description", "a string", j["description"]);
    f.description = j["description"].get<std::string>();
  }
  if (!j.contains("op")) return field_error("op", "missing");
  if (!j["op"].is_string()) return expected_error("op", "an op name", j["op"]);
  const auto op = op_from_name(j["op"].get_ref<const std::string&>());
  if (!op)
    return field_error("op", "unknown op \"" + excerpt(j["op"].get_ref<const std::string&>()) +
                                 "\" (expected gather, gather_nd, scatter_nd, "
                                 "tensor_scatter_nd_{update,add,sub,min,max})");
  c.op = *op;
  if (j.contains("semantics")) {
    const json& s = j["semantics"];
    if (!s.is_string()) return expected_error("semantics", "a semantics name", s);
    const auto sem = semantics_from_name(s.get_ref<const std::string&>());
    if (!sem)
      return field_error("semantics", "unknown semantics \"" +
                                          excerpt(s.get_ref<const std::string&>()) +
                                          "\" (expected " + semantics_names() + ")");
    c.semantics = *sem;
  }
  if (j.contains("api")) {
    const json& a = j["api"];
    if (!a.is_string()) return expected_error("api", "\"python\" or \"kernel\"", a);
    const auto api = api_from_name(a.get_ref<const std::string&>());
    if (!api)
      return field_error(
          "api", "unknown API level \"" + a.get<std::string>() + "\" (expected python or kernel)");
    c.api = *api;
  }
  Budget budget{max_bytes};
  if (j.contains("attrs")) GSCHECK_RETURN_IF_ERROR(parse_attrs(j["attrs"], c, budget));
  if (!j.contains("inputs")) return field_error("inputs", "missing");
  const json& in = j["inputs"];
  if (!in.is_object()) return expected_error("inputs", "an object", in);
  for (const auto& [k, v] : in.items()) {
    auto* slot = input_slot(c, k);
    if (!slot)
      return field_error("inputs." + excerpt(k),
                         "unknown input (expected params, indices, updates, tensor, shape)");
    auto t = budget.parse(v, "inputs." + k);
    if (!t.ok()) return t.error();
    *slot = std::move(t).value();
  }
  if (Status st = check_well_formed(c); !st.ok()) return parse_error(st.error().message);
  if (j.contains("expect")) GSCHECK_RETURN_IF_ERROR(parse_expect(j["expect"], f, budget));
  return f;
}

json case_file_to_json(const CaseFile& f, TensorEncoding encoding) {
  const Case& c = f.c;
  json j;
  j["gscheck_case"] = kCaseFormatVersion;
  j["name"] = c.name;
  if (!f.description.empty()) j["description"] = f.description;
  j["op"] = std::string(op_name(c.op));
  if (c.api != Api::kPython) j["api"] = std::string(api_name(c.api));  // python: the default
  j["semantics"] = std::string(semantics_name(c.semantics));
  json attrs = json::object();
  if (c.axis) {
    const Tensor& a = *c.axis;
    if (a.dtype() == DType::kInt32 && a.rank() == 0) {
      attrs["axis"] = a.data_as<int32_t>()[0];
    } else {
      attrs["axis"] = tensor_to_json(a, encoding);
    }
  }
  if (c.batch_dims != 0) attrs["batch_dims"] = c.batch_dims;
  if (!c.bad_indices_policy.empty()) attrs["bad_indices_policy"] = c.bad_indices_policy;
  if (!attrs.empty()) j["attrs"] = std::move(attrs);
  json in = json::object();
  for (const char* name : kInputNames)
    if (const auto& t = *input_slot(c, name)) in[name] = tensor_to_json(*t, encoding);
  j["inputs"] = std::move(in);
  if (f.expect) {
    json e = json::object();
    if (f.expect->output) {
      e["output"] = tensor_to_json(*f.expect->output, encoding);
    } else if (f.expect->error_class) {
      json err = {{"class", std::string(error_class_name(*f.expect->error_class))}};
      if (f.expect->error_regex) err["message"] = *f.expect->error_regex;
      e["error"] = std::move(err);
    }
    j["expect"] = std::move(e);
  }
  return j;
}

namespace {

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

// Frees a DOM bottom-up without allocating. nlohmann's own destructor moves an array's elements
// into a new vector of the same size first: twice the memory of a large data array, and
// std::terminate when that allocation fails (the destructor is noexcept). Recursion is bounded
// by the parse's depth limit.
void release_dom(json& j) {
  if (j.is_array()) {
    for (json& e : j.get_ref<json::array_t&>())
      if (e.is_structured()) release_dom(e);
    json::array_t().swap(j.get_ref<json::array_t&>());
  } else if (j.is_object()) {
    for (auto& [k, v] : j.get_ref<json::object_t&>())
      if (v.is_structured()) release_dom(v);
    json::object_t().swap(j.get_ref<json::object_t&>());
  }
}

// Builds the DOM from nlohmann's SAX events with an explicit stack (no recursion), refusing
// nesting deeper than kMaxJsonDepth and a DOM over its byte allowance (an estimate of what the
// values occupy: a json value is 16 bytes, vectors grow by doubling, map nodes ~64 bytes).
class BoundedDomBuilder : public nlohmann::json_sax<json> {
 public:
  explicit BoundedDomBuilder(int64_t max_bytes) : max_bytes_(max_bytes) {}
  ~BoundedDomBuilder() override { release_dom(root_); }
  BoundedDomBuilder(const BoundedDomBuilder&) = delete;
  BoundedDomBuilder& operator=(const BoundedDomBuilder&) = delete;

  bool null() override { return add(json(nullptr), 0); }
  bool boolean(bool v) override { return add(json(v), 0); }
  bool number_integer(number_integer_t v) override { return add(json(v), 0); }
  bool number_unsigned(number_unsigned_t v) override { return add(json(v), 0); }
  bool number_float(number_float_t v, const string_t&) override { return add(json(v), 0); }
  bool string(string_t& v) override {
    const auto n = static_cast<int64_t>(v.size());
    return add(json(std::move(v)), 32 + 2 * n);  // the lexer's copy and the DOM's
  }
  bool binary(binary_t&) override { return fail("binary values are not JSON"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool key(string_t& k) override {
    if (!charge(80 + static_cast<int64_t>(k.size()))) return false;
    key_ = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix; keep line and column. The
    // "last read" token can be the whole (huge) string being read: only an excerpt is kept.
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    error_ = Error{ErrorClass::kParse, "invalid JSON: " + excerpt(what, 200)};
    return false;
  }

  json& root() { return root_; }
  const std::optional<Error>& error() const { return error_; }

 private:
  bool fail(const std::string& why) {
    if (!error_) error_ = Error{ErrorClass::kParse, "invalid JSON: " + why};
    return false;
  }
  bool charge(int64_t bytes) {
    used_ += bytes;
    if (used_ <= max_bytes_) return true;
    error_ = Error{ErrorClass::kResourceExhausted,
                   "the JSON text needs more than " + std::to_string(max_bytes_) +
                       " bytes of memory to parse (a multiple of the memory budget)"};
    return false;
  }
  // Where the next value goes: the root, the end of the open array, or the open object's key.
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }
  bool add(json&& v, int64_t extra) {
    if (!charge(32 + extra)) return false;
    place(std::move(v));
    return true;
  }
  bool open(json&& container) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth)
      return fail("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (!charge(64)) return false;
    // Pointers to open containers stay valid: nothing is added to a parent while a child is open.
    stack_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  static constexpr int kMaxJsonDepth = 64;  // a case file needs 6
  int64_t max_bytes_;
  int64_t used_ = 0;
  json root_;
  std::vector<json*> stack_;
  std::string key_;
  std::optional<Error> error_;
};

}  // namespace

// The whole file, read from one open descriptor: its size is the open file's (fstat), so a file
// swapped or grown after the check cannot bring more than the budget.
Expected<std::string> read_bounded(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not regular).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return parse_error("cannot open: " + std::string(std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return parse_error("cannot stat: " + std::string(std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return parse_error("not a regular file");
  // JSON text is at least as large as the tensors it describes, give or take fill/iota.
  if (st.st_size > max_bytes)
    return Error{ErrorClass::kResourceExhausted, "file of " + std::to_string(st.st_size) +
                                                     " bytes exceeds the memory budget of " +
                                                     std::to_string(max_bytes) + " bytes"};
  std::string text(static_cast<std::size_t>(st.st_size) + 1, '\0');  // +1: notices growth
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t r = ::read(fd, text.data() + got, text.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return parse_error("cannot read: " + std::string(std::strerror(errno)));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got > static_cast<std::size_t>(st.st_size))
    return parse_error("the file grew while it was read");
  text.resize(got);
  return text;
}

Expected<nlohmann::json> parse_json_bounded(std::string_view text, int64_t max_dom_bytes) {
  BoundedDomBuilder builder(max_dom_bytes);
  try {
    json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true);
  } catch (const std::bad_alloc&) {
    return Error{ErrorClass::kResourceExhausted, "out of memory while parsing the JSON text"};
  }
  if (builder.error()) return *builder.error();
  return std::move(builder.root());
}

Expected<CaseFile> parse_case_file_text(std::string_view text, int64_t max_bytes) {
  try {
    auto j = parse_json_bounded(text, saturating_mul(std::max<int64_t>(max_bytes, 1 << 16), 3));
    if (!j.ok()) return j.error();
    struct Release {
      json& j;
      ~Release() { release_dom(j); }
    } release{*j};
    return case_file_from_json(*j, max_bytes);
  } catch (const std::bad_alloc&) {
    return Error{ErrorClass::kResourceExhausted,
                 "out of memory while reading the case (std::bad_alloc)"};
  } catch (const json::exception& e) {
    return parse_error("invalid case: " + excerpt(e.what(), 200));
  }
}

Expected<CaseFile> load_case_file(const std::string& path, int64_t max_bytes) {
  auto with_path = [&](const Error& e) { return Error{e.cls, path + ": " + e.message}; };
  Expected<CaseFile> f = [&]() -> Expected<CaseFile> {
    try {
      auto text = read_bounded(path, max_bytes);
      if (!text.ok()) return text.error();
      std::string owned = std::move(text).value();
      // The text is freed before the tensors are built from the DOM.
      auto j = [&]() -> Expected<json> {
        std::string local = std::move(owned);
        return parse_json_bounded(local, saturating_mul(std::max<int64_t>(max_bytes, 1 << 16), 3));
      }();
      if (!j.ok()) return j.error();
      struct Release {
        json& j;
        ~Release() { release_dom(j); }
      } release{*j};
      return case_file_from_json(*j, max_bytes);
    } catch (const std::bad_alloc&) {
      return Error{ErrorClass::kResourceExhausted,
                   "out of memory while reading the case (std::bad_alloc)"};
    } catch (const json::exception& e) {
      return parse_error("invalid case: " + excerpt(e.what(), 200));
    }
  }();
  if (!f.ok()) return with_path(f.error());
  return f;
}

std::string case_file_text(const CaseFile& f, TensorEncoding encoding) {
  std::string out;
  pretty(case_file_to_json(f, encoding), 0, out);
  return out + "\n";
}

Status save_case_file(const std::string& path, const CaseFile& f, TensorEncoding encoding) {
  const std::string text = case_file_text(f, encoding);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{ErrorClass::kInternal, path + ": cannot open for writing"};
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Error{ErrorClass::kInternal, path + ": write failed"};
  return {};
}

Expected<std::vector<std::string>> list_case_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    const auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return parse_error(p + ": no such file or directory");
    if (!fs::is_directory(st)) {
      files.push_back(p);
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string name = it->path().filename().string();
      const auto ends_with = [&](std::string_view suffix) {
        return name.size() >= suffix.size() &&
               name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      };
      if (ends_with(".json") && !ends_with(".schema.json")) files.push_back(it->path().string());
    }
    if (ec) return parse_error(p + ": cannot list: " + ec.message());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

}  // namespace gscheck
