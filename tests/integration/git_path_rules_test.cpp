// git's own path rules apply to every name gen writes (issue 44, point 9): ".git" in any case,
// its NTFS 8.3 spelling "git~1", HFS+ spellings with ignorable code points, a ".gitmodules"
// symlink, names with control characters. Whether the name comes from the patch, the overlay or
// upstream, gen refuses it naming the file before anything is written, and a tree holding one
// never reaches a wheel.
#include <gtest/gtest.h>

#include "integration/fixture.h"
#include "support/pack_writer.h"

namespace apexnpu::test {
namespace {

constexpr int kCommit = 1, kTree = 2, kBlob = 3;

std::string raw_id(const git_oid& id) { return std::string(reinterpret_cast<const char*>(id.id), 20); }

std::string hex(const git_oid& id) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, &id);
  return text;
}

// A patch creating `path` (one line).
std::string creating(const std::string& path) {
  return "diff -Nur a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path +
         "\n@@ -0,0 +1 @@\n+X = 1\n";
}

class GitPathRules : public ::testing::Test {
 protected:
  GitPathRules() : upstream(tmp.path()) {
    write_file(tmp / "empty.patch", "");
    stdfs::create_directories(tmp / "overlay");
  }

  RunResult gen(const std::string& upstream_dir, const std::string& ref, const stdfs::path& patch,
                const std::string& out = "out") {
    return run_apexnpu({"gen", "--upstream", upstream_dir, "--ref", ref, "--patch", patch.string(),
                        "--overlay", (tmp / "overlay").string(), "-o", (tmp / out).string()},
                       tmp / "home");
  }

