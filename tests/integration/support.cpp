#include "integration/support.h"

namespace apexnpu::test {

RunResult run_apexnpu(const std::vector<std::string>& args, const stdfs::path& home,
                      const stdfs::path& cwd) {
  return run_process(APEXNPU_BINARY, args,
                     {"HOME=" + home.string(), "XDG_CACHE_HOME=" + (home / "cache").string(),
                      "NO_COLOR=1", "APEXNPU_UPSTREAM="},
                     cwd);
}

}  // namespace apexnpu::test
