#include "patch/header_names.h"

#include "patch/quoted_name.h"

namespace apexnpu::patch {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

std::string_view skip_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  return text;
}

bool is_epoch(std::string_view stamp) {
  stamp = skip_blanks(stamp);
  return stamp.starts_with("1970-01-01") || stamp.starts_with("1969-12-31");
}

// One name at the start of `text` and what follows it: a quoted name, or bytes up to `end`.
std::optional<std::pair<std::string, std::string_view>> take_name(std::string_view text, auto end) {
  if (!text.empty() && text.front() == '"') {
    const auto decoded = decode_quoted_name(text);
    if (!decoded) return std::nullopt;
    return std::pair{decoded->name, text.substr(decoded->length)};
  }
  std::size_t length = 0;
  while (length < text.size() && !end(text[length])) ++length;
  return std::pair{std::string(text.substr(0, length)), text.substr(length)};
}

}  // namespace

std::optional<HeaderName> read_header_name(std::string_view text) {
  text = skip_blanks(text);
  const bool has_tab = text.find('\t') != std::string_view::npos;
  const auto taken = take_name(text, [&](char c) { return has_tab ? c == '\t' : is_space(c); });
  if (!taken) return std::nullopt;
  HeaderName header;
  header.name = taken->first;
  header.absent = header.name == "/dev/null";
  header.epoch = is_epoch(taken->second);
  return header;
}

std::optional<std::pair<std::string, std::string>> read_git_names(std::string_view text) {
  const auto first = take_name(text, is_space);
  if (!first || first->second.empty() || first->second.front() != ' ') return std::nullopt;
  const auto second = take_name(first->second.substr(1), is_space);
  if (!second || !second->second.empty() || first->first.empty() || second->first.empty())
    return std::nullopt;
  return std::pair{first->first, second->first};
}

}  // namespace apexnpu::patch
