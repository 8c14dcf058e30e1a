#include "commands/manifest.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <set>

#include "core/data_dir.h"
#include "core/error.h"

namespace apexnpu::commands {

nlohmann::json ManifestResult::to_json() const {
  if (!torch) return {{"matrix", matrix.raw}};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : matches)
    list.push_back({{"ascend_pytorch", m.ascend_pytorch},
                    {"pytorch", m.pytorch},
                    {"beta", m.beta},
                    {"exact", m.exact},
                    {"pytorch_branches", m.pytorch_branches},
                    {"apex_branches", m.apex_branches}});
  return {{"torch", *torch}, {"matches", list}};
}

ManifestResult run_manifest(const ManifestQuery& q) {
  ManifestResult result{manifest::load_compat_matrix(templates_dir()), q.torch, {}};
  if (!q.torch) return result;
  const auto matches = manifest::match_torch(result.matrix, *q.torch);
  if (matches.empty()) {
    std::set<std::string> known;
    for (const auto& r : result.matrix.rows)
      for (const auto& t : r.pytorch) known.insert(manifest::release_of(t.version));
    throw Error(fmt::format("--torch {}: no AscendPyTorch release in the compatibility matrix "
                            "lists this PyTorch version",
                            *q.torch),
                fmt::format("known PyTorch versions: {}", fmt::join(known, ", ")));
  }
  for (const auto& m : matches)
    result.matches.push_back(
        {m.row->ascend_pytorch, m.torch.version, m.torch.beta, m.exact, m.pytorch_branches, m.apex_branches});
  return result;
}

}  // namespace apexnpu::commands
