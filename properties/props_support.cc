#include "properties/props_support.h"

#include <rapidcheck.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "core/case_json.h"
#include "harness/regression.h"
#include "reference/reference.h"

namespace gscheck::props {
namespace {

struct Pending {
  std::string property;
  std::string backend;
  Case c;
  Outcome expected = Error{};
};
std::optional<Pending>& pending() {
  static std::optional<Pending> p;
  return p;
}

std::map<std::string, std::map<std::string, int>>& class_counts() {
  static std::map<std::string, std::map<std::string, int>> m;
  return m;
}

}  // namespace

const Targets& registry_targets() {
  static const Targets targets = [] {
    static std::vector<std::unique_ptr<Backend>> owned;
    Targets t;
    for (const std::string& name : backend_names()) {
      Expected<std::unique_ptr<Backend>> b = make_backend(name);
      if (!b.ok()) {
        std::cerr << "gscheck properties: skipping backend " << name << ": " << b.error().message
                  << "\n";
        continue;
      }
      owned.push_back(std::move(b.value()));
      t.push_back({name, owned.back().get()});
    }
    std::cerr << "gscheck properties: backends:";
    for (const Target& x : t) std::cerr << ' ' << x.name;
    std::cerr << "\n";
    return t;
  }();
  return targets;
}

Outcome reference_outcome(const Case& c) { return reference::run(c); }

std::optional<Outcome> run_on(const Target& t, const Case& c) {
  if (!admit(t.backend->capabilities(), c).ok()) return std::nullopt;
  Outcome o = t.backend->run(c);
  if (!o.ok() && o.error().cls == ErrorClass::kUnimplemented) return std::nullopt;
  class_counts()["ran_on"][t.name]++;
  return o;
}

void tag_case(const Case& c) {
  const CaseClass k = classify(c);
  const DType dt = c.params ? c.params->dtype() : c.updates ? c.updates->dtype() : DType::kFloat32;
  const std::string op(op_name(c.op));
  RC_TAG(op);
  RC_CLASSIFY(k.out_of_bounds, "out_of_bounds");
  RC_CLASSIFY(k.duplicates, "duplicates");
  RC_CLASSIFY(k.empty, "empty");
  auto& m = class_counts();
  m["op"][op]++;
  m["dtype"][std::string(dtype_name(dt))]++;
  m["index_dtype"][std::string(dtype_name(c.indices->dtype()))]++;
  m["semantics"][std::string(semantics_name(c.semantics))]++;
  m["rank"][std::to_string(k.rank)]++;
  m["out_of_bounds"][k.out_of_bounds ? "yes" : "no"]++;
  m["duplicates"][k.duplicates ? "yes" : "no"]++;
  m["empty"][k.empty ? "yes" : "no"]++;
}

void print_class_table(std::ostream& os) {
  auto& m = class_counts();
  if (m.empty()) return;
  os << "cases seen per class (shrinking steps included):\n";
  for (const auto& [klass, counts] : m) {
    os << "  " << klass << ":";
    for (const auto& [value, n] : counts) os << ' ' << value << '=' << n;
    os << '\n';
  }
  m.clear();
}

bool element_equal(const Tensor& a, int64_t i, const Tensor& b, int64_t j) {
  if (a.dtype() != b.dtype()) return false;
  if (a.dtype() == DType::kString)
    return a.strings()[static_cast<size_t>(i)] == b.strings()[static_cast<size_t>(j)];
  const size_t w = dtype_size(a.dtype());
  return std::memcmp(a.data() + static_cast<size_t>(i) * w, b.data() + static_cast<size_t>(j) * w,
                     w) == 0;
}

void copy_element(Tensor& dst, int64_t i, const Tensor& src, int64_t j) {
  GSCHECK_CHECK(dst.dtype() == src.dtype());
  if (dst.dtype() == DType::kString) {
    dst.strings()[static_cast<size_t>(i)] = src.strings()[static_cast<size_t>(j)];
    return;
  }
  const size_t w = dtype_size(dst.dtype());
  std::memcpy(dst.data() + static_cast<size_t>(i) * w, src.data() + static_cast<size_t>(j) * w, w);
}

std::string element_text(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kString) return '"' + t.strings()[static_cast<size_t>(i)] + '"';
  std::ostringstream os;
  os << "0x";
  const size_t w = dtype_size(t.dtype());
  const auto* p = reinterpret_cast<const unsigned char*>(t.data()) + static_cast<size_t>(i) * w;
  for (size_t k = w; k-- > 0;) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", p[k]);
    os << buf;
  }
  return os.str();
}

bool same_outcome(const Outcome& a, const Outcome& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) return a.error().cls == b.error().cls;
  return a.value().bit_equal(b.value());
}

std::string outcome_text(const Outcome& o) {
  if (!o.ok())
    return "error " + std::string(error_class_name(o.error().cls)) + ": " + o.error().message;
  return "tensor " + std::string(dtype_name(o.value().dtype())) + o.value().shape().to_string();
}

void note_failure(std::string_view property, const std::string& backend, const Case& c,
                  const Outcome& expected) {
  pending() = Pending{std::string(property), backend, c, expected};
}

