// build describes only what it was given (issue 26, case 11) and one -o takes several builds
// (case 14): the manifest names the upstream, patch and overlay gen recorded in the tree, and
// whether the tree was edited since; two builds into one -o at once both succeed, and -o holds
// one of them whole.
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class BuildOutput : public ::testing::Test {
 protected:
  BuildOutput() : upstream(tmp.path()) {
    write_file(tmp / "empty.patch", "");
    write_file(tmp / "overlay" / "apex/npu/extra.py", "EXTRA = 1\n");
    const RunResult r = run_apexnpu(
        gen_args(upstream, upstream.first, tmp / "empty.patch", tmp / "overlay", tree), tmp / "home");
    if (r.exit_code != 0) throw std::runtime_error("gen failed: " + r.err);
  }

  RunResult build(const stdfs::path& out, const std::vector<std::string>& env = {}) {
    return run_apexnpu({"--json", "build", "--python=/usr/bin/python3", "--tree", tree.string(), "-o",
                        out.string(), "--wheel", "--no-emulator", "--object-cache", cache.string(), "-j2"},
                       tmp / "home", {}, env);
  }

  nlohmann::json manifest_of(const RunResult& r) {
    return nlohmann::json::parse(read_file(nlohmann::json::parse(r.out)["manifest"].get<std::string>()));
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  stdfs::path tree = tmp / "tree";
  stdfs::path cache = stdfs::path(APEXNPU_BUILD_DIR) / "test-object-cache";
};

TEST_F(BuildOutput, TheManifestNamesWhatTheTreeWasMadeFrom) {
  const auto marker = nlohmann::json::parse(read_file(tree / ".apexnpu-gen.json"));
  const RunResult r = build(tmp / "dist");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto source = manifest_of(r)["source"];
  EXPECT_EQ(manifest_of(r)["schema_version"], 3);
  EXPECT_EQ(source["tree"], "--tree");
  EXPECT_EQ(source["upstream_url"], upstream.repo.dir().string());
  EXPECT_EQ(source["upstream_commit"], upstream.first);
  EXPECT_EQ(source["patch_sha256"], marker["patch_sha256"]);
  EXPECT_EQ(source["overlay_digest"], marker["overlay_digest"]);
  EXPECT_EQ(source["tree_modified"], false);

  // Edited since gen wrote it: said so; build leftovers are no edit.
  write_file(tree / "apex" / "__pycache__" / "x.pyc", "junk");
  const RunResult leftovers = build(tmp / "dist-leftovers");
  ASSERT_EQ(leftovers.exit_code, 0) << leftovers.err;
  EXPECT_EQ(manifest_of(leftovers)["source"]["tree_modified"], false);
  write_file(tree / "apex" / "__init__.py", "# edited by hand\n");
  const RunResult edited = build(tmp / "dist-edited");
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  EXPECT_EQ(manifest_of(edited)["source"]["tree_modified"], true);
  EXPECT_EQ(manifest_of(edited)["source"]["patch_sha256"], marker["patch_sha256"]);
}

TEST_F(BuildOutput, TwoBuildsIntoOneOutputBothSucceedAndOneIsThereWhole) {
  const stdfs::path out = tmp / "dist";
  ASSERT_EQ(build(tmp / "alone-a", {"SOURCE_DATE_EPOCH=1000000000"}).exit_code, 0);
  ASSERT_EQ(build(tmp / "alone-b", {"SOURCE_DATE_EPOCH=2000000000"}).exit_code, 0);
  const auto a = snapshot(tmp / "alone-a"), b = snapshot(tmp / "alone-b");
  for (int round = 0; round < 3; ++round) {
    auto first = std::async(std::launch::async, [&] { return build(out, {"SOURCE_DATE_EPOCH=1000000000"}); });
    auto second =
        std::async(std::launch::async, [&] { return build(out, {"SOURCE_DATE_EPOCH=2000000000"}); });
    const RunResult ra = first.get(), rb = second.get();
    EXPECT_EQ(ra.exit_code, 0) << ra.err;
    EXPECT_EQ(rb.exit_code, 0) << rb.err;
    const auto now = snapshot(out);
    EXPECT_TRUE(now == a || now == b) << "round " << round << ": -o holds a mix of two builds";
    EXPECT_EQ(leftovers_beside(out), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace apexnpu::test
