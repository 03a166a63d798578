// Errors as values: every recoverable failure travels up as a Result until main() turns it
// into an exit code. Exceptions are reserved for programming errors (R3_CHECK).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace r3 {

struct Error {
  std::string message;
};

// A value or the reason there is none. Small on purpose: C++20 has no std::expected.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}        // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

[[noreturn]] inline void check_failed(const char* file, int line, const char* expr, const char* why) {
  std::fprintf(stderr, "%s:%d: internal check failed: %s (%s)\n", file, line, expr, why);
  std::abort();
}

// What `body` threw, as text (its what()), or nullopt when it returned: for the threads a thrown
// exception must not leave (std::terminate would end the process with every finding unwritten),
// which keep it for the report instead.
template <class Body>
std::optional<std::string> exception_of(Body&& body) {
  try {
    std::forward<Body>(body)();
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("an exception that is no std::exception");
  }
}

}  // namespace r3

// R3_CHECK: an invariant of r3fuzz itself. Failing it is a bug in r3fuzz, never in the input.
#define R3_CHECK(expr, why) \
  ((expr) ? static_cast<void>(0) : ::r3::check_failed(__FILE__, __LINE__, #expr, why))

// R3_TRY: propagate an error from a Result-returning call, keep its value otherwise.
#define R3_TRY_CONCAT_(a, b) a##b
#define R3_TRY_CONCAT(a, b) R3_TRY_CONCAT_(a, b)
#define R3_TRY_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                  \
  if (!tmp.ok()) return tmp.error();  \
  decl = std::move(tmp).value()
#define R3_TRY(decl, expr) R3_TRY_IMPL_(R3_TRY_CONCAT(r3_try_, __LINE__), decl, expr)
#define R3_TRY_STATUS(expr)                    \
  do {                                         \
    auto r3_status_ = (expr);                  \
    if (!r3_status_.ok()) return r3_status_.error(); \
  } while (0)
