#include "manifest/release_lookup.h"

#include <algorithm>
#include <functional>

namespace apexnpu::manifest {

namespace {

using Predicate = std::function<bool(const TorchNpuRelease&)>;

std::vector<ReleaseMatch> select(const CompatMatrix& matrix, const Predicate& keep, bool exact) {
  std::vector<ReleaseMatch> out;
  for (const auto& release : matrix.releases)
    if (keep(release)) out.push_back(describe(matrix, release, exact));
  return out;
}

// The exact answers if there are any, else the loose ones.
std::vector<ReleaseMatch> exact_else_loose(const CompatMatrix& matrix, const std::string& query,
                                           const std::function<std::string(const TorchNpuRelease&)>& field) {
  auto exact = select(
      matrix, [&](const auto& r) { return names_exactly(query, field(r)); }, true);
  if (!exact.empty()) return exact;
  return select(
      matrix, [&](const auto& r) { return names_loosely(query, field(r)); }, false);
}

}  // namespace

const PythonSupport* python_for_torch(const CompatMatrix& matrix, const std::string& torch) {
  for (const auto& p : matrix.python_by_torch)
    if (p.torch == torch) return &p;
  return nullptr;
}

ReleaseMatch describe(const CompatMatrix& matrix, const TorchNpuRelease& release, bool exact) {
  ReleaseMatch m{&release, exact, release.python, release.python.empty() ? "" : release.source};
  if (const PythonSupport* p = release.python.empty() ? python_for_torch(matrix, release.torch) : nullptr) {
    m.python = p->python;
    m.python_source = p->source;
  }
  return m;
}

std::vector<ReleaseMatch> releases_for_torch(const CompatMatrix& matrix, const std::string& torch) {
  const std::string asked = without_local(torch);
  std::vector<ReleaseMatch> out;
  for (const auto& release : matrix.releases)
    if (names_loosely(asked, release.torch))
      out.push_back(describe(matrix, release, names_exactly(asked, release.torch)));
  return out;
}

std::vector<ReleaseMatch> releases_named(const CompatMatrix& matrix, const std::string& version) {
  return exact_else_loose(matrix, version, [](const TorchNpuRelease& r) { return r.torch_npu; });
}

std::vector<ReleaseMatch> releases_for_cann(const CompatMatrix& matrix, const std::string& cann) {
  const std::string asked = cann.starts_with("CANN ") ? cann.substr(5) : cann;
  return exact_else_loose(matrix, asked, [](const TorchNpuRelease& r) { return r.cann.value_or(""); });
}

std::vector<ReleaseMatch> releases_for_python(const CompatMatrix& matrix, const std::string& python) {
  std::vector<ReleaseMatch> out;
  for (const auto& release : matrix.releases) {
    ReleaseMatch m = describe(matrix, release);
    if (std::find(m.python.begin(), m.python.end(), python) != m.python.end()) out.push_back(std::move(m));
  }
  return out;
}

const TorchNpuRelease* newest_release(const CompatMatrix& matrix) {
  const TorchNpuRelease* newest = nullptr;
  for (const auto& r : matrix.releases)
    if (!newest || compare_releases(r.torch, newest->torch) > 0) newest = &r;
  return newest;
}

std::pair<const TorchNpuRelease*, const TorchNpuRelease*> nearest_releases(const CompatMatrix& matrix,
                                                                           const std::string& torch) {
  const TorchNpuRelease *below = nullptr, *above = nullptr;
  for (const auto& r : matrix.releases) {
    const int c = compare_releases(r.torch, torch);
    if (c < 0 && (!below || compare_releases(r.torch, below->torch) > 0)) below = &r;
    if (c > 0 && (!above || compare_releases(r.torch, above->torch) < 0)) above = &r;
  }
  return {below, above};
}

}  // namespace apexnpu::manifest
