#pragma once
// Bytes written as lowercase hex digits (digests, git object ids).
#include <cstdint>
#include <span>
#include <string>

namespace apexnpu {

std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace apexnpu