  void expect_refused(const RunResult& r, const std::vector<std::string>& says) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    for (const auto& s : says)
      EXPECT_NE(r.err.find(s), std::string::npos) << "no \"" << s << "\" in " << r.err;
    EXPECT_FALSE(stdfs::exists(tmp / "out"));
  }

  // A bare repository holding one commit of a tree with a.txt and `entry` (mode, name, blob).
  std::string crafted_upstream(const std::string& mode, const std::string& name, const std::string& content,
                               bool in_directory) {
    git_libgit2_init();
    const stdfs::path repo = tmp / "crafted.git";
    stdfs::remove_all(repo);
    for (const char* dir : {"objects/info", "objects/pack", "refs/heads"})
      stdfs::create_directories(repo / dir);
    write_file(repo / "HEAD", "ref: refs/heads/main\n");
    write_file(repo / "config", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n");
    const stdfs::path objects = repo / "objects";
    const git_oid a = write_loose(objects, kBlob, "A = 1\n");
    const git_oid blob = write_loose(objects, kBlob, content);
    std::string odd = mode + " " + name + '\0' + raw_id(blob);
    if (in_directory) {  // "<dir>/<file>": the file in a tree of its own
      const std::size_t slash = name.find('/');
      const git_oid sub =
          write_loose(objects, kTree, mode + " " + name.substr(slash + 1) + '\0' + raw_id(blob));
      odd = "40000 " + name.substr(0, slash) + '\0' + raw_id(sub);
    }
    // Entries sorted by name: every odd name here starts with '.', before "a.txt".
    const git_oid tree = write_loose(objects, kTree, odd + "100644 a.txt" + '\0' + raw_id(a));
    const std::string commit =
        hex(write_loose(objects, kCommit,
                        "tree " + hex(tree) +
                            "\nauthor A <a@example.invalid> 1700000000 +0000\n"
                            "committer A <a@example.invalid> 1700000000 +0000\n\nx\n"));
    write_file(repo / "refs/heads/main", commit + "\n");
    git_libgit2_shutdown();
    return repo.string();
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
};

// From the patch: every spelling of .git, refused where the patch names it; a control character
// (which the patch parser decodes, as GNU patch does) refused before gen writes it.
TEST_F(GitPathRules, APatchCreatingANameGitRefusesIsRefused) {
  for (const std::string& path :
       {std::string("apex/.GIT/config"), std::string("apex/.Git/hooks/post-checkout"),
        std::string("apex/GIT~1/config"), std::string("apex/.git. /config"),
        std::string("apex/.g\u200cit/config"), std::string("apex/\xef\xbb\xbf.git/x")}) {
    SCOPED_TRACE(path);
    write_file(tmp / "bad.patch", creating(path));
    expect_refused(gen(upstream.repo.dir().string(), upstream.first, tmp / "bad.patch"),
                   {"bad.patch:", "unsafe file name"});
  }
  write_file(tmp / "bad.patch", "--- /dev/null\n+++ \"b/apex/new\\nline.py\"\n@@ -0,0 +1 @@\n+X = 1\n");
  expect_refused(gen(upstream.repo.dir().string(), upstream.first, tmp / "bad.patch"),
                 {"\"apex/new\\nline.py\" (patched by " + (tmp / "bad.patch").string(), "control character"});
}

// From the overlay: refused naming the overlay's file.
TEST_F(GitPathRules, AnOverlayFileGitRefusesIsRefusedNamingIt) {
  write_file(tmp / "overlay" / "apex/.GIT/config", "[core]\n");
  expect_refused(gen(upstream.repo.dir().string(), upstream.first, tmp / "empty.patch"),
                 {(tmp / "overlay" / "apex/.GIT/config").string(), ".git"});
  stdfs::remove_all(tmp / "overlay" / "apex");
  write_file(tmp / "overlay" / "apex/new\nline.py", "X = 1\n");
  expect_refused(gen(upstream.repo.dir().string(), upstream.first, tmp / "empty.patch"),
                 {"control character", "\\n"});
}

// From upstream: a crafted repository with a .GIT directory, or a .gitmodules symlink (the check
// is in the step build's in-memory gen shares, so no wheel holds such a name either).
TEST_F(GitPathRules, UpstreamNamesGitRefusesAreRefusedBeforeATreeOrAWheel) {
  std::string repo = crafted_upstream("100644", ".GIT/config", "[core]\n", true);
  expect_refused(gen(repo, "main", tmp / "empty.patch"), {"upstream's file .GIT/config", ".git"});

  repo = crafted_upstream("120000", ".gitmodules", "a.txt", false);
  expect_refused(gen(repo, "main", tmp / "empty.patch"), {"upstream's file .gitmodules", "symlink"});
  repo = crafted_upstream("120000", ".GITMODULES", "a.txt", false);
  expect_refused(gen(repo, "main", tmp / "empty.patch"), {".GITMODULES", "symlink"});
  // A regular .gitmodules file (Apex has one) is fine.
  repo = crafted_upstream("100644", ".gitmodules", "[submodule \"x\"]\n", false);
  const RunResult regular = gen(repo, "main", tmp / "empty.patch");
  EXPECT_EQ(regular.exit_code, 0) << regular.err;
}

// Upstream names with a newline or a tab (libgit2 commits them): gen names the file, escaped.
TEST_F(GitPathRules, UpstreamNamesWithControlCharactersAreRefused) {
  for (const std::string name : {"new\nline.txt", "tab\tname.txt"}) {
    FixtureRepo repo(tmp / ("odd-" + std::to_string(name.find('\t'))));
    repo.write("README", "x\n");
    repo.write(name, "y\n");
    const std::string sha = repo.commit("odd");
    expect_refused(gen(repo.dir().string(), sha, tmp / "empty.patch"),
                   {"upstream's file", "control character"});
  }
}

// A --tree holding a .GIT directory (added after gen) never becomes a wheel.
TEST_F(GitPathRules, BuildRefusesATreeHoldingACaseInsensitiveGitDirectory) {
  ASSERT_EQ(gen(upstream.repo.dir().string(), upstream.first, tmp / "empty.patch", "tree").exit_code, 0);
  write_file(tmp / "tree" / "apex/.GIT/config", "[core]\n");
  const RunResult built =
      run_apexnpu({"build", "--python=/usr/bin/python3", "--tree", (tmp / "tree").string(), "-o",
                   (tmp / "dist").string(), "--wheel", "--no-emulator"},
                  tmp / "home");
  EXPECT_EQ(built.exit_code, 1) << built.err;
  EXPECT_NE(built.err.find("apex/.GIT/config"), std::string::npos) << built.err;
  EXPECT_FALSE(stdfs::exists(tmp / "dist"));
}

}  // namespace
}  // namespace apexnpu::test
