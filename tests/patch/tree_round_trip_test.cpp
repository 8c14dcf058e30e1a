// Whole trees round trip: several files created (non-empty and empty), removed, edited, made
// executable or not, with CRLF lines and missing final newlines; write_patch's output applies
// through our applier to exactly the new tree, and through `git apply` and GNU patch -p1 in real
// directories to the same bytes and modes.
#include <gtest/gtest.h>

#include <random>

#include "patch/lines.h"
#include "patch/patch_engine.h"
#include "support/test_support.h"

namespace apexnpu::patch {
namespace {

class TreeMaker {
 public:
  explicit TreeMaker(unsigned seed) : rng_(seed) {}
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string content() {
    std::string s;
    for (int n = pick(1, 30); n > 0; --n)
      s += "row " + std::to_string(pick(0, 12)) + (pick(0, 7) == 0 ? "\r\n" : "\n");
    if (pick(0, 4) == 0) s.pop_back();
    return s;
  }

  std::string edited(std::string s) {
    std::vector<std::string> lines;
    for (const std::string_view line : split_lines(s)) lines.emplace_back(line);
    for (int n = pick(1, 4); n > 0; --n) {
      const int at = pick(0, static_cast<int>(lines.size()));
      if (pick(0, 1) == 0 || lines.empty()) {
        lines.insert(lines.begin() + at, "new " + std::to_string(pick(0, 99)) + "\n");
      } else {
        lines.erase(lines.begin() + std::min<int>(at, static_cast<int>(lines.size()) - 1));
      }
    }
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      out += lines[i];
      if (i + 1 < lines.size() && out.back() != '\n') out += "\n";
    }
    return out;
  }

  FileKind kind() { return pick(0, 3) == 0 ? FileKind::executable : FileKind::regular; }

 private:
  std::mt19937 rng_;
};

void materialize(const FileTree& tree, const test::stdfs::path& root) {
  for (const auto& [path, entry] : tree)
    test::write_file(root / path, entry.content, entry.kind == FileKind::executable);
}

std::map<std::string, std::string> expected_snapshot(const FileTree& tree) {
  std::map<std::string, std::string> out;
  for (const auto& [path, entry] : tree)
    out[path] = (entry.kind == FileKind::executable ? "*" : "") + entry.content;
  return out;
}

TEST(TreeRoundTrip, RandomTreesApplyThroughOursGitApplyAndGnuPatch) {
  test::TempDir tmp;
  TreeMaker make(424242);
  int created = 0, removed = 0, mode_changes = 0;
  for (int n = 0; n < 40; ++n) {
    FileTree before, after;
    std::vector<std::string> paths;
    for (int f = 0; f < 6; ++f) {
      const std::string path = "src/d" + std::to_string(f % 3) + "/f" + std::to_string(f);
      paths.push_back(path);
      switch (make.pick(0, 5)) {
        case 0: {  // created, sometimes empty
          after[path] = {make.pick(0, 3) == 0 ? "" : make.content(), make.kind()};
          ++created;
          break;
        }
        case 1:  // removed (non-empty: GNU patch cannot remove an empty file from a diff)
          before[path] = {make.content(), make.kind()};
          ++removed;
          break;
        case 2: {  // mode change only, or with edits
          const std::string c = make.content();
          before[path] = {c, FileKind::regular};
          after[path] = {make.pick(0, 1) ? c : make.edited(c), FileKind::executable};
          ++mode_changes;
          break;
        }
        default: {
          const std::string c = make.content();
          const FileKind k = make.kind();
          before[path] = {c, k};
          after[path] = {make.edited(c), k};
        }
      }
    }
    const std::string text = write_patch(before, after, paths);
    SCOPED_TRACE("case " + std::to_string(n) + "\n" + text);
    const ApplyResult ours = apply_patch(parse_patch(text, "t.patch"), before);
    ASSERT_TRUE(ours.ok) << ours.rejects;
    ASSERT_EQ(ours.tree, after);

    const auto git_dir = tmp / ("git" + std::to_string(n));
    materialize(before, git_dir);
    test::write_file(tmp / "t.patch", text);
    ASSERT_EQ(test::run_process("git", {"init", "-q"}, {}, git_dir).exit_code, 0);
    const auto check =
        test::run_process("git", {"apply", "--check", (tmp / "t.patch").string()}, {}, git_dir);
    ASSERT_EQ(check.exit_code, 0) << check.err;
    const auto git = test::run_process("git", {"apply", (tmp / "t.patch").string()}, {}, git_dir);
    ASSERT_EQ(git.exit_code, 0) << git.err;
    test::stdfs::remove_all(git_dir / ".git");
    EXPECT_EQ(test::snapshot(git_dir), expected_snapshot(after)) << "git apply";

    const auto gnu_dir = tmp / ("gnu" + std::to_string(n));
    materialize(before, gnu_dir);
    test::stdfs::create_directories(gnu_dir);
    const auto gnu = test::run_process("patch",
                                       {"-p1", "--batch", "--forward", "--no-backup-if-mismatch",
                                        "--reject-file=-", "-s", "-i", (tmp / "t.patch").string()},
                                       {"LC_ALL=C"}, gnu_dir);
    ASSERT_EQ(gnu.exit_code, 0) << gnu.out << gnu.err;
    EXPECT_EQ(test::snapshot(gnu_dir), expected_snapshot(after)) << "GNU patch";
    test::stdfs::remove_all(git_dir);
    test::stdfs::remove_all(gnu_dir);
  }
  EXPECT_GT(created, 10);
  EXPECT_GT(removed, 10);
  EXPECT_GT(mode_changes, 10);
}

}  // namespace
}  // namespace apexnpu::patch
