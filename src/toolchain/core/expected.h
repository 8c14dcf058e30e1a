#pragma once
// A value, or the message that says why there is none: what a step returns when its caller
// expects it to fail and goes on (verify lists a RECORD it cannot parse among its findings;
// --python=all passes over a version that is not installed). Thrown, such a failure would only
// be caught again one frame up; errors that end the command stay exceptions (core/error.h).
// C++23's std::expected, with the error fixed to a message.
#include <string>
#include <utility>
#include <variant>

namespace apexnpu {

// The failing side of an Expected: `return Unexpected{"why"};`.
struct Unexpected {
  std::string message;
};

template <typename T>
class Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // implicit: `return value;`
  Expected(Unexpected failure) : state_(std::in_place_index<1>, std::move(failure.message)) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  // The value; only when has_value().
  T& operator*() { return std::get<0>(state_); }
  const T& operator*() const { return std::get<0>(state_); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  // Why there is no value; only when !has_value().
  const std::string& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, std::string> state_;
};

}  // namespace apexnpu
