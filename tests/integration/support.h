#pragma once
// What the integration tests add to the shared helpers: running the apexnpu binary under test.
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace apexnpu::test {

// Runs the apexnpu binary under test with HOME/XDG_CACHE_HOME pointed into `home`, so no test
// touches the user's cache.
RunResult run_apexnpu(const std::vector<std::string>& args, const stdfs::path& home,
                      const stdfs::path& cwd = {}, const std::vector<std::string>& env = {});

// The exit code of a process killed by SIGKILL, as run_process reports it.
inline constexpr int kKilled = 128 + 9;

// run_apexnpu with the rename fault injector preloaded (support/kill_at_rename.c): the process is
// killed at its `rename`-th rename, before it happens (0: never; it runs to its end).
RunResult run_apexnpu_killed_at_rename(int rename, const std::vector<std::string>& args,
                                       const stdfs::path& home, const std::vector<std::string>& env = {});

// The names of what apexnpu left beside `output` (".<name>.apexnpu-*"), sorted.
std::vector<std::string> leftovers_beside(const stdfs::path& output);

}  // namespace apexnpu::test
