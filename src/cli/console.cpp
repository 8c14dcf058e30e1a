#include "cli/console.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace apexnpu::cli {

Console::Console()
    : stderr_tty_(::isatty(STDERR_FILENO) == 1),
      no_color_(std::getenv("NO_COLOR") != nullptr && *std::getenv("NO_COLOR") != '\0') {
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") no_color_ = true;
}

void Console::print_out(const std::string& line) {
  end_progress();
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Console::print_err(std::string_view tag, const std::string& line) {
  end_progress();
  const std::string head = tag == "error" ? red("error") : yellow(std::string(tag));
  fmt::print(stderr, "apexnpu: {}: {}\n", head, line);
}

void Console::error(std::string_view message, std::string_view hint) {
  print_err("error", std::string(message));
  if (!hint.empty()) fmt::print(stderr, "  hint: {}\n", hint);
}

void Console::progress(std::string_view label, std::size_t done, std::size_t total) {
  if (!decorated()) return;
  const int width = 30;
  const int filled = total == 0 ? width : static_cast<int>(width * done / total);
  fmt::print(stderr, "\r{} [{}{}] {}/{}\x1b[K", label, std::string(filled, '#'),
             std::string(width - filled, ' '), done, total);
  std::fflush(stderr);
  progress_shown_ = true;
}

void Console::end_progress() {
  if (!progress_shown_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  progress_shown_ = false;
}

std::string Console::paint(std::string_view code, std::string_view s) const {
  if (!decorated()) return std::string(s);
  return fmt::format("\x1b[{}m{}\x1b[0m", code, s);
}

}  // namespace apexnpu::cli
