#pragma once
// C-style quoted file names in patch headers, as git writes them and GNU patch 2.7 reads them:
// "a/na\303\257ve name.txt", with \" \\ \a \b \t \n \v \f \r and three-digit octal escapes.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace apexnpu::patch {

struct DecodedName {
  std::string name;
  std::size_t length = 0;  // bytes of the quoted form, both quotes included
};

// Decodes the quoted name at the start of `text` (its first byte is '"'). Nothing when it is
// malformed: an unknown escape, an octal escape that is not three digits up to \377, or no
// closing quote. What follows the closing quote is not looked at.
std::optional<DecodedName> decode_quoted_name(std::string_view text);

// Whether a header must quote the name: control bytes, bytes above 0x7f, '"', '\\' and spaces
// (GNU patch ends an unquoted name at the first space unless a tab follows it).
bool name_needs_quoting(std::string_view name);

// `prefix` + `path` as a header writes it: as is when nothing needs quoting, else quoted whole.
std::string header_name(std::string_view prefix, std::string_view path);

}  // namespace apexnpu::patch