std::optional<std::string> flush_regression() {
  if (!pending()) return std::nullopt;
  Pending p = std::move(*pending());
  pending().reset();
  const uint64_t seed = rc::detail::configuration().testParams.seed;
  const std::string found_by = "RapidCheck (shrunk counterexample of property " + p.property +
                               ", RC_PARAMS=\"seed=" + std::to_string(seed) + "\")";
  auto path = harness::save_regression(harness::regressions_dir(),
                                       {p.c, p.expected, found_by, p.backend, ""});
  if (!path.ok()) {
    std::cerr << "gscheck properties: could not write the counterexample: " << path.error().message
              << "\n";
    return std::nullopt;
  }
  std::cerr << "gscheck properties: counterexample written to " << *path << "\n"
            << "  replay: " << harness::replay_command(p.backend, *path) << "\n";
  return *path;
}

}  // namespace gscheck::props

namespace gscheck::props {

void check_shape_and_errors(const Targets& ts, const Case& c) {
  tag_case(c);
  const Outcome ref = reference_outcome(c);
  const std::optional<Geometry> g = geometry(c);
  if (!g && ref.ok()) RC_FAIL("the reference accepts a case whose shapes do not fit the op");
  if (ref.ok() && ref.value().shape() != g->out_shape) {
    RC_FAIL("reference output shape " + ref.value().shape().to_string() + ", formula gives " +
            g->out_shape.to_string());
  }
  for (const Target& t : ts) {
    const std::optional<Outcome> got = run_on(t, c);
    if (!got) continue;
    if (got->ok() != ref.ok() || (!ref.ok() && got->error().cls != ref.error().cls)) {
      RC_FAIL(t.name + " gives " + outcome_text(*got) + "; the reference gives " +
              outcome_text(ref));
    }
    if (ref.ok() && got->value().shape() != g->out_shape) {
      RC_FAIL(t.name + " output shape " + got->value().shape().to_string() + ", formula gives " +
              g->out_shape.to_string());
    }
  }
}

void assert_bit_equal(const std::string& who, const Tensor& want, const Tensor& got) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) {
    RC_FAIL(who + ": got " + std::string(dtype_name(got.dtype())) + got.shape().to_string() +
            ", want " + std::string(dtype_name(want.dtype())) + want.shape().to_string());
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (!element_equal(want, i, got, i)) {
      RC_FAIL(who + ": element " + std::to_string(i) + " is " + element_text(got, i) + ", want " +
              element_text(want, i));
    }
  }
}

Tensor block(const Tensor& t, int64_t parts, int64_t which, const Shape& shape) {
  Tensor out = Tensor::zeros(t.dtype(), shape, INT64_MAX).value();
  const int64_t n = parts == 0 ? 0 : t.num_elements() / parts;
  GSCHECK_CHECK(out.num_elements() == n);
  for (int64_t i = 0; i < n; ++i) copy_element(out, i, t, which * n + i);
  return out;
}

Tensor reshaped(const Tensor& t, const Shape& new_shape) { return block(t, 1, 0, new_shape); }

void check_bit_exact(const Targets& ts, const Case& c,
                     const std::function<Tensor(const Case&, const Geometry&)>& expected) {
  tag_case(c);
  const Outcome ref = reference_outcome(c);
  if (!ref.ok()) return;  // errors are the shape property's and the differential's business
  const std::optional<Geometry> g = geometry(c);
  RC_ASSERT(g.has_value());
  const Tensor want = expected(c, *g);
  assert_bit_equal("reference", want, ref.value());
  for (const Target& t : ts) {
    const std::optional<Outcome> got = run_on(t, c);
    if (!got) continue;
    if (!got->ok()) RC_FAIL(t.name + ": " + outcome_text(*got));
    assert_bit_equal(t.name, want, got->value());
  }
}

void check_batch_dims_loop(const Targets& ts, const Case& c,
                           const std::function<void(Case&, const Geometry&)>& per_batch) {
  tag_case(c);
  const std::optional<Geometry> g = geometry(c);
  RC_ASSERT(g.has_value());
  const auto bd = static_cast<std::ptrdiff_t>(g->batch_dims);
  const auto& pd = c.params->shape().dims();
  const auto& id = c.indices->shape().dims();
  const Shape sub_params(std::vector<int64_t>(pd.begin() + bd, pd.end()));
  const Shape sub_indices(std::vector<int64_t>(id.begin() + bd, id.end()));
  for (const Target& t : ts) {
    const std::optional<Outcome> whole = run_on(t, c);
    if (!whole) continue;
    Tensor joined = Tensor::zeros(c.params->dtype(), g->out_shape, INT64_MAX).value();
    std::optional<Error> failed;
    bool unclaimed = false;
    int64_t at = 0;
    for (int64_t b = 0; b < g->batches; ++b) {
      Case one;
      one.name = c.name + "/batch_" + std::to_string(b);
      one.op = c.op;
      one.semantics = c.semantics;
      one.params = block(*c.params, g->batches, b, sub_params);
      one.indices = block(*c.indices, g->batches, b, sub_indices);
      per_batch(one, *g);
      const std::optional<Outcome> part = run_on(t, one);
      if (!part) {
        unclaimed = true;
        break;
      }
      if (!part->ok()) {
        failed = part->error();
        break;
      }
      for (int64_t i = 0; i < part->value().num_elements(); ++i)
        copy_element(joined, at++, part->value(), i);
    }
    if (unclaimed) continue;
    if (whole->ok() != !failed.has_value() || (failed && whole->error().cls != failed->cls)) {
      RC_FAIL(t.name + ": batched " + std::string(op_name(c.op)) + " gives " +
              outcome_text(*whole) + ", the per-batch loop " +
              (failed ? "fails: " + failed->message : std::string("succeeds")));
    }
    if (whole->ok()) assert_bit_equal(t.name + " (per-batch loop)", joined, whole->value());
  }
}

}  // namespace gscheck::props
