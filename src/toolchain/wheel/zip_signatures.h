#pragma once
// The signatures of a zip archive's records (APPNOTE 4.3), shared by the writer and the reader.
#include <cstdint>

namespace apexnpu::wheel {

inline constexpr std::uint32_t kLocalSig = 0x04034b50;    // a local file header
inline constexpr std::uint32_t kCentralSig = 0x02014b50;  // a central directory header
inline constexpr std::uint32_t kEndSig = 0x06054b50;      // the end of central directory record

}  // namespace apexnpu::wheel
