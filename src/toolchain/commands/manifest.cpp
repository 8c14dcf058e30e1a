#include "commands/manifest.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <set>

#include "core/data_dir.h"
#include "core/error.h"
#include "manifest/compat_matrix.h"

namespace apexnpu::commands {

ManifestOutput run_manifest(const ManifestQuery& q) {
  const auto matrix = manifest::load_compat_matrix(templates_dir());
  ManifestOutput out;
  if (!q.torch) {
    out.json = {{"matrix", matrix.raw}};
    out.text = manifest::format_table(matrix);
    return out;
  }
  const auto matches = manifest::match_torch(matrix, *q.torch);
  if (matches.empty()) {
    std::set<std::string> known;
    for (const auto& r : matrix.rows)
      for (const auto& t : r.pytorch) known.insert(manifest::release_of(t.version));
    throw Error(fmt::format("--torch {}: no AscendPyTorch release in the compatibility matrix "
                            "lists this PyTorch version", *q.torch),
                fmt::format("known PyTorch versions: {}", fmt::join(known, ", ")));
  }
  nlohmann::json list = nlohmann::json::array();
  out.text = fmt::format("PyTorch {}:\n", *q.torch);
  for (const auto& m : matches) {
    list.push_back({{"ascend_pytorch", m.row->ascend_pytorch},
                    {"pytorch", m.torch.version},
                    {"beta", m.torch.beta},
                    {"exact", m.exact},
                    {"pytorch_branches", m.pytorch_branches},
                    {"apex_branches", m.apex_branches}});
    out.text += fmt::format(
        "  AscendPyTorch {:<8} PyTorch {}{}{}  PyTorch branch {}  Apex branch {}\n",
        m.row->ascend_pytorch, m.torch.version, m.torch.beta ? " (beta)" : "",
        m.exact ? "" : " (pre/post-release)", fmt::join(m.pytorch_branches, ", "),
        fmt::join(m.apex_branches, ", "));
  }
  out.json = {{"torch", *q.torch}, {"matches", list}};
  return out;
}

}  // namespace apexnpu::commands
