// `cmake --install` gives a tool that works from any directory: it finds its bundled patches,
// overlay, templates, runtime sources and the torch_npu emulator package beside itself.
#include <gtest/gtest.h>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

TEST(Install, TheInstalledToolFindsItsDataFromAnyDirectory) {
  TempDir tmp;
  const RunResult install =
      run_process("cmake", {"--install", APEXNPU_BUILD_DIR, "--prefix", (tmp / "prefix").string()});
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  const stdfs::path share = tmp / "prefix/share/apexnpu";
  EXPECT_TRUE(stdfs::exists(share / "patches/npu.patch"));
  EXPECT_TRUE(stdfs::exists(share / "runtime/build.json"));
  EXPECT_TRUE(stdfs::exists(share / "templates/wheel/METADATA-emulator.in"));
  EXPECT_TRUE(stdfs::exists(share / "torch_npu/__init__.py"));
  EXPECT_TRUE(stdfs::exists(share / "torch_npu/contrib/transfer_to_npu.py"));

  FixtureRepo repo(tmp / "upstream");
  repo.write("README", "upstream\n");
  repo.commit("upstream");
  stdfs::create_directories(tmp / "elsewhere");
  const RunResult gen =
      run_process((tmp / "prefix/bin/apexnpu").string(),
                  {"--json", "gen", "--upstream", repo.dir().string(), "--ref", "HEAD", "--check"},
                  {"APEXNPU_DATA_DIR=", "HOME=" + tmp.path().string()}, tmp / "elsewhere");
  // Whether the bundled patch fits this toy upstream or not, the patch used is the installed one.
  const std::string used = "\"patch\": \"" + (share / "patches/npu.patch").string() + "\"";
  EXPECT_NE(gen.out.find(used), std::string::npos) << gen.out << gen.err;
}

}  // namespace
}  // namespace apexnpu::test
