#include "commands/manifest.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/data_dir.h"
#include "core/error.h"
#include "manifest/release_lookup.h"
#include "manifest/wheel_manifest.h"

namespace apexnpu::commands {

namespace {

template <typename T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

ReleaseLine line_of(const manifest::ReleaseMatch& m) {
  const auto& r = *m.release;
  return {r.torch_npu, r.torch,  r.branch,        r.cann, r.torch_requirement,
          r.note,      m.python, m.python_source, r.beta, r.historical,
          m.exact,     r.source};
}

std::vector<ReleaseLine> lines_of(const std::vector<manifest::ReleaseMatch>& matches) {
  std::vector<ReleaseLine> lines;
  for (const auto& m : matches) lines.push_back(line_of(m));
  return lines;
}

ApexLine apex_line(const manifest::CompatRow& row) {
  return {row.ascend_pytorch, row.pytorch, std::nullopt, row.pytorch_branches, row.apex_branches};
}

void require_version(const std::string& option, const std::string& value) {
  if (!manifest::is_version(value))
    throw Error(fmt::format("{} {}: not a version", option, value),
                "a version is numbers and dots, as 2.1.0, 2.1.0.post17 or 1.11.0.rc1");
}

// The matrix's distinct values of one field, for the hint of an unknown version.
template <typename Field>
std::string known(const manifest::CompatMatrix& m, Field field) {
  std::vector<std::string> seen;
  for (const auto& r : m.releases) {
    const std::optional<std::string> v = field(r);
    if (v && std::find(seen.begin(), seen.end(), *v) == seen.end()) seen.push_back(*v);
  }
  return fmt::format("{}", fmt::join(seen, ", "));
}

}  // namespace

nlohmann::json ReleaseLine::to_json() const {
  nlohmann::json j = {{"torch_npu", torch_npu},   {"torch", torch}, {"python", python}, {"beta", beta},
                      {"historical", historical}, {"exact", exact}, {"source", source}};
  put(j, "branch", branch);
  put(j, "cann", cann);
  put(j, "torch_requirement", torch_requirement);
  put(j, "note", note);
  if (!python_source.empty()) j["python_source"] = python_source;
  return j;
}

nlohmann::json ApexLine::to_json() const {
  nlohmann::json j = {{"ascend_pytorch", ascend_pytorch},
                      {"pytorch", nlohmann::json::array()},
                      {"pytorch_branches", pytorch_branches},
                      {"apex_branches", apex_branches}};
  for (const auto& t : pytorch) j["pytorch"].push_back({{"version", t.version}, {"beta", t.beta}});
  put(j, "exact", exact);
  return j;
}

nlohmann::json TorchAnswer::to_json() const {
  nlohmann::json j = {{"torch", torch},
                      {"releases", nlohmann::json::array()},
                      {"apex_manual", nlohmann::json::array()},
                      {"tested_with", tested_with},
                      {"newer_than_newest", newer_than_newest}};
  for (const auto& r : releases) j["releases"].push_back(r.to_json());
  for (const auto& a : apex_manual) j["apex_manual"].push_back(a.to_json());
  put(j, "python", python);
  if (newest) j["newest"] = newest->to_json();
  if (older) j["nearest_older"] = older->to_json();
  if (newer) j["nearest_newer"] = newer->to_json();
  return j;
}

nlohmann::json WheelAnswer::to_json() const {
  nlohmann::json j = {{"file", file.string()},
                      {"wheel", {{"name", wheel_name}, {"version", wheel_version}, {"file", wheel_file}}},
                      {"apexnpu_version", apexnpu_version},
                      {"made_for",
                       {{"python", python_version},
                        {"python_line", python_line},
                        {"python_tag", python_tag},
                        {"abi_tag", abi_tag},
                        {"platform_tag", platform_tag},
                        {"architecture", architecture}}},
                      {"tested_with", tested_with},
                      {"goes_with", {{"python", python_line}, {"releases", nlohmann::json::array()}}},
                      {"matrix_from", matrix_from}};
  put(j["made_for"], "emulator_wheel", emulator_file);
  put(j["made_for"], "upstream_url", upstream_url);
  put(j["made_for"], "upstream_commit", upstream_commit);
  for (const auto& r : releases) j["goes_with"]["releases"].push_back(r.to_json());
  return j;
}

nlohmann::json ManifestResult::to_json() const {
  auto list = [](const auto& items) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& i : items) out.push_back(i.to_json());
    return out;
  };
  if (torch) return {{"torch", torch->torch}, {"answer", torch->to_json()}};
  if (wheel) return {{"wheel", wheel->file.string()}, {"answer", wheel->to_json()}};
  if (torch_npu)
    return {{"torch_npu", *torch_npu}, {"releases", list(releases)}, {"apex_manual", list(apex_manual)}};
  if (cann) return {{"cann", *cann}, {"releases", list(releases)}};
  return {{"matrix", matrix.raw}, {"releases", list(releases)}, {"apex_manual", list(apex_manual)}};
}

