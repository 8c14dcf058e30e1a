#include "integration/support.h"

#include <algorithm>
#include <cstdlib>

namespace apexnpu::test {

RunResult run_apexnpu(const std::vector<std::string>& args, const stdfs::path& home, const stdfs::path& cwd,
                      const std::vector<std::string>& env) {
  std::vector<std::string> all{"HOME=" + home.string(), "XDG_CACHE_HOME=" + (home / "cache").string(),
                               "NO_COLOR=1", "APEXNPU_UPSTREAM="};
  all.insert(all.end(), env.begin(), env.end());
  return run_process(APEXNPU_BINARY, args, all, cwd);
}

RunResult run_apexnpu_killed_at_rename(int rename, const std::vector<std::string>& args,
                                       const stdfs::path& home, const std::vector<std::string>& env) {
  // Under AddressSanitizer the preloaded library comes before ASan's runtime; that is fine here.
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::vector<std::string> all{std::string("LD_PRELOAD=") + APEXNPU_KILL_AT_RENAME_LIBRARY,
                               "APEXNPU_KILL_AT_RENAME=" + std::to_string(rename),
                               std::string("ASAN_OPTIONS=") +
                                   (asan != nullptr ? std::string(asan) + ":" : "") +
                                   "verify_asan_link_order=0"};
  all.insert(all.end(), env.begin(), env.end());
  return run_apexnpu(args, home, {}, all);
}

std::vector<std::string> leftovers_beside(const stdfs::path& output) {
  std::vector<std::string> names;
  const std::string prefix = "." + output.filename().string() + ".apexnpu-";
  for (const auto& entry : stdfs::directory_iterator(output.parent_path()))
    if (entry.path().filename().string().starts_with(prefix)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace apexnpu::test
