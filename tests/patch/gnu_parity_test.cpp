// Side by side with GNU patch 2.7 on seeded random cases: wherever GNU patch -p1 applies a
// patch we produce the same bytes, and wherever it fails we fail. Cases cover CRLF lines,
// missing final newlines, repeated lines, and inputs shifted or edited so hunks land at an
// offset, need fuzz, or fail.
#include <gtest/gtest.h>

#include "patch/patch_engine.h"
#include "random_lines.h"
#include "support/test_support.h"

namespace apexnpu::patch {
namespace {

using test::RunResult;
using test::TempDir;

TEST(GnuParity, RandomPatchesApplyExactlyAsGnuPatchDoes) {
  TempDir tmp;
  CaseMaker make(20261122);
  int agreed_success = 0, agreed_failure = 0, offsets = 0, fuzzed = 0;
  for (int n = 0; n < 300; ++n) {
    const std::vector<std::string> original = make.file(8, 60);
    std::vector<std::string> edited = original;
    make.edit(edited, 4);
    const std::string old_text = join(original), new_text = join(edited);
    if (old_text == new_text) continue;

    std::string patch_text;
    if (n % 2 == 0) {
      patch_text = write_patch({{"f", {old_text}}}, {{"f", {new_text}}}, {"f"});
    } else {
      test::write_file(tmp / "a/f", old_text);
      test::write_file(tmp / "b/f", new_text);
      patch_text = test::run_process("diff", {"-u", "a/f", "b/f"}, {"LC_ALL=C"}, tmp.path()).out;
    }
    std::vector<std::string> input_lines = original;
    if (n % 5 != 0) make.edit(input_lines, 3);  // perturb most inputs
    const std::string input = join(input_lines);

    const std::filesystem::path dir = tmp / ("case" + std::to_string(n));
    test::write_file(dir / "f", input);
    test::write_file(tmp / "p.patch", patch_text);
    const RunResult gnu = test::run_process("patch",
                                            {"-p1", "--batch", "--forward", "--no-backup-if-mismatch",
                                             "--reject-file=-", "-s", "-i", (tmp / "p.patch").string()},
                                            {"LC_ALL=C"}, dir);
    const ApplyResult ours = apply_patch(parse_patch(patch_text, "p.patch"), {{"f", {input}}});

    SCOPED_TRACE("case " + std::to_string(n) + "\n--- patch:\n" + patch_text + "--- input:\n" + input);
    if (gnu.exit_code == 0) {
      ASSERT_TRUE(ours.ok) << "GNU patch applied it, we did not: " << ours.rejects;
      ASSERT_EQ(ours.tree.at("f").content, test::read_file(dir / "f"));
      ++agreed_success;
      offsets += ours.files[0].status == FileStatus::offset;
      fuzzed += ours.files[0].status == FileStatus::fuzz;
    } else {
      ASSERT_FALSE(ours.ok) << "GNU patch failed (" << gnu.out << gnu.err << "), we applied it";
      ++agreed_failure;
    }
    std::filesystem::remove_all(dir);
  }
  // The generator must actually exercise every outcome.
  EXPECT_GT(agreed_success, 50);
  EXPECT_GT(agreed_failure, 10);
  EXPECT_GT(offsets, 5);
  EXPECT_GT(fuzzed, 5);
  std::cout << "GNU parity: " << agreed_success << " applied (" << offsets << " at an offset, " << fuzzed
            << " with fuzz), " << agreed_failure << " failed alike\n";
}

TEST(WriterRoundTrip, RandomTreesRoundTripThroughOurApplierAndGitApply) {
  TempDir tmp;
  CaseMaker make(7);
  for (int n = 0; n < 200; ++n) {
    std::vector<std::string> a = make.file(0, 50), b = a;
    make.edit(b, 6);
    FileTree before{{"d/f", {join(a)}}}, after{{"d/f", {join(b)}}};
    const std::string patch_text = write_patch(before, after, {"d/f"});
    const ApplyResult r = apply_patch(parse_patch(patch_text, "w.patch"), before);
    ASSERT_TRUE(r.ok) << patch_text;
    ASSERT_EQ(r.tree, after) << patch_text;
    EXPECT_EQ(write_patch(before, after, {"d/f"}), patch_text) << "deterministic";
    if (n % 10 == 0 && !patch_text.empty()) {
      const std::filesystem::path dir = tmp / ("git" + std::to_string(n));
      test::write_file(dir / "d/f", join(a));
      test::write_file(dir / "w.patch", patch_text);
      const RunResult git = test::run_process("git", {"apply", "w.patch"}, {}, dir);
      ASSERT_EQ(git.exit_code, 0) << git.err << patch_text;
      ASSERT_EQ(test::read_file(dir / "d/f"), join(b));
    }
  }
}

}  // namespace
}  // namespace apexnpu::patch
