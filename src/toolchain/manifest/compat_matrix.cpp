#include "manifest/compat_matrix.h"

#include <fmt/core.h>

#include <algorithm>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::manifest {
namespace stdfs = std::filesystem;

namespace {

std::optional<std::string> optional_string(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  return j.at(key).get<std::string>();
}

TorchNpuRelease parse_release(const nlohmann::json& r, const CompatMatrix& m) {
  TorchNpuRelease release;
  release.torch_npu = r.at("torch_npu").get<std::string>();
  release.torch = r.at("torch").get<std::string>();
  release.branch = optional_string(r, "branch");
  release.cann = optional_string(r, "cann");
  release.torch_requirement = optional_string(r, "torch_requirement");
  release.python = r.value("python", std::vector<std::string>{});
  release.beta = r.value("beta", false);
  release.historical = r.value("historical", false);
  release.note = optional_string(r, "note");
  release.source = r.at("source").get<std::string>();
  if (!m.sources.contains(release.source))
    throw Error(fmt::format("torch_npu {}: source '{}' is not a key of \"sources\"", release.torch_npu,
                            release.source),
                "name every source of a row in the matrix's \"sources\"");
  return release;
}

CompatRow parse_apex_row(const nlohmann::json& r) {
  CompatRow row;
  row.ascend_pytorch = r.at("ascend_pytorch").get<std::string>();
  for (const auto& t : r.at("pytorch"))
    row.pytorch.push_back({t.at("version").get<std::string>(), t.value("beta", false)});
  row.pytorch_branches = r.at("pytorch_branches").get<std::vector<std::string>>();
  row.apex_branches = r.at("apex_branches").get<std::vector<std::string>>();
  return row;
}

}  // namespace

CompatMatrix compat_matrix_from_json(const nlohmann::json& doc, const std::string& source) {
  CompatMatrix m;
  try {
    m.raw = doc;
    m.schema_version = doc.at("schema_version").get<int>();
    if (m.schema_version < 1 || m.schema_version > kCompatMatrixSchema)
      throw Error(fmt::format("{}: compatibility matrix schema {} (this apexnpu reads 1 to {})", source,
                              m.schema_version, kCompatMatrixSchema),
                  "a newer apexnpu reads it");
    m.sources = doc.value("sources", std::map<std::string, std::string>{});
    for (const auto& r : doc.value("releases", nlohmann::json::array()))
      m.releases.push_back(parse_release(r, m));
    for (const auto& p : doc.value("python_by_torch", nlohmann::json::array()))
      m.python_by_torch.push_back({p.at("torch").get<std::string>(),
                                   p.at("python").get<std::vector<std::string>>(), optional_string(p, "note"),
                                   p.at("source").get<std::string>()});
    for (const auto& r : doc.at("rows")) m.rows.push_back(parse_apex_row(r));
    m.tested_with = doc.value("tested_with", nlohmann::json::array());
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: {}", source, e.what()),
                "releases need torch_npu, torch and source; python_by_torch rows torch, python "
                "and source; the Apex manual's rows ascend_pytorch, pytorch[{version,beta}], "
                "pytorch_branches, apex_branches");
  }
  return m;
}

CompatMatrix parse_compat_matrix(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not JSON: {}", source, e.what()), "the matrix is one JSON document");
  }
  return compat_matrix_from_json(doc, source);
}

CompatMatrix load_compat_matrix(const stdfs::path& templates_dir) {
  const stdfs::path file = templates_dir / "compat_matrix.json";
  return parse_compat_matrix(read_file(file), file.string());
}

namespace {

// Of a row's branches, those for this torch line ("v1.11.0-5.0.rc1" for 1.11.x), else all.
std::vector<std::string> branches_for(const std::vector<std::string>& branches, const std::string& torch) {
  const std::string rel = release_of(torch);
  const auto second_dot = rel.find('.', rel.find('.') + 1);
  const std::string line = "v" + rel.substr(0, second_dot) + ".";
  std::vector<std::string> out;
  for (const auto& b : branches)
    if (b.starts_with(line)) out.push_back(b);
  return out.empty() ? branches : out;
}

}  // namespace

std::vector<TorchMatch> match_torch(const CompatMatrix& matrix, const std::string& torch) {
  std::vector<TorchMatch> exact, related;
  for (const auto& row : matrix.rows)
    for (const auto& t : row.pytorch) {
      const bool is_exact = t.version == torch;
      if (!is_exact && !names_loosely(torch, t.version)) continue;
      TorchMatch m{&row, t, is_exact, branches_for(row.pytorch_branches, t.version),
                   branches_for(row.apex_branches, t.version)};
      (is_exact ? exact : related).push_back(std::move(m));
    }
  exact.insert(exact.end(), related.begin(), related.end());
  return exact;
}

std::vector<const CompatRow*> rows_with_branch(const CompatMatrix& matrix, const std::string& branch) {
  std::vector<const CompatRow*> out;
  for (const auto& row : matrix.rows)
    if (std::find(row.pytorch_branches.begin(), row.pytorch_branches.end(), branch) !=
        row.pytorch_branches.end())
      out.push_back(&row);
  return out;
}

}  // namespace apexnpu::manifest
