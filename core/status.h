// Errors as values: Error, Status and Expected<T>. No exceptions cross a boundary.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

/// Checked precondition: a programmer error aborts with the failed condition and its place.
#define GSCHECK_CHECK(cond)                                                  \
  do {                                                                       \
    if (!(cond)) ::gscheck::detail::check_failed(#cond, __FILE__, __LINE__); \
  } while (0)

namespace gscheck {
namespace detail {
[[noreturn]] inline void check_failed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "gscheck: precondition failed: %s (%s:%d)\n", cond, file, line);
  std::abort();
}
}  // namespace detail

/// Which kind of failure an error is; outcomes compare by class first, then by message.
enum class ErrorClass : unsigned char {
  kInvalidArgument,    ///< a validation check of the op failed (shapes, attributes, limits)
  kBadIndex,           ///< an index is out of range (tf-cpu semantics, or policy ERROR)
  kUnsupported,        ///< TensorFlow has no kernel for this op/dtype/index dtype
  kResourceExhausted,  ///< refused by a memory budget
  kUnimplemented,      ///< this backend does not implement the case (not a TF error)
  kInternal,           ///< the backend itself failed (CUDA error, crashed plugin)
  kParse,              ///< a malformed case file or command line
};

/// Stable lower-case name used in case files and reports ("invalid_argument", ...).
std::string_view error_class_name(ErrorClass c);
/// Inverse of error_class_name; nullopt for an unknown name.
std::optional<ErrorClass> error_class_from_name(std::string_view name);

/// An error: its class and a message (TensorFlow's text where the check mirrors TensorFlow).
struct Error {
  Error() = default;
  Error(ErrorClass c, std::string m, std::vector<std::string> alts = {})
      : cls(c), message(std::move(m)), alternatives(std::move(alts)) {}

  ErrorClass cls = ErrorClass::kInternal;
  std::string message;  ///< the canonical text (what a single-threaded TensorFlow writes)
  /// Other texts TensorFlow may write for the same failure, e.g. the bad index a multi-threaded
  /// kernel names; a message equal to one of them is as right as `message`. Usually empty.
  std::vector<std::string> alternatives;
  /// Set by a contained backend when the call cost it its worker process (a crash, a timeout,
  /// a killed process group): such a call is not repeated, since a repeat costs a fresh worker
  /// and a crash is a failure however the repeat ends. Not part of the error's identity.
  bool lost_worker = false;
  /// Set by gscheck's containment, never by a backend's answer: the call crashed (a signal, an
  /// exit), hung, went over its memory cap, wrote outside its output or broke the worker's
  /// protocol. The case is UNSAFE, which no known-failures entry turns green. Not part of the
  /// error's identity.
  bool unsafe = false;
  friend bool operator==(const Error& a, const Error& b) {
    return a.cls == b.cls && a.message == b.message && a.alternatives == b.alternatives;
  }

  /// True when text is the message or one of the alternatives.
  bool accepts(std::string_view text) const {
    if (text == message) return true;
    for (const auto& a : alternatives)
      if (text == a) return true;
    return false;
  }
};

/// Success, or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}  // NOLINT: implicit by design
  static Status ok_status() { return {}; }
  bool ok() const { return !error_.has_value(); }
  const Error& error() const {
    GSCHECK_CHECK(error_.has_value());
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

/// A T, or an Error (std::expected is C++23; nvcc builds this as C++20).
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT
  Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  T& value() & {
    GSCHECK_CHECK(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    GSCHECK_CHECK(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    GSCHECK_CHECK(ok());
    return std::get<0>(std::move(v_));
  }
  const Error& error() const {
    GSCHECK_CHECK(!ok());
    return std::get<1>(v_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

/// Shorthands for building errors.
inline Error invalid_argument(std::string msg) {
  return {ErrorClass::kInvalidArgument, std::move(msg)};
}
inline Error bad_index(std::string msg) { return {ErrorClass::kBadIndex, std::move(msg)}; }
inline Error parse_error(std::string msg) { return {ErrorClass::kParse, std::move(msg)}; }

}  // namespace gscheck

/// Propagate an error from an expression yielding Status or Expected.
#define GSCHECK_RETURN_IF_ERROR(expr)                          \
  do {                                                         \
    auto gscheck_status_ = (expr);                             \
    if (!gscheck_status_.ok()) return gscheck_status_.error(); \
  } while (0)
