#pragma once
// The text of the last failed system call's errno, for the messages that name it.
#include <cerrno>
#include <cstring>
#include <string>

namespace apexnpu::fs {

inline std::string errno_text() { return std::strerror(errno); }

}  // namespace apexnpu::fs
