#pragma once
// The zlib streams git stores objects in. Errors name the object (`what`) being read.
#include <cstddef>
#include <string>

namespace apexnpu::git {

// Inflates the stream starting at `in` (at most `available` bytes) into exactly `size` bytes;
// throws Error when the stream is corrupt or does not inflate to that size.
std::string inflate_exact(const unsigned char* in, std::size_t available, std::size_t size,
                          const std::string& what);

// Inflates a whole stream of unknown size (a loose object).
std::string inflate_all(const unsigned char* in, std::size_t available, const std::string& what);

}  // namespace apexnpu::git
