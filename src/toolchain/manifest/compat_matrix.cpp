#include "manifest/compat_matrix.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <regex>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::manifest {
namespace stdfs = std::filesystem;

CompatMatrix parse_compat_matrix(const std::string& text, const std::string& source) {
  CompatMatrix m;
  try {
    m.raw = nlohmann::json::parse(text);
    m.schema_version = m.raw.at("schema_version").get<int>();
    for (const auto& r : m.raw.at("rows")) {
      CompatRow row;
      row.ascend_pytorch = r.at("ascend_pytorch").get<std::string>();
      for (const auto& t : r.at("pytorch"))
        row.pytorch.push_back({t.at("version").get<std::string>(), t.value("beta", false)});
      row.pytorch_branches = r.at("pytorch_branches").get<std::vector<std::string>>();
      row.apex_branches = r.at("apex_branches").get<std::vector<std::string>>();
      m.rows.push_back(std::move(row));
    }
    m.tested_with = m.raw.value("tested_with", nlohmann::json::array());
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: {}", source, e.what()),
                "each row needs ascend_pytorch, pytorch[{version,beta}], pytorch_branches, "
                "apex_branches");
  }
  return m;
}

CompatMatrix load_compat_matrix(const stdfs::path& templates_dir) {
  const stdfs::path file = templates_dir / "compat_matrix.json";
  return parse_compat_matrix(read_file(file), file.string());
}

std::string release_of(const std::string& v) {
  static const std::regex re(R"((\d+(?:\.\d+)*?)(?:\.?(?:rc|post|a|b|dev)\d*)?)");
  std::smatch m;
  if (std::regex_match(v, m, re)) return m[1].str();
  return v;
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
      const std::string rel = release_of(t.version);
      const bool is_exact = t.version == torch;
      const bool is_related = !is_exact && (rel == torch || rel.starts_with(torch + "."));
      if (!is_exact && !is_related) continue;
      TorchMatch m{&row, t, is_exact, branches_for(row.pytorch_branches, t.version),
                   branches_for(row.apex_branches, t.version)};
      (is_exact ? exact : related).push_back(std::move(m));
    }
  exact.insert(exact.end(), related.begin(), related.end());
  return exact;
}

std::string format_table(const CompatMatrix& matrix) {
  std::vector<std::array<std::string, 4>> cells = {
      {"AscendPyTorch", "PyTorch", "PyTorch branch", "Apex branch"}};
  for (const auto& r : matrix.rows) {
    std::vector<std::string> torch;
    for (const auto& t : r.pytorch) torch.push_back(t.beta ? t.version + " (beta)" : t.version);
    cells.push_back({r.ascend_pytorch, fmt::format("{}", fmt::join(torch, ", ")),
                     fmt::format("{}", fmt::join(r.pytorch_branches, ", ")),
                     fmt::format("{}", fmt::join(r.apex_branches, ", "))});
  }
  std::array<std::size_t, 4> width{};
  for (const auto& row : cells)
    for (std::size_t i = 0; i < 4; ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    std::string line;
    for (std::size_t i = 0; i < 4; ++i)
      line += i + 1 < 4 ? fmt::format("{:<{}}  ", cells[r][i], width[i]) : cells[r][i];
    out += line + "\n";
    if (r == 0) {
      std::string rule;
      for (std::size_t i = 0; i < 4; ++i) rule += std::string(width[i], '-') + (i + 1 < 4 ? "  " : "");
      out += rule + "\n";
    }
  }
  return out;
}

}  // namespace apexnpu::manifest
