#pragma once
// What the integration tests add to the shared helpers: running the apexnpu binary under test.
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace apexnpu::test {

// Runs the apexnpu binary under test with HOME/XDG_CACHE_HOME pointed into `home`, so no test
// touches the user's cache.
RunResult run_apexnpu(const std::vector<std::string>& args, const stdfs::path& home,
                      const stdfs::path& cwd = {});

}  // namespace apexnpu::test
