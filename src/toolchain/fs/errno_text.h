#pragma once
// The text of an errno value (the last failed system call's by default), for the messages that
// name it.
#include <cerrno>
#include <cstring>
#include <string>

namespace apexnpu::fs {

inline std::string errno_text(int error = errno) { return std::strerror(error); }

}  // namespace apexnpu::fs
