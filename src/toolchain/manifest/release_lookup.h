#pragma once
// The questions users ask of the matrix's torch_npu releases: which go with a PyTorch version,
// which is a given torch_npu version, which go with a CANN version or a Python, and which is the
// newest. Each answer carries the Pythons that apply to the release and where they come from.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "manifest/compat_matrix.h"

namespace apexnpu::manifest {

struct ReleaseMatch {
  const TorchNpuRelease* release = nullptr;
  bool exact = true;  // the version asked about is the listed one (else a pre/post-release or line)
  std::vector<std::string> python;  // the release's own Pythons, else Ascend's for its PyTorch
  std::string python_source;        // a key of CompatMatrix::sources; empty without Pythons
};

// The Pythons for one PyTorch version, as Ascend lists them; nullptr where it does not.
const PythonSupport* python_for_torch(const CompatMatrix& matrix, const std::string& torch);

ReleaseMatch describe(const CompatMatrix& matrix, const TorchNpuRelease& release, bool exact = true);

// Releases whose PyTorch is `torch` (or in its line: "2.1" for 2.1.x), in the matrix's order.
std::vector<ReleaseMatch> releases_for_torch(const CompatMatrix& matrix, const std::string& torch);

// Releases that are torch_npu `version`; without an exact one, its pre/post-releases or line.
std::vector<ReleaseMatch> releases_named(const CompatMatrix& matrix, const std::string& version);

// Releases made for CANN `cann` ("8.0.RC3", "CANN 8.0.RC3"); without an exact one, its line
// ("8.0" for 8.0.0 and 8.0.RC1 to RC3).
std::vector<ReleaseMatch> releases_for_cann(const CompatMatrix& matrix, const std::string& cann);

// Releases whose Pythons include `python` ("3.11").
std::vector<ReleaseMatch> releases_for_python(const CompatMatrix& matrix, const std::string& python);

// The release for the newest PyTorch (the first listed of those); nullptr for no releases.
const TorchNpuRelease* newest_release(const CompatMatrix& matrix);

// The nearest releases by PyTorch version below and above `torch` (the first listed of each).
std::pair<const TorchNpuRelease*, const TorchNpuRelease*> nearest_releases(const CompatMatrix& matrix,
                                                                           const std::string& torch);

}  // namespace apexnpu::manifest
