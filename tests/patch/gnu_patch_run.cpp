#include "gnu_patch_run.h"

namespace apexnpu::patch {

GnuOutcome run_gnu_patch(const test::TempDir& tmp, const std::string& name, const FileTree& tree,
                         const std::string& patch_text) {
  const test::stdfs::path dir = tmp / name;
  test::stdfs::create_directories(dir);
  for (const auto& [path, entry] : tree)
    test::write_file(dir / path, entry.content, entry.kind == FileKind::executable);
  const test::stdfs::path patch_file = tmp / (name + ".patch");
  test::write_file(patch_file, patch_text);
  const test::RunResult run = test::run_process("patch",
                                                {"-p1", "--batch", "--forward", "--no-backup-if-mismatch",
                                                 "--reject-file=-", "-i", patch_file.string()},
                                                {"LC_ALL=C"}, dir);
  return {run.exit_code, run.out + run.err, test::snapshot(dir)};
}

std::map<std::string, std::string> snapshot_of(const FileTree& tree) {
  std::map<std::string, std::string> files;
  for (const auto& [path, entry] : tree)
    files[path] = (entry.kind == FileKind::executable ? "*" : "") + entry.content;
  return files;
}

}  // namespace apexnpu::patch

#include <gtest/gtest.h>

#include "core/error.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {

SideBySide expect_same_as_gnu(const test::TempDir& tmp, const std::string& name, const FileTree& tree,
                              const std::string& patch_text) {
  SideBySide both;
  both.gnu = run_gnu_patch(tmp, name, tree, patch_text);
  try {
    const ApplyResult ours = apply_patch(parse_patch(patch_text, name + ".patch"), tree);
    both.we_applied = ours.ok;
    both.our_files = snapshot_of(ours.tree);
  } catch (const Error& e) {
    both.our_error = e.what();
  }
  SCOPED_TRACE(name + "\n--- patch:\n" + patch_text + "--- GNU said:\n" + both.gnu.said);
  if (both.gnu.exit_code == 0) {
    EXPECT_TRUE(both.we_applied) << "GNU applied it, we did not: " << both.our_error;
    EXPECT_EQ(both.our_files, both.gnu.files);
  } else {
    EXPECT_FALSE(both.we_applied) << "GNU refused it (exit " << both.gnu.exit_code << "), we applied it";
  }
  return both;
}

}  // namespace apexnpu::patch
