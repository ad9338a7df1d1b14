#include "tools/bench_problems.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/dtype.h"

namespace gscheck::tools {
namespace {

using nlohmann::json;

constexpr std::pair<IndexPattern, std::string_view> kPatterns[] = {
    {IndexPattern::kUniform, "uniform"},         {IndexPattern::kSorted, "sorted"},
    {IndexPattern::kPermutation, "permutation"}, {IndexPattern::kZipf, "zipf"},
    {IndexPattern::kHotKey, "hot_key"},          {IndexPattern::kOutOfBounds, "out_of_bounds_1pct"},
};

const char* const kFields[] = {"op",      "dtype",       "index_dtype", "slice_bytes",
                               "indices", "table_bytes", "index_count", "semantics"};

std::string bytes_text(int64_t b) {
  if (b % (int64_t{1} << 30) == 0) return std::to_string(b >> 30) + "GiB";
  if (b % (int64_t{1} << 20) == 0) return std::to_string(b >> 20) + "MiB";
  if (b % (int64_t{1} << 10) == 0) return std::to_string(b >> 10) + "KiB";
  return std::to_string(b) + "B";
}

// splitmix64: a stream per (seed, what), cheap enough to fill gigabytes.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

// Fills t with small integers (-32..31; 0..63 unsigned; bool 0/1) through 64 precomputed
// element patterns of its dtype, so any dtype fills at memcpy speed.
void fill_values(Tensor& t, Rng& rng) {
  const std::size_t size = dtype_size(t.dtype());
  std::vector<std::byte> patterns(64 * size);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, std::string>) {
      for (int v = 0; v < 64; ++v) {
        T x{};
        const int signed_v = v - 32;
        if constexpr (std::is_same_v<T, bool>) {
          x = v & 1;
        } else if constexpr (std::is_same_v<T, Float16>) {
          x = float16_from_float(static_cast<float>(signed_v));
        } else if constexpr (std::is_same_v<T, BFloat16>) {
          x = bfloat16_from_float(static_cast<float>(signed_v));
        } else if constexpr (std::is_unsigned_v<T>) {
          x = static_cast<T>(v);
        } else {
          x = static_cast<T>(signed_v);
        }
        std::memcpy(patterns.data() + v * size, &x, size);
      }
    }
  });
  std::byte* out = t.data();
  const int64_t n = t.num_elements();
  uint64_t bits = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 10 == 0) bits = rng.next();  // 6 bits per element
    std::memcpy(out + i * size, patterns.data() + (bits & 63) * size, size);
    bits >>= 6;
  }
}

// A multiplier coprime with n: i -> (a*i + b) mod n is then a permutation of [0, n).
uint64_t coprime_multiplier(uint64_t n, Rng& rng) {
  if (n <= 2) return 1;
  for (;;) {
    const uint64_t a = 1 + rng.below(n - 1);
    if (std::gcd(a, n) == 1) return a;
  }
}

std::vector<int64_t> draw_rows(const BenchProblem& p, Rng& rng) {
  const auto rows = static_cast<uint64_t>(p.rows());
  const auto n = static_cast<std::size_t>(p.index_count);
  std::vector<int64_t> ix(n);
  switch (p.pattern) {
    case IndexPattern::kUniform:
    case IndexPattern::kSorted:
    case IndexPattern::kOutOfBounds:
      for (auto& v : ix) v = static_cast<int64_t>(rng.below(rows));
      if (p.pattern == IndexPattern::kSorted) std::sort(ix.begin(), ix.end());
      if (p.pattern == IndexPattern::kOutOfBounds)
        for (std::size_t k = 0; k < n / 100; ++k)
          ix[rng.below(n)] = static_cast<int64_t>(rows + rng.below(rows));
      break;
    case IndexPattern::kPermutation: {
      const uint64_t a = coprime_multiplier(rows, rng), b = rng.below(rows);
      for (std::size_t i = 0; i < n; ++i)
        ix[i] = static_cast<int64_t>((static_cast<unsigned __int128>(a) * i + b) % rows);
      break;
    }
    case IndexPattern::kZipf: {
      const uint64_t a = coprime_multiplier(rows, rng), b = rng.below(rows);
      const double log_rows = std::log(static_cast<double>(rows) + 1);
      for (auto& v : ix) {
        const double u = (rng.next() >> 11) * 0x1.0p-53;
        const auto rank = std::min<uint64_t>(static_cast<uint64_t>(std::exp(u * log_rows)) - 1,
                                             rows - 1);  // P(k) ~ 1/(k+1)
        v = static_cast<int64_t>((static_cast<unsigned __int128>(a) * rank + b) % rows);
      }
      break;
    }
    case IndexPattern::kHotKey:
      std::fill(ix.begin(), ix.end(), static_cast<int64_t>(rng.below(rows)));
      break;
  }
  return ix;
}

