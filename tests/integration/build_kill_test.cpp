// A killed build (issue 26, cases 8 and 9): its compilers die with it, and -o holds every item of
// the old build or every item of the new one, never a layout and manifest without its .whl; what
// the killed build left is finished or removed by the next build into -o.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "integration/fixture.h"

extern char** environ;

namespace apexnpu::test {
namespace {

using namespace std::chrono_literals;

// The tree the builds read: gen's output of the fixture upstream (the patch empty, no overlay).
stdfs::path make_tree(const TempDir& tmp, const ApexLikeUpstream& upstream) {
  write_file(tmp / "empty.patch", "");
  const stdfs::path tree = tmp / "tree";
  const RunResult r =
      run_apexnpu({"gen", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first, "--patch",
                   (tmp / "empty.patch").string(), "--no-overlay", "-o", tree.string()},
                  tmp / "home");
  if (r.exit_code != 0) throw std::runtime_error("gen failed: " + r.err);
  return tree;
}

std::vector<std::string> build_args(const stdfs::path& tree, const stdfs::path& out,
                                    const stdfs::path& cache) {
  return {"build",
          "--python=/usr/bin/python3",
          "--tree",
          tree.string(),
          "-o",
          out.string(),
          "--wheel",
          "--no-emulator",
          "--object-cache",
          cache.string(),
          "-j2"};
}

// One process's pid, parent, group and state, from /proc/<pid>/stat.
struct Proc {
  pid_t pid, parent, group;
  char state;
  std::string name;
};

std::vector<Proc> processes() {
  std::vector<Proc> all;
  std::error_code ec;
  for (const auto& entry : stdfs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const std::size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    Proc p{static_cast<pid_t>(std::stol(name)), 0, 0, '?', line.substr(open + 1, close - open - 1)};
    rest >> p.state >> p.parent >> p.group;
    all.push_back(p);
  }
  return all;
}

std::vector<Proc> descendants(pid_t root) {
  const std::vector<Proc> all = processes();
  std::set<pid_t> family{root};
  std::vector<Proc> out;
  for (bool grew = true; grew;) {
    grew = false;
    for (const Proc& p : all)
      if (family.contains(p.parent) && family.insert(p.pid).second) {
        out.push_back(p);
        grew = true;
      }
  }
  return out;
}

TEST(BuildKill, AKilledBuildsCompilersDieWithIt) {
  TempDir tmp;
  const ApexLikeUpstream upstream(tmp.path());
  const stdfs::path tree = make_tree(tmp, upstream);
  // A fresh object cache: the build has to compile.
  std::vector<std::string> argv_storage{APEXNPU_BINARY};
  for (auto& a : build_args(tree, tmp / "dist", tmp / "fresh-cache")) argv_storage.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t build = 0;
  ASSERT_EQ(posix_spawn(&build, APEXNPU_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  // Wait until compilers run (the first compilation of the runtime takes long enough to catch).
  std::vector<Proc> compilers;
  for (auto deadline = std::chrono::steady_clock::now() + 180s;
       compilers.empty() && std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(50ms))
    for (const Proc& p : descendants(build))
      if (p.name == "cc1plus" || p.name == "c++" || p.name == "g++" || p.name == "as") compilers.push_back(p);
  if (compilers.empty()) {
    ::kill(build, SIGKILL);
    ::waitpid(build, nullptr, 0);
    FAIL() << "no compiler was seen running";
  }
  const std::vector<Proc> family = descendants(build);
  ASSERT_EQ(::kill(build, SIGKILL), 0);
  ::waitpid(build, nullptr, 0);

  // Every process the build started, and every one in their group (what they started since),
  // is gone soon after: the watchdog kills the group as the build dies.
  const pid_t group = compilers.front().group;
  EXPECT_NE(group, ::getpgrp()) << "the compilers ran in the test's own process group";
  auto left = [&] {
    std::vector<std::string> names;
    for (const Proc& p : processes())
      if (p.state != 'Z' && (p.group == group || std::any_of(family.begin(), family.end(),
                                                             [&](const Proc& f) { return f.pid == p.pid; })))
        names.push_back(p.name + " " + std::to_string(p.pid));
    return names;
  };
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       !left().empty() && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(50ms);
  EXPECT_EQ(left(), std::vector<std::string>{}) << "processes of the killed build still run";
}

TEST(BuildKill, EveryItemOfOneBuildOrEveryItemOfTheOtherAtEachRename) {
  TempDir tmp;
  const ApexLikeUpstream upstream(tmp.path());
  const stdfs::path tree = make_tree(tmp, upstream);
  const stdfs::path cache = stdfs::path(APEXNPU_BUILD_DIR) / "test-object-cache";
  const stdfs::path out = tmp / "dist";
  // Build A, then B (the same items, other bytes: another build time).
  const std::vector<std::string> args = build_args(tree, out, cache);
  ASSERT_EQ(run_apexnpu(args, tmp / "home", {}, {"SOURCE_DATE_EPOCH=2000000000"}).exit_code, 0);
  const auto built_b = snapshot(out);
  stdfs::remove_all(out);
  ASSERT_EQ(run_apexnpu(args, tmp / "home", {}, {"SOURCE_DATE_EPOCH=1000000000"}).exit_code, 0);
  const auto built_a = snapshot(out);
  ASSERT_NE(built_a, built_b);
  stdfs::copy(out, tmp / "dist-a", stdfs::copy_options::recursive);

  // A compiler that answers --version and fails every compilation: the build that runs it reads
  // -o (finishing or removing what a killed build left), then fails without writing into it.
  const stdfs::path broken = tmp / "broken-cxx";
  write_file(broken,
             "#!/bin/sh\nfor a; do [ \"$a\" = --version ] && { echo broken 1.0; exit 0; }; done\nexit 1\n",
             true);

  int kills = 0;
  for (int n = 1; n <= 400; ++n) {
    const RunResult r = run_apexnpu_killed_at_rename(n, args, tmp / "home", {"SOURCE_DATE_EPOCH=2000000000"});
    if (r.exit_code == 0) break;
    ASSERT_EQ(r.exit_code, kKilled) << "rename " << n << ": " << r.err;
    ++kills;
    const RunResult next = run_apexnpu(args, tmp / "home", {}, {"CXX=" + broken.string()});
    ASSERT_EQ(next.exit_code, 1) << next.err;
    const auto now = snapshot(out);
    EXPECT_TRUE(now == built_a || now == built_b) << "killed at rename " << n << ": a mix of two builds";
    EXPECT_EQ(leftovers_beside(out), std::vector<std::string>{}) << "after the kill at rename " << n;
    stdfs::remove_all(out);
    stdfs::copy(tmp / "dist-a", out, stdfs::copy_options::recursive);
  }
  EXPECT_GE(kills, 7) << "the build's commit alone makes seven renames";
  EXPECT_EQ(snapshot(out), built_b);
}

}  // namespace
}  // namespace apexnpu::test