namespace {

TorchAnswer answer_torch(const manifest::CompatMatrix& m, const std::string& asked) {
  require_version("--torch", asked);
  TorchAnswer a;
  a.torch = manifest::without_local(asked);
  a.releases = lines_of(manifest::releases_for_torch(m, a.torch));
  for (const auto& t : manifest::match_torch(m, a.torch))
    a.apex_manual.push_back({t.row->ascend_pytorch, {t.torch}, t.exact, t.pytorch_branches, t.apex_branches});
  if (const auto* p = manifest::python_for_torch(m, a.torch)) a.python = p->python;
  a.tested_with = nlohmann::json::array();
  for (const auto& t : m.tested_with)
    if (manifest::names_loosely(a.torch, t.value("torch", ""))) a.tested_with.push_back(t);
  if (const auto* newest = manifest::newest_release(m)) {
    a.newest = line_of(manifest::describe(m, *newest));
    a.newer_than_newest = manifest::compare_releases(a.torch, newest->torch) > 0;
  }
  if (a.releases.empty() && !a.newer_than_newest) {
    const auto [below, above] = manifest::nearest_releases(m, a.torch);
    if (below) a.older = line_of(manifest::describe(m, *below));
    if (above) a.newer = line_of(manifest::describe(m, *above));
  }
  const bool answered = !a.releases.empty() || !a.apex_manual.empty() || a.python || !a.tested_with.empty();
  if (!answered && !a.newer_than_newest)
    throw Error(fmt::format("--torch {}: no torch_npu release in the compatibility matrix is for this "
                            "PyTorch version",
                            asked),
                fmt::format("known PyTorch versions: {}",
                            known(m, [](const auto& r) { return std::optional(r.torch); })));
  return a;
}

std::vector<ReleaseLine> answer_torch_npu(const manifest::CompatMatrix& m, const std::string& asked,
                                          std::vector<ApexLine>& apex_manual) {
  require_version("--torch-npu", asked);
  const auto found = manifest::releases_named(m, asked);
  if (found.empty()) {
    const auto* newest = manifest::newest_release(m);
    const bool newer = newest && manifest::compare_releases(asked, newest->torch_npu) > 0;
    throw Error(fmt::format("--torch-npu {}: {}", asked,
                            newer ? fmt::format("newer than the newest torch_npu release the compatibility "
                                                "matrix knows ({})",
                                                newest->torch_npu)
                                  : std::string("no such torch_npu release in the compatibility matrix")),
                fmt::format("known torch_npu versions: {}",
                            known(m, [](const auto& r) { return std::optional(r.torch_npu); })));
  }
  for (const auto& f : found)
    if (f.release->branch)
      for (const auto* row : manifest::rows_with_branch(m, *f.release->branch))
        apex_manual.push_back(apex_line(*row));
  return lines_of(found);
}

std::vector<ReleaseLine> answer_cann(const manifest::CompatMatrix& m, const std::string& asked) {
  const std::string version = asked.starts_with("CANN ") ? asked.substr(5) : asked;
  require_version("--cann", version);
  const auto found = manifest::releases_for_cann(m, version);
  if (found.empty())
    throw Error(fmt::format("--cann {}: no torch_npu release in the compatibility matrix names this CANN "
                            "version",
                            asked),
                fmt::format("known CANN versions: {}", known(m, [](const auto& r) { return r.cann; })));
  return lines_of(found);
}

WheelAnswer answer_wheel(const manifest::CompatMatrix& ours, const std::filesystem::path& file) {
  const manifest::WheelManifest w = manifest::read_wheel_manifest(file);
  WheelAnswer a{file,
                w.wheel_name,
                w.wheel_version,
                w.wheel_file,
                w.apexnpu_version,
                w.python_version,
                manifest::python_line(w.python_version),
                w.python_tag,
                w.abi_tag,
                w.platform_tag,
                w.architecture,
                w.upstream_url,
                w.upstream_commit,
                w.emulator_file,
                w.tested_with,
                {},
                "wheel"};
  // A wheel built before the matrix had releases (schema 1) is answered from this apexnpu's.
  const bool own = !w.matrix.releases.empty();
  a.matrix_from = own ? "wheel" : "apexnpu";
  a.releases = lines_of(manifest::releases_for_python(own ? w.matrix : ours, a.python_line));
  return a;
}

}  // namespace

ManifestResult run_manifest(const ManifestQuery& q) {
  ManifestResult result{manifest::load_compat_matrix(templates_dir()), {}, {}, q.torch_npu, q.cann, {}, {}};
  const auto& m = result.matrix;
  if (q.torch) {
    result.torch = answer_torch(m, *q.torch);
  } else if (q.wheel) {
    result.wheel = answer_wheel(m, *q.wheel);
  } else if (q.torch_npu) {
    result.releases = answer_torch_npu(m, *q.torch_npu, result.apex_manual);
  } else if (q.cann) {
    result.releases = answer_cann(m, *q.cann);
  } else {
    for (const auto& r : m.releases) result.releases.push_back(line_of(manifest::describe(m, r)));
    for (const auto& row : m.rows) result.apex_manual.push_back(apex_line(row));
  }
  return result;
}

}  // namespace apexnpu::commands