Expected<Tensor> index_tensor(const BenchProblem& p, const std::vector<int64_t>& rows,
                              Shape shape) {
  auto t = Tensor::uninitialized(p.index_dtype, std::move(shape), INT64_MAX);
  if (!t.ok()) return t.error();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (p.index_dtype == DType::kInt64) {
      t->data_as<int64_t>()[i] = rows[i];
    } else {
      t->data_as<int32_t>()[i] = static_cast<int32_t>(rows[i]);
    }
  }
  return t;
}

Expected<Tensor> values(DType dt, Shape shape, Rng& rng) {
  auto t = Tensor::uninitialized(dt, std::move(shape), INT64_MAX);
  if (!t.ok()) return t.error();
  fill_values(*t, rng);
  return t;
}

Error field_error(std::size_t at, const std::string& field, const std::string& why) {
  return invalid_argument("problem " + std::to_string(at) + ": \"" + field + "\" " + why);
}

Expected<int64_t> positive(const json& v, std::size_t at, const char* field) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0)
    return field_error(at, field, "must be a non-negative integer, not " + v.dump());
  return v.get<int64_t>();
}

// One problem from an object whose fields are all single values.
Expected<BenchProblem> one_problem(const json& o, std::size_t at) {
  BenchProblem p;
  for (const auto& [key, v] : o.items()) {
    if (key == "op") {
      const auto op = v.is_string() ? op_from_name(v.get<std::string>()) : std::nullopt;
      if (!op) return field_error(at, key, "is not an op: " + v.dump());
      p.op = *op;
    } else if (key == "dtype" || key == "index_dtype") {
      const auto dt = v.is_string() ? dtype_from_name(v.get<std::string>()) : std::nullopt;
      if (!dt || *dt == DType::kString)
        return field_error(at, key, "is not a numeric dtype: " + v.dump());
      if (key == "index_dtype" && *dt != DType::kInt32 && *dt != DType::kInt64)
        return field_error(at, key, "must be int32 or int64, not " + v.dump());
      (key == "dtype" ? p.dtype : p.index_dtype) = *dt;
    } else if (key == "indices") {
      const auto it = std::find_if(std::begin(kPatterns), std::end(kPatterns),
                                   [&](const auto& e) { return v.is_string() && e.second == v; });
      if (it == std::end(kPatterns)) {
        std::string names;
        for (const auto& e : kPatterns)
          names += (names.empty() ? "" : ", ") + std::string(e.second);
        return field_error(at, key, "is not an index pattern (" + names + "): " + v.dump());
      }
      p.pattern = it->first;
    } else if (key == "semantics") {
      const auto s = v.is_string() ? semantics_from_name(v.get<std::string>()) : std::nullopt;
      if (!s) return field_error(at, key, "is not one of " + semantics_names() + ": " + v.dump());
      p.semantics = *s;
      p.semantics_given = true;
    } else if (key == "slice_bytes" || key == "table_bytes" || key == "index_count") {
      auto n = positive(v, at, key.c_str());
      if (!n.ok()) return n.error();
      (key == "slice_bytes"   ? p.slice_bytes
       : key == "table_bytes" ? p.table_bytes
                              : p.index_count) = *n;
    } else {
      std::string names;
      for (const char* f : kFields) names += (names.empty() ? "" : ", ") + std::string(f);
      return field_error(at, key, "is not a problem field (" + names + ")");
    }
  }
  if (!p.semantics_given)
    p.semantics = resolve_semantics(p, {std::begin(kAllSemantics), std::end(kAllSemantics)});
  const auto elem = static_cast<int64_t>(dtype_size(p.dtype));
  if (p.slice_bytes <= 0 || p.slice_bytes % elem != 0)
    return field_error(at, "slice_bytes",
                       "must be a positive multiple of " + std::string(dtype_name(p.dtype)) +
                           "'s " + std::to_string(elem) + " bytes, not " +
                           std::to_string(p.slice_bytes));
  if (p.table_bytes < p.slice_bytes || p.table_bytes % p.slice_bytes != 0)
    return field_error(at, "table_bytes",
                       "must be a positive multiple of slice_bytes (" +
                           std::to_string(p.slice_bytes) + "), not " +
                           std::to_string(p.table_bytes));
  const int64_t index_limit =
      p.index_dtype == DType::kInt32 ? int64_t{1} << 30 : int64_t{1} << 62;  // oob rows < 2*rows
  if (p.rows() > index_limit)
    return field_error(at, "table_bytes",
                       "gives " + std::to_string(p.rows()) + " rows, more than " +
                           std::string(dtype_name(p.index_dtype)) + " indices can name");
  if (p.pattern == IndexPattern::kPermutation && p.index_count > p.rows())
    return field_error(at, "index_count",
                       "is " + std::to_string(p.index_count) +
                           ": a permutation draws distinct rows, and the table has only " +
                           std::to_string(p.rows()));
  return p;
}

