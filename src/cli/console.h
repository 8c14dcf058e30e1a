#pragma once
// What the commands print: human text on stderr/stdout, or (with --json) one JSON document on
// stdout at the end. Colour and progress only on a terminal and never with NO_COLOR.
#include <fmt/core.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace apexnpu::cli {

class Console {
 public:
  Console();

  void set_json(bool on) { json_ = on; }
  void set_verbosity(int v) { verbosity_ = v; }  // -1 quiet, 0 normal, 1+ verbose
  bool json() const { return json_; }
  bool quiet() const { return verbosity_ < 0; }
  bool verbose() const { return verbosity_ > 0; }
  // Progress and colour go to stderr, only when it is a terminal, not under --json or NO_COLOR.
  bool decorated() const { return stderr_tty_ && !no_color_ && !json_ && !quiet(); }

  // A result line for people (stdout); suppressed by -q and --json.
  template <typename... Args>
  void info(fmt::format_string<Args...> f, Args&&... args) {
    if (!json_ && !quiet()) print_out(fmt::format(f, std::forward<Args>(args)...));
  }
  // Detail shown with -v only.
  template <typename... Args>
  void detail(fmt::format_string<Args...> f, Args&&... args) {
    if (!json_ && verbose()) print_out(fmt::format(f, std::forward<Args>(args)...));
  }
  // A sink for the -v lines a command reports through its callbacks (the console must outlive it).
  std::function<void(const std::string&)> detail_sink() {
    return [this](const std::string& line) { detail("{}", line); };
  }
  // A warning (stderr), shown unless -q.
  template <typename... Args>
  void warn(fmt::format_string<Args...> f, Args&&... args) {
    if (!quiet()) print_err("warning", fmt::format(f, std::forward<Args>(args)...));
  }
  // An error message (stderr); always shown, also under --json.
  void error(std::string_view message, std::string_view hint = {});

  // A progress line redrawn in place on a terminal; a no-op elsewhere.
  void progress(std::string_view label, std::size_t done, std::size_t total);
  void end_progress();

  // Colour a word when decorated.
  std::string green(std::string_view s) const { return paint("32", s); }
  std::string yellow(std::string_view s) const { return paint("33", s); }
  std::string red(std::string_view s) const { return paint("31", s); }

 private:
  void print_out(const std::string& line);
  void print_err(std::string_view tag, const std::string& line);
  std::string paint(std::string_view code, std::string_view s) const;

  bool json_ = false;
  int verbosity_ = 0;
  bool stderr_tty_ = false;
  bool no_color_ = false;
  bool progress_shown_ = false;
};

}  // namespace apexnpu::cli
