// Result<T>: a value or an Error with a category. Library code returns these and
// never prints or exits; the CLI maps categories to documented exit codes.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace imgtool {

enum class ErrorKind {
  kInvalidInput,  // bad spec, bad flag, malformed JSON, hostile path
  kNotFound,      // missing file, tag, blob
  kIntegrity,     // digest or size mismatch, corrupt data
  kDenied,        // verification or policy said no
  kTransport,     // network, registry
  kInternal,      // I/O failure, library error, bug
};

// Exit code of the CLI for each kind (documented in README.md).
int ExitCodeFor(ErrorKind kind);
const char* ErrorKindName(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;

  // Prefixes context so messages read like a path: "building layer 2: reading x: ENOENT".
  Error Context(const std::string& what) const { return Error{kind, what + ": " + message}; }
};

inline Error MakeError(ErrorKind kind, std::string message) { return Error{kind, std::move(message)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace imgtool

// Early return on failure, adding context. Used sparingly: it keeps pipelines readable.
#define IMGTOOL_TRY(expr)              \
  do {                                 \
    auto _st = (expr);                 \
    if (!_st.ok()) return _st.error(); \
  } while (0)