// Expands the listed fields of o into single-valued objects (the cross product).
void expand(const json& o, json::const_iterator field, json current, std::vector<json>& out) {
  if (field == o.end()) {
    out.push_back(std::move(current));
    return;
  }
  const auto next = std::next(field);
  if (field.value().is_array()) {
    for (const auto& v : field.value()) {
      json c = current;
      c[field.key()] = v;
      expand(o, next, std::move(c), out);
    }
  } else {
    current[field.key()] = field.value();
    expand(o, next, std::move(current), out);
  }
}

}  // namespace

std::string_view pattern_name(IndexPattern p) {
  for (const auto& e : kPatterns)
    if (e.first == p) return e.second;
  return "?";
}

Semantics resolve_semantics(const BenchProblem& p, const std::vector<Semantics>& claimed) {
  if (p.semantics_given) return p.semantics;
  const auto has = [&](Semantics s) {
    return std::find(claimed.begin(), claimed.end(), s) != claimed.end();
  };
  // Out-of-bounds rows raise under TensorFlow's CPU kernels: time them where they compute.
  if (p.pattern == IndexPattern::kOutOfBounds) {
    for (Semantics s : {Semantics::kTfGpu, Semantics::kXla, Semantics::kJax})
      if (has(s)) return s;
    return Semantics::kTfGpu;
  }
  if (has(Semantics::kTfCpu) || claimed.empty()) return Semantics::kTfCpu;
  return claimed.front();
}

std::string BenchProblem::name() const {
  std::string n = std::string(op_name(op)) + "/" + std::string(dtype_name(dtype));
  if (index_dtype != DType::kInt32) n += "/" + std::string(dtype_name(index_dtype));
  n += "/" + bytes_text(slice_bytes) + "/" + std::string(pattern_name(pattern)) +
       "/table=" + bytes_text(table_bytes) + "/n=" + std::to_string(index_count);
  if (semantics != Semantics::kTfCpu) n += "/" + std::string(semantics_name(semantics));
  return n;
}

int64_t BenchProblem::bytes_moved() const {
  const int64_t index_bytes = index_count * static_cast<int64_t>(dtype_size(index_dtype));
  const int64_t rows_bytes = index_count * slice_bytes;  // gathered, or the updates
  switch (op) {
    case Op::kGather:
    case Op::kGatherNd:
      return index_bytes + 2 * rows_bytes;
    case Op::kScatterNd:
      return table_bytes + rows_bytes + index_bytes;
    default:
      return 2 * table_bytes + rows_bytes + index_bytes;
  }
}

