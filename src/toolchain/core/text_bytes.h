#pragma once
// What the bytes of a name are: control bytes, ASCII, UTF-8 sequences. One reading for every
// layer that checks or shows names (git's path rules, wheel member names, patch headers), so a
// name one refuses is the name another would show escaped.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace apexnpu {

// A C0 control byte (below 0x20) or DEL (0x7f): refused in names, escaped in messages.
constexpr bool is_control_byte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

// Whether a byte, or every byte of `text`, is below 0x80.
constexpr bool is_ascii(char c) { return static_cast<unsigned char>(c) < 0x80; }
bool is_ascii(std::string_view text);

// Whether `c` continues a UTF-8 sequence (10xxxxxx) rather than starting a character.
constexpr bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// How decode_utf8 reads a sequence.
enum class Utf8Rules {
  // RFC 3629, as installers decode wheel names: no overlong forms (0xc0 0xaf for '/'), no
  // UTF-16 surrogates, nothing past U+10FFFF.
  strict,
  // Any lead byte's bit pattern with its continuation bytes, as HFS+ compares names: an overlong
  // '.' still reads as '.', so a ".git" spelt with one is still .git to it.
  lenient,
};

struct CodePoint {
  std::uint32_t value = 0;
  std::size_t length = 0;  // bytes of its sequence, 1 to 4
};

// The code point whose sequence starts at `at` (< text.size()), or nothing when the bytes there
// are no sequence under `rules` (a continuation byte first, one cut short, ...).
std::optional<CodePoint> decode_utf8(std::string_view text, std::size_t at, Utf8Rules rules);

// Whether all of `text` decodes under Utf8Rules::strict.
bool is_valid_utf8(std::string_view text);

}  // namespace apexnpu
