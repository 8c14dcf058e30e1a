#pragma once
// Which names a wheel may hold, as every installer reads them alike: valid UTF-8 without control
// characters, at most kMaxNameBytes bytes (kMaxComponentBytes per '/'-separated part, the
// NAME_MAX of Linux file systems), and no two names the same, the same but for the case of ASCII
// letters (one file on macOS and Windows; so too for directories), or a file and a directory of
// one name.
// `verify` applies these to every entry it reads and `build` to every file of its input tree.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::wheel {

inline constexpr std::size_t kMaxNameBytes = 1024;
inline constexpr std::size_t kMaxComponentBytes = 255;

// A name as an error message shows it: control bytes (and every byte >= 0x80 when the name is
// not UTF-8) as \xNN, a long one cut short with its length.
std::string printable_name(std::string_view name);

// Why `name` cannot be a wheel member ("is not valid UTF-8", ...), or nullopt when it can.
std::optional<std::string> member_name_problem(std::string_view name);

// Throws Error naming `source` and the first of `names` (files) that is refused or clashes.
void check_member_names(const std::vector<std::string>& names, const std::string& source);

// The names seen so far; add() says why a new one clashes with them.
class MemberNames {
 public:
  // nullopt when `name` (a file) clashes with none seen; else the reason, naming the other.
  std::optional<std::string> add(const std::string& name);
  // The same for a directory entry (`dir` without its trailing '/').
  std::optional<std::string> add_directory(const std::string& dir);

 private:
  std::map<std::string, std::string> files_;        // folded name -> name as given
  std::map<std::string, std::string> directories_;  // folded directory -> as first spelt
};

}  // namespace apexnpu::wheel
