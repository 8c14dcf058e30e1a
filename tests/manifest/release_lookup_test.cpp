// The questions asked of the shipped matrix's releases: by PyTorch, torch_npu, CANN and Python,
// and which release is newest or nearest.
#include "manifest/release_lookup.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace apexnpu::manifest {
namespace {

const CompatMatrix& shipped() {
  static const CompatMatrix m = load_compat_matrix(std::string(APEXNPU_SOURCE_DIR) + "/templates");
  return m;
}

std::vector<std::string> names(const std::vector<ReleaseMatch>& found) {
  std::vector<std::string> out;
  for (const auto& f : found) out.push_back(f.release->torch_npu);
  return out;
}

TEST(ReleaseLookup, ByTorchWithCannAndPython) {
  const auto found = releases_for_torch(shipped(), "2.4.0");
  EXPECT_EQ(names(found), (std::vector<std::string>{"2.4.0.post4", "2.4.0.post2", "2.4.0"}));
  EXPECT_EQ(found[0].release->cann, "8.1.RC1");
  EXPECT_EQ(found[2].release->cann, "8.0.RC3");
  EXPECT_EQ(found[0].python, (std::vector<std::string>{"3.8", "3.9", "3.10", "3.11"}));
  EXPECT_EQ(found[0].python_source, "ascend_compatibility");
  EXPECT_TRUE(found[0].exact);
  // torch.__version__'s local part is dropped; a line names its releases.
  EXPECT_EQ(names(releases_for_torch(shipped(), "2.13.0+cpu")), std::vector<std::string>{"2.13.0"});
  EXPECT_EQ(releases_for_torch(shipped(), "2.1").size(), 9u);
  EXPECT_TRUE(releases_for_torch(shipped(), "1.13.1").empty());
}

TEST(ReleaseLookup, EveryReleaseIsFoundByEachOfItsVersions) {
  auto holds = [](const std::vector<ReleaseMatch>& found, const TorchNpuRelease& r) {
    return std::any_of(found.begin(), found.end(), [&](const auto& f) { return f.release == &r; });
  };
  for (const auto& r : shipped().releases) {
    EXPECT_TRUE(holds(releases_for_torch(shipped(), r.torch), r)) << r.torch_npu;
    EXPECT_TRUE(holds(releases_named(shipped(), r.torch_npu), r)) << r.torch_npu;
    if (r.cann) EXPECT_TRUE(holds(releases_for_cann(shipped(), *r.cann), r)) << r.torch_npu;
  }
}

TEST(ReleaseLookup, PypiReleasesCarryTheirOwnPythons) {
  const auto found = releases_for_torch(shipped(), "2.14.0");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].python_source, "pypi");
  EXPECT_EQ(found[0].python.back(), "3.14");
}

TEST(ReleaseLookup, ByTorchNpuExactElseLoose) {
  EXPECT_EQ(names(releases_named(shipped(), "2.1.0")), std::vector<std::string>{"2.1.0"});
  const auto loose = releases_named(shipped(), "2.5.1.POST1");
  EXPECT_EQ(names(loose), std::vector<std::string>{"2.5.1.post1"});
  const auto line = releases_named(shipped(), "2.2");
  EXPECT_EQ(names(line), (std::vector<std::string>{"2.2.0.post2", "2.2.0"}));
  EXPECT_FALSE(line[0].exact);
  EXPECT_TRUE(releases_named(shipped(), "3.0.0").empty());
}

TEST(ReleaseLookup, ByCann) {
  EXPECT_EQ(names(releases_for_cann(shipped(), "8.0.RC3")),
            (std::vector<std::string>{"2.4.0", "2.3.1.post2", "2.1.0.post8"}));
  EXPECT_EQ(names(releases_for_cann(shipped(), "CANN 6.3.RC3.1")), std::vector<std::string>{"1.11.0.post3"});
  EXPECT_EQ(releases_for_cann(shipped(), "8.0").size(), 3u + 3u + 4u + 3u);  // 8.0.0, RC1, RC2, RC3
  EXPECT_TRUE(releases_for_cann(shipped(), "4.0").empty());
}

TEST(ReleaseLookup, ByPython) {
  const auto found = releases_for_python(shipped(), "3.14");
  EXPECT_EQ(names(found), (std::vector<std::string>{"2.14.0", "2.13.0", "2.12.0", "2.11.0"}));
  for (const auto& f : releases_for_python(shipped(), "3.7")) EXPECT_EQ(f.release->torch, "1.11.0");
}

TEST(ReleaseLookup, NewestAndNearest) {
  EXPECT_EQ(newest_release(shipped())->torch_npu, "2.14.0");
  const auto [below, above] = nearest_releases(shipped(), "1.13.1");
  EXPECT_EQ(below->torch, "1.11.0");
  EXPECT_EQ(above->torch, "2.0.1");
  EXPECT_EQ(nearest_releases(shipped(), "2.15").second, nullptr);
}

}  // namespace
}  // namespace apexnpu::manifest
