#include "wheel/record.h"

#include <fmt/core.h>

#include <array>

#include "core/sha256.h"

namespace apexnpu::wheel {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

}  // namespace

std::string urlsafe_b64_nopad(std::string_view bytes) {
  std::string out;
  std::size_t i = 0;
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const unsigned v = at(i) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (rest == 2) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

std::optional<std::string> urlsafe_b64_decode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (char c : text) {
    const auto pos = kAlphabet.find(c);
    if (pos == std::string_view::npos) return std::nullopt;
    acc = (acc << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string record_hash(std::string_view bytes) {
  const auto d = sha256(bytes);
  return "sha256=" + urlsafe_b64_nopad(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

std::string format_record(const WheelFiles& files, const std::string& record_path) {
  std::string out;
  for (const auto& [path, bytes] : files) {
    if (path == record_path) continue;
    out += fmt::format("{},{},{}\n", csv_field(path), record_hash(bytes), bytes.size());
  }
  out += csv_field(record_path) + ",,\n";
  return out;
}

Expected<std::vector<RecordRow>> parse_record(std::string_view text) {
  std::vector<RecordRow> rows;
  std::size_t i = 0, line = 1;
  while (i < text.size()) {
    std::vector<std::string> fields(1);
    const std::size_t row_line = line;
    bool quoted = false;
    bool line_done = false;
    while (i < text.size() && !line_done) {
      const char c = text[i++];
      if (quoted) {
        if (c == '"') {
          if (i < text.size() && text[i] == '"') {
            fields.back() += '"';
            ++i;
          } else
            quoted = false;
        } else {
          if (c == '\n') ++line;
          fields.back() += c;
        }
      } else if (c == '"' && fields.back().empty()) {
        quoted = true;
      } else if (c == ',') {
        fields.emplace_back();
      } else if (c == '\n') {
        ++line;
        line_done = true;
      } else if (c != '\r') {
        fields.back() += c;
      }
    }
    if (quoted) return Unexpected{fmt::format("RECORD line {}: unterminated quoted field", row_line)};
    if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
    if (fields.size() != 3)
      return Unexpected{
          fmt::format("RECORD line {}: {} fields, expected 3 (path,hash,size)", row_line, fields.size())};
    rows.push_back({fields[0], fields[1], fields[2], row_line});
  }
  return rows;
}

}  // namespace apexnpu::wheel