Expected<std::vector<BenchProblem>> parse_problems(const json& j) {
  if (!j.is_object() || !j.contains("problems") || !j["problems"].is_array())
    return invalid_argument("a problems file is an object with a \"problems\" array");
  for (const auto& [key, v] : j.items())
    if (key != "problems" && key != "gscheck_bench_problems" && key != "description")
      return invalid_argument("unknown top-level field \"" + key +
                              "\" (gscheck_bench_problems, description, problems)");
  std::vector<BenchProblem> out;
  std::size_t at = 0;
  for (const auto& entry : j["problems"]) {
    if (!entry.is_object())
      return invalid_argument("problem entry " + std::to_string(out.size()) +
                              " is not an object: " + entry.dump());
    std::vector<json> singles;
    expand(entry, entry.begin(), json::object(), singles);
    for (const json& o : singles) {
      auto p = one_problem(o, at++);
      if (!p.ok()) return p.error();
      out.push_back(*p);
    }
  }
  if (out.empty()) return invalid_argument("the problems file lists no problem");
  return out;
}

Expected<std::vector<BenchProblem>> read_problems(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_argument("cannot read the problems file " + path);
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(path + " is not valid JSON");
  auto p = parse_problems(j);
  if (!p.ok()) return invalid_argument(path + ": " + p.error().message);
  return p;
}

Expected<Case> make_problem_case(const BenchProblem& p, uint64_t seed, int set) {
  Rng rng{seed ^ (std::hash<std::string>{}(p.name()) * 0x9e3779b97f4a7c15ull) ^
          (static_cast<uint64_t>(set) << 48)};
  Case c;
  c.name = p.name() + "#" + std::to_string(set);
  c.op = p.op;
  c.semantics = p.semantics;
  const int64_t rows = p.rows();
  const int64_t elems = p.slice_bytes / static_cast<int64_t>(dtype_size(p.dtype));
  const int64_t n = p.index_count;
  const std::vector<int64_t> picked = draw_rows(p, rng);
  const auto put = [](std::optional<Tensor>& slot, Expected<Tensor> t) -> Status {
    if (!t.ok()) return t.error();
    slot = std::move(*t);
    return {};
  };
  Status s;
  switch (p.op) {
    case Op::kGather:
      s = put(c.params, values(p.dtype, Shape{rows, elems}, rng));
      if (s.ok()) s = put(c.indices, index_tensor(p, picked, Shape{n}));
      if (s.ok()) c.axis = Tensor::from_values<int32_t>(Shape{}, {0});
      break;
    case Op::kGatherNd:
      s = put(c.params, values(p.dtype, Shape{rows, elems}, rng));
      if (s.ok()) s = put(c.indices, index_tensor(p, picked, Shape{n, 1}));
      break;
    case Op::kScatterNd:
      s = put(c.indices, index_tensor(p, picked, Shape{n, 1}));
      if (s.ok()) s = put(c.updates, values(p.dtype, Shape{n, elems}, rng));
      if (s.ok()) s = put(c.shape, index_tensor(p, {rows, elems}, Shape{2}));
      break;
    default:
      s = put(c.tensor, values(p.dtype, Shape{rows, elems}, rng));
      if (s.ok()) s = put(c.indices, index_tensor(p, picked, Shape{n, 1}));
      if (s.ok()) s = put(c.updates, values(p.dtype, Shape{n, elems}, rng));
      break;
  }
  if (!s.ok()) return s.error();
  return c;
}

void redraw_problem_case(const BenchProblem& p, uint64_t seed, int set, uint64_t draw, Case& c) {
  GSCHECK_CHECK(c.indices && c.indices->num_elements() >= p.index_count);
  Rng rng{seed ^ (std::hash<std::string>{}(p.name()) * 0x9e3779b97f4a7c15ull) ^
          (static_cast<uint64_t>(set) << 48) ^ ((draw + 1) * 0xd1b54a32d192ed03ull)};
  const std::vector<int64_t> picked = draw_rows(p, rng);
  Tensor& ix = *c.indices;
  for (std::size_t i = 0; i < picked.size(); ++i) {
    if (ix.dtype() == DType::kInt64) {
      ix.data_as<int64_t>()[i] = picked[i];
    } else {
      ix.data_as<int32_t>()[i] = static_cast<int32_t>(picked[i]);
    }
  }
  if (c.updates) fill_values(*c.updates, rng);
}

}  // namespace gscheck::tools
