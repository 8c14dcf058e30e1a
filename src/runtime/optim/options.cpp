#include "optim/options.h"

#include <charconv>
#include <cmath>

#include "exec/error.h"

namespace apexnpu::rt::optim::checks {

std::string number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::string("?");
}

void invalid(const char* optimizer, const char* what, double value, const char* rule) {
  throw ArgumentError(std::string(optimizer) + ": invalid " + what + ": " + number(value) + " (" + rule +
                      ")");
}

void require_lr(const char* optimizer, double lr) {
  if (std::isnan(lr)) {
    throw ArgumentError(std::string(optimizer) + ": lr is required (no default learning rate)");
  }
  if (!(lr >= 0.0)) invalid(optimizer, "learning rate", lr, "lr must be >= 0");
}

void require_non_negative(const char* optimizer, const char* what, double v) {
  if (!(v >= 0.0)) invalid(optimizer, what, v, "must be >= 0");
}

void require_beta(const char* optimizer, const char* what, double v) {
  if (!(v >= 0.0 && v < 1.0)) invalid(optimizer, what, v, "must be in [0, 1)");
}

}  // namespace apexnpu::rt::optim::checks
