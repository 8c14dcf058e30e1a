// --tree given as a symlink to a directory, and a tree whose apex/ is one (issue 44, point 8):
// ordinary in CI checkouts and volumes, they are read through like the directories they point
// to. The rule that outputs never touch inputs holds where the links point.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class SymlinkedTree : public ::testing::Test {
 protected:
  SymlinkedTree() : upstream(tmp.path()) {
    write_file(tmp / "empty.patch", "");
    write_file(tmp / "overlay" / "apex/npu/extra.py", "EXTRA = 1\n");
    const RunResult r = run_apexnpu(
        gen_args(upstream, upstream.first, tmp / "empty.patch", tmp / "overlay", tree), tmp / "home");
    if (r.exit_code != 0) throw std::runtime_error("gen failed: " + r.err);
    write_file(tree / "apex/__init__.py", read_file(tree / "apex/__init__.py") + "EDITED = 1\n");
  }

  RunResult make_patch(const stdfs::path& from, const stdfs::path& out) {
    return run_apexnpu({"make-patch", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
                        "--tree", from.string(), "-o", out.string()},
                       tmp / "home");
  }
  RunResult build(const stdfs::path& from, const stdfs::path& out) {
    return run_apexnpu({"--json", "build", "--python=/usr/bin/python3", "--tree", from.string(), "-o",
                        out.string(), "--wheel", "--no-emulator", "--object-cache", cache.string(), "-j2"},
                       tmp / "home");
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  stdfs::path tree = tmp / "tree";
  stdfs::path cache = stdfs::path(APEXNPU_BUILD_DIR) / "test-object-cache";
};

TEST_F(SymlinkedTree, MakePatchReadsATreeLinkAndAnApexLink) {
  stdfs::create_directory_symlink(tree, tmp / "tree-link");
  const RunResult direct = make_patch(tree, tmp / "patches-direct");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  const RunResult linked = make_patch(tmp / "tree-link", tmp / "patches-linked");
  ASSERT_EQ(linked.exit_code, 0) << linked.err;
  EXPECT_EQ(snapshot(tmp / "patches-linked"), snapshot(tmp / "patches-direct"));
  EXPECT_NE(read_file(tmp / "patches-linked" / "npu.patch").find("+EDITED = 1"), std::string::npos);
  // Its apex/ a link to a package kept elsewhere: the same patch and overlay.
  stdfs::rename(tree / "apex", tmp / "volume-apex");
  stdfs::create_directory_symlink(tmp / "volume-apex", tree / "apex");
  const RunResult apex_linked = make_patch(tmp / "tree-link", tmp / "patches-apex-linked");
  ASSERT_EQ(apex_linked.exit_code, 0) << apex_linked.err;
  EXPECT_EQ(snapshot(tmp / "patches-apex-linked"), snapshot(tmp / "patches-direct"));
  const RunResult into_apex = make_patch(tmp / "tree-link", tmp / "volume-apex" / "patches");
  EXPECT_EQ(into_apex.exit_code, 2) << into_apex.err;
  EXPECT_FALSE(stdfs::exists(tmp / "volume-apex" / "patches"));
  // -o inside the directory the link points to is inside the tree.
  const RunResult inside = make_patch(tmp / "tree-link", tree / "patches");
  EXPECT_EQ(inside.exit_code, 2) << inside.err;
  EXPECT_NE(inside.err.find("lies inside"), std::string::npos) << inside.err;
  EXPECT_FALSE(stdfs::exists(tree / "patches"));
}

TEST_F(SymlinkedTree, BuildReadsATreeLinkAndAnApexLink) {
  // The tree reached through a link, its apex/ a link to a package kept elsewhere (a volume).
  stdfs::rename(tree / "apex", tmp / "volume-apex");
  stdfs::create_directory_symlink(tmp / "volume-apex", tree / "apex");
  stdfs::create_directory_symlink(tree, tmp / "tree-link");
  const RunResult r = build(tmp / "tree-link", tmp / "dist");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto result = nlohmann::json::parse(r.out);
  const auto manifest = nlohmann::json::parse(read_file(result["manifest"].get<std::string>()));
  EXPECT_EQ(manifest["source"]["tree"], "--tree");
  EXPECT_EQ(manifest["source"]["tree_modified"], true);  // the edit above, read through the link
  const RunResult listed =
      run_process("/usr/bin/python3", {"-m", "zipfile", "-l", result["wheel"].get<std::string>()});
  EXPECT_NE(listed.out.find("apex/optimizers/__init__.py"), std::string::npos) << listed.out;

  // -o where apex/ points is refused, as -o inside the tree is.
  const RunResult into_apex = build(tmp / "tree-link", tmp / "volume-apex" / "dist");
  EXPECT_EQ(into_apex.exit_code, 2) << into_apex.err;
  EXPECT_NE(into_apex.err.find("apex/"), std::string::npos) << into_apex.err;
  EXPECT_FALSE(stdfs::exists(tmp / "volume-apex" / "dist"));
}

}  // namespace
}  // namespace apexnpu::test
