#include "commands/verify.h"

#include <fmt/core.h>

#include "core/error.h"
#include "wheel/verify.h"

namespace apexnpu::commands {

nlohmann::json VerifyResult::to_json() const {
  return {{"path", path.string()}, {"ok", true}, {"files", files}, {"dist_info", dist_info}, {"tags", tags}};
}

VerifyResult run_verify(const std::filesystem::path& path) {
  const auto report = wheel::verify_wheel(wheel::load_wheel(path));
  if (!report.ok()) {
    std::string list;
    for (const auto& v : report.violations) list += "\n  " + v;
    throw Error(fmt::format("{}: {} violation{} of the wheel format:{}", path.string(),
                            report.violations.size(), report.violations.size() == 1 ? "" : "s", list),
                "rebuild the wheel (apexnpu build --wheel) rather than editing it by hand");
  }
  return {path, report.files, report.dist_info, report.tags};
}

}  // namespace apexnpu::commands
