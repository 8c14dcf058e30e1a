#pragma once
// Errors raised by the runtime. The runtime uses the standard library only, so it has its own
// small hierarchy: the CPython binding maps ArgumentError to ValueError and Error to RuntimeError.
//   throw ArgumentError(concat("lr must be >= 0, got ", lr));
#include <sstream>
#include <stdexcept>
#include <string>

namespace apexnpu::rt {

// The operation failed (bad state, out of memory, unsupported CPU ...).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The caller passed an invalid argument (negative lr, wrong dtype, offset out of range ...).
class ArgumentError : public Error {
 public:
  using Error::Error;
};

// Builds a message from streamable parts; only for error paths (it allocates).
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace apexnpu::rt
