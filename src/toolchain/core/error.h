#pragma once
// Errors carry a message for the user; `main` catches them once and maps them to exit codes.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace apexnpu {

enum class ExitCode : int { ok = 0, failure = 1, usage = 2 };

// The work failed (exit 1). `what()` says what is wrong and where; `hint()` what to do about it.
// `result()` optionally carries what the command found before failing (per-file patch status,
// ...) so that --json can still describe it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string hint = {}, nlohmann::json result = nullptr)
      : std::runtime_error(message), hint_(std::move(hint)), result_(std::move(result)) {}
  const std::string& hint() const noexcept { return hint_; }
  const nlohmann::json& result() const noexcept { return result_; }
  virtual ExitCode exit_code() const noexcept { return ExitCode::failure; }

 private:
  std::string hint_;
  nlohmann::json result_;
};

// The command line was wrong (exit 2).
class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::usage; }
};

}  // namespace apexnpu
