#pragma once
// Seeded random files of few distinct lines (so repeats happen), CRLF lines and missing final
// newlines, and random edits of them: the inputs of the side-by-side tests with GNU patch.
#include <random>
#include <string>
#include <vector>

namespace apexnpu::patch {

class CaseMaker {
 public:
  explicit CaseMaker(unsigned seed) : rng_(seed) {}

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string line() {
    const std::string eol = pick(0, 9) == 0 ? "\r\n" : "\n";
    return "line " + std::to_string(pick(0, 40)) + eol;  // few distinct lines: repeats happen
  }

  std::vector<std::string> file(int lo, int hi) {
    std::vector<std::string> lines(pick(lo, hi));
    for (auto& l : lines) l = line();
    if (!lines.empty() && pick(0, 4) == 0) lines.back().pop_back();  // no final newline
    return lines;
  }

  // A few random replacements, insertions and deletions.
  void edit(std::vector<std::string>& lines, int max_ops) {
    edit(lines, max_ops, [&] { return line(); });
  }

  // The same, with the replaced and inserted lines made by `new_line()`.
  template <typename NewLine>
  void edit(std::vector<std::string>& lines, int max_ops, NewLine&& new_line) {
    for (int ops = pick(1, max_ops); ops > 0; --ops) {
      const int at = pick(0, static_cast<int>(lines.size()));
      switch (pick(0, 2)) {
        case 0:
          if (at < static_cast<int>(lines.size())) lines[at] = new_line();
          break;
        case 1:
          for (int k = pick(1, 3); k > 0; --k) lines.insert(lines.begin() + at, new_line());
          break;
        default:
          if (at < static_cast<int>(lines.size())) lines.erase(lines.begin() + at);
      }
    }
    // Only the last line may lack its newline.
    for (std::size_t i = 0; i + 1 < lines.size(); ++i)
      if (lines[i].empty() || lines[i].back() != '\n') lines[i] += "\n";
  }

 private:
  std::mt19937 rng_;
};

inline std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l;
  return s;
}

}  // namespace apexnpu::patch
