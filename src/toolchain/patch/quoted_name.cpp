#include "patch/quoted_name.h"

#include <fmt/core.h>

#include "core/text_bytes.h"

namespace apexnpu::patch {

namespace {

// The escapes that stand for one control byte, both ways.
constexpr std::string_view escape_letters = "abtnvfr";
constexpr std::string_view escaped_bytes = "\a\b\t\n\v\f\r";

bool is_octal(char c) { return c >= '0' && c <= '7'; }

}  // namespace

std::optional<DecodedName> decode_quoted_name(std::string_view text) {
  if (text.empty() || text.front() != '"') return std::nullopt;
  DecodedName decoded;
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      decoded.length = i + 1;
      return decoded;
    }
    if (c != '\\') {
      decoded.name += c;
      continue;
    }
    if (++i == text.size()) return std::nullopt;
    const char e = text[i];
    if (e == '"' || e == '\\') {
      decoded.name += e;
    } else if (const std::size_t at = escape_letters.find(e); at != std::string_view::npos) {
      decoded.name += escaped_bytes[at];
    } else if (e >= '0' && e <= '3' && i + 2 < text.size() && is_octal(text[i + 1]) &&
               is_octal(text[i + 2])) {
      decoded.name += static_cast<char>((e - '0') * 64 + (text[i + 1] - '0') * 8 + (text[i + 2] - '0'));
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;  // no closing quote
}

bool name_needs_quoting(std::string_view name) {
  for (const char c : name) {
    if (is_control_byte(c) || !is_ascii(c) || c == '"' || c == '\\' || c == ' ') return true;
  }
  return false;
}

std::string header_name(std::string_view prefix, std::string_view path) {
  std::string plain = std::string(prefix) + std::string(path);
  if (!name_needs_quoting(plain)) return plain;
  std::string quoted = "\"";
  for (const char c : plain) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (const std::size_t at = escaped_bytes.find(c); at != std::string_view::npos) {
      quoted += '\\';
      quoted += escape_letters[at];
    } else if (is_control_byte(c) || !is_ascii(c)) {
      quoted += fmt::format("\\{:03o}", byte);
    } else {
      quoted += c;
    }
  }
  return quoted + '"';
}

}  // namespace apexnpu::patch
