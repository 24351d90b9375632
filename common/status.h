#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace ebb {

// Stable error codes: they appear in messages and logs and must not be renumbered.
enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // E_INVALID: a value breaks a documented rule
  kParse,            // E_PARSE: malformed input text
  kNotFatTree,       // E_NOT_FAT_TREE: a topology that is not a fat tree
  kNotFound,         // E_NOT_FOUND
  kIo,               // E_IO: a file could not be read or written
  kTimeout,          // E_TIMEOUT
  kUnavailable,      // E_UNAVAILABLE: a peer or service is not reachable
  kInternal,         // E_INTERNAL: a broken invariant inside ebb
};

const char* errorCodeName(ErrorCode code);

// The outcome of an operation that can fail in expected ways. [[nodiscard]]:
// an ignored Status is a compile error in CI (deliberate: (void) and a comment).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool isOk() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "E_PARSE: net.txt:12: ..." for humans and logs.
  std::string toString() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// E_INVALID with `message`: the one way to say a value breaks a documented
// rule (message names the field or the place, then the rule).
inline Status invalidArgument(std::string message) {
  return {ErrorCode::kInvalidArgument, std::move(message)};
}

// Exception for configuration load and start-up only (docs/design.md §12, conventions).
class Error : public std::runtime_error {
 public:
  explicit Error(Status status);
  Error(ErrorCode code, std::string message) : Error(Status(code, std::move(message))) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// A value or the Status saying why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  Result(ErrorCode code, std::string message) : v_(Status(code, std::move(message))) {}

  bool isOk() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return isOk(); }
  const T& value() const& { return valueOrThrow(); }
  T& value() & { return const_cast<T&>(std::as_const(*this).valueOrThrow()); }
  T&& value() && { return std::move(value()); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  Status status() const { return isOk() ? Status::ok() : std::get<Status>(v_); }

 private:
  const T& valueOrThrow() const {
    if (!isOk()) throw Error(std::get<Status>(v_));
    return std::get<T>(v_);
  }
  std::variant<T, Status> v_;
};

}  // namespace ebb
