#pragma once
// Seconds spent in each phase of a command, for the "timings" of its --json result.
#include <chrono>
#include <map>
#include <string>

namespace apexnpu::commands {

using Timings = std::map<std::string, double>;  // phase -> seconds

class PhaseTimer {
 public:
  // Records the time since the previous mark (or construction) under `phase`.
  void mark(const std::string& phase) {
    const auto now = std::chrono::steady_clock::now();
    timings_[phase] = std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  void restart() { last_ = std::chrono::steady_clock::now(); }
  const Timings& timings() const { return timings_; }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  Timings timings_;
};

}  // namespace apexnpu::commands
