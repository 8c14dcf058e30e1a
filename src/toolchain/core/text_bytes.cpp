#include "core/text_bytes.h"

#include <algorithm>

namespace apexnpu {

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return is_ascii(c); });
}

std::optional<CodePoint> decode_utf8(std::string_view text, std::size_t at, Utf8Rules rules) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) return CodePoint{lead, 1};
  const std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  if (length == 0 || text.size() - at < length) return std::nullopt;
  // 0xc0 and 0xc1 only start overlong forms; from 0xf5 on, code points past U+10FFFF.
  if (rules == Utf8Rules::strict && (lead < 0xc2 || lead > 0xf4)) return std::nullopt;
  std::uint32_t value = lead & (0x7fu >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if (!is_utf8_continuation(text[at + k])) return std::nullopt;
    value = value << 6 | (static_cast<unsigned char>(text[at + k]) & 0x3fu);
  }
  const bool overlong = (length == 3 && value < 0x800) || (length == 4 && value < 0x10000);
  const bool surrogate = value >= 0xd800 && value <= 0xdfff;
  if (rules == Utf8Rules::strict && (overlong || surrogate || value > 0x10ffff)) return std::nullopt;
  return CodePoint{value, length};
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const auto point = decode_utf8(text, at, Utf8Rules::strict);
    if (!point) return false;
    at += point->length;
  }
  return true;
}

}  // namespace apexnpu
