// Odd input gets a clear answer (issue 26, cases 10, 11, 13, 14): make-patch refuses symlinks by
// name instead of breaking the round trip; build refuses a tree gen did not make; empty option
// values are bad usage, never "the default"; each message says what is wrong and where.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class OddInput : public ::testing::Test {
 protected:
  OddInput() : upstream(tmp.path()) { write_file(tmp / "empty.patch", ""); }

  RunResult apexnpu(const std::vector<std::string>& args) { return run_apexnpu(args, tmp / "home"); }

  TempDir tmp;
  ApexLikeUpstream upstream;
};

// Case 10: make-patch used to copy links into overlay/, which gen then refused.
TEST_F(OddInput, MakePatchRefusesSymlinksNamingEach) {
  const stdfs::path tree = tmp / "edited";
  copy_work_tree(upstream.at_first, tree);
  stdfs::create_directory_symlink("../tools", tree / "apex" / "tools-link");  // added
  stdfs::remove(tree / "README");
  stdfs::create_symlink("apex/__init__.py", tree / "README");  // changed
  const RunResult r = apexnpu({"make-patch", "--upstream", upstream.repo.dir().string(), "--ref",
                               upstream.first, "--tree", tree.string(), "-o", (tmp / "patches").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find((tree / "apex/tools-link").string() + " -> ../tools"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find((tree / "README").string() + " -> apex/__init__.py"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--exclude"), std::string::npos) << r.err;
  EXPECT_FALSE(stdfs::exists(tmp / "patches"));
  // Left out, the rest of the edit round-trips.
  const RunResult excluded = apexnpu(
      {"make-patch", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first, "--tree",
       tree.string(), "-o", (tmp / "patches").string(), "--exclude", "tools-link", "--exclude", "README"});
  EXPECT_EQ(excluded.exit_code, 0) << excluded.err;
}

// Case 11: gen records in its tree what the tree was made from; build refuses a tree without it.
TEST_F(OddInput, GenRecordsWhatItsTreeWasMadeFrom) {
  write_file(tmp / "overlay" / "apex/npu/extra.py", "EXTRA = 1\n");
  const RunResult r = apexnpu({"gen", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
                               "--patch", (tmp / "empty.patch").string(), "--overlay",
                               (tmp / "overlay").string(), "-o", (tmp / "tree").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto marker = nlohmann::json::parse(read_file(tmp / "tree" / ".apexnpu-gen.json"));
  EXPECT_EQ(marker["upstream"]["commit"], upstream.first);
  EXPECT_EQ(marker["upstream"]["url"], upstream.repo.dir().string());
  // sha256 of the empty patch
  EXPECT_EQ(marker["patch_sha256"], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(marker["overlay_digest"].get<std::string>().size(), 64u);
  EXPECT_EQ(marker["failed_hunks"], 0);
  // make-patch of the tree leaves the record out: nothing changed, nothing added.
  const RunResult made =
      apexnpu({"--json", "make-patch", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
               "--tree", (tmp / "tree").string(), "-o", (tmp / "patches").string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(nlohmann::json::parse(made.out)["overlay_files"], nlohmann::json::array({"apex/npu/extra.py"}));
  EXPECT_FALSE(stdfs::exists(tmp / "patches" / "overlay" / ".apexnpu-gen.json"));
}

TEST_F(OddInput, BuildRefusesATreeGenDidNotMake) {
  // One empty apex/__init__.py; and upstream as it is, unpatched.
  write_file(tmp / "bare" / "apex" / "__init__.py", "");
  copy_work_tree(upstream.at_first, tmp / "unpatched");
  for (const char* tree : {"bare", "unpatched"}) {
    const RunResult r = apexnpu({"build", "--tree", (tmp / tree).string(), "-o", (tmp / "dist").string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("was not made by `apexnpu gen`"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--allow-foreign-tree"), std::string::npos) << r.err;
    EXPECT_FALSE(stdfs::exists(tmp / "dist"));
  }
  write_file(tmp / "damaged" / "apex" / "__init__.py", "");
  write_file(tmp / "damaged" / ".apexnpu-gen.json", "{\"schema_version\": 1");
  const RunResult damaged =
      apexnpu({"build", "--tree", (tmp / "damaged").string(), "-o", (tmp / "dist").string()});
  EXPECT_EQ(damaged.exit_code, 1);
  EXPECT_NE(damaged.err.find((tmp / "damaged" / ".apexnpu-gen.json").string() + " is damaged"),
            std::string::npos)
      << damaged.err;
}

// Case 13: an empty value is bad usage, named; `--upstream ''` no longer means the default URL
// (and the network).
TEST_F(OddInput, EmptyValuesAreRefused) {
  const std::string repo = upstream.repo.dir().string();
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"--upstream", {"gen", "--upstream", "", "--ref", upstream.first, "--check"}},
      {"--ref", {"gen", "--upstream", repo, "--ref", "", "--check"}},
      {"--output", {"gen", "--upstream", repo, "--ref", upstream.first, "-o", ""}},
      {"--patch", {"gen", "--upstream", repo, "--ref", upstream.first, "--patch", "", "--check"}},
      {"--overlay", {"gen", "--upstream", repo, "--ref", upstream.first, "--overlay", "", "--check"}},
      {"--clone-cache", {"gen", "--upstream", repo, "--ref", upstream.first, "--clone-cache", "", "--check"}},
      {"--tree", {"make-patch", "--upstream", repo, "--tree", ""}},
      {"--exclude", {"make-patch", "--upstream", repo, "--tree", repo, "--exclude", ""}},
      {"--python", {"build", "--python", "", "--tree", repo}},
      {"--tree", {"build", "--tree", ""}},
      {"--object-cache", {"build", "--object-cache", "", "--tree", repo}},
      {"--version-label", {"build", "--version-label", "", "--tree", repo}},
      {"PATH", {"verify", ""}},
  };
  for (const auto& [option, args] : cases) {
    const RunResult r = apexnpu(args);
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
  }
}

// Case 14: a version of another Python is said to be that, not a badly written version.
TEST_F(OddInput, AnotherPythonMajorIsNamedAsSuch) {
  for (const char* version : {"2.7", "4.0"}) {
    const RunResult r = apexnpu({"build", std::string("--python=") + version, "--tree", (tmp / "t").string(),
                                 "--allow-foreign-tree", "-o", (tmp / "dist").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(std::string("Python ") + version + " is not supported"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("3.7 to 3.13"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace apexnpu::test
