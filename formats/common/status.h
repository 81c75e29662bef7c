// Errors as values at module edges.
//
// Every fallible function that crosses a module boundary returns `Status` (no value) or
// `Expected<T>` (a value or an error). An error carries a code that callers may branch on and a
// message written for the person who has to act on it ("mapping.txt line 12: expected
// 'a -> b:'"), never for the developer.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace restack {

enum class ErrorCode {
  kInvalidArgument,  // the caller passed something unusable (bad flag, bad config value)
  kMalformedInput,   // a symbol file, event or stack line could not be parsed
  kUnsupported,      // well-formed but not something Restack handles (yet)
  kNotFound,         // a lookup found nothing (unknown debug id, address outside any range)
  kTooLarge,         // a configured size bound was exceeded
  kIo,               // file system, RocksDB or network failure
  kUnavailable,      // a passing failure (network, HTTP 5xx, timeout): retry later
  kInternal,         // a bug: an invariant did not hold
};

const char* errorCodeName(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "malformed_input: <message>"
  std::string describe() const;
  // Prefixes context to the message: Error(...).withContext("libfoo.so") -> "libfoo.so: ...".
  Error withContext(const std::string& context) const;

 private:
  ErrorCode code_;
  std::string message_;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT: implicit on purpose
  static Status ok() { return Status(); }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const Error& error() const {
    assert(failed_);
    return error_;
  }

 private:
  Error error_{ErrorCode::kInternal, ""};
  bool failed_ = false;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  // Two overloads rather than one by value: `return value;` then moves the value once, not twice
  // (a FrameLookup holds its first frame inline, symbolstore/frame_lookup.h, so a move is not free).
  Expected(T&& value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit on purpose
  Expected(const T& value) : storage_(std::in_place_index<0>, value) {}        // NOLINT: implicit on purpose
  Expected(Error error) : storage_(std::move(error)) {}                        // NOLINT: implicit on purpose
  // The value constructed in place from `args`, not moved in: `Expected<T> result(std::in_place);`
  // for a function that fills its answer where the caller receives it.
  template <typename... Args>
  explicit Expected(std::in_place_t, Args&&... args) : storage_(std::in_place_index<0>, std::forward<Args>(args)...) {}
  bool hasValue() const { return storage_.index() == 0; }
  explicit operator bool() const { return hasValue(); }
  T& value() & {
    assert(hasValue());
    return std::get<0>(storage_);
  }
  const T& value() const& {
    assert(hasValue());
    return std::get<0>(storage_);
  }
  T&& value() && {
    assert(hasValue());
    return std::get<0>(std::move(storage_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const {
    assert(!hasValue());
    return std::get<1>(storage_);
  }
  Status status() const { return hasValue() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> storage_;
};

inline Error malformed(std::string message) {
  return Error(ErrorCode::kMalformedInput, std::move(message));
}
inline Error invalidArgument(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}
inline Error notFound(std::string message) {
  return Error(ErrorCode::kNotFound, std::move(message));
}
inline Error ioError(std::string message) {
  return Error(ErrorCode::kIo, std::move(message));
}
inline Error tooLarge(std::string message) {
  return Error(ErrorCode::kTooLarge, std::move(message));
}
inline Error unsupported(std::string message) {
  return Error(ErrorCode::kUnsupported, std::move(message));
}

}  // namespace restack

// Propagates an error from a Status- or Expected-returning expression.
#define RESTACK_RETURN_IF_ERROR(expr)                     \
  do {                                                    \
    auto restack_status_ = (expr);                        \
    if (!restack_status_) return restack_status_.error(); \
  } while (0)
