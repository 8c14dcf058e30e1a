#pragma once
// GNU patch -p1 run on a tree written to a fresh directory, so that tests can compare our
// result with GNU's: its exit code, what it said, and the files it left.
#include <map>
#include <string>

#include "core/file_tree.h"
#include "support/test_support.h"

namespace apexnpu::patch {

struct GnuOutcome {
  int exit_code = -1;
  std::string said;                          // stdout and stderr
  std::map<std::string, std::string> files;  // test::snapshot of the directory afterwards
};

// Writes `tree` to <tmp>/<name>, applies `patch_text` with `patch -p1 --batch --forward` there.
GnuOutcome run_gnu_patch(const test::TempDir& tmp, const std::string& name, const FileTree& tree,
                         const std::string& patch_text);

// A tree in test::snapshot's form ("*" before an executable's content).
std::map<std::string, std::string> snapshot_of(const FileTree& tree);

}  // namespace apexnpu::patch

namespace apexnpu::patch {

// Our result for the same input: a parse error (its message), or what apply_patch gave.
struct SideBySide {
  GnuOutcome gnu;
  std::string our_error;  // the parse error, empty when the patch parsed
  bool we_applied = false;
  std::map<std::string, std::string> our_files;  // when it parsed: the tree apply_patch left
};

// Runs both and checks the rule of every side-by-side test: where GNU applies (exit 0) we apply
// to the same files; where GNU does not, we do not either (a parse error or a failed apply).
SideBySide expect_same_as_gnu(const test::TempDir& tmp, const std::string& name, const FileTree& tree,
                              const std::string& patch_text);

}  // namespace apexnpu::patch
