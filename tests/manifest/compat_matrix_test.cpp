// The compatibility matrix shipped in templates/: its releases, Pythons and the Apex manual's
// rows as Ascend and PyPI publish them, and the Apex manual's --torch lookup.
#include "manifest/compat_matrix.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"

namespace apexnpu::manifest {
namespace {

CompatMatrix shipped() { return load_compat_matrix(std::string(APEXNPU_SOURCE_DIR) + "/templates"); }

const TorchNpuRelease& release(const CompatMatrix& m, const std::string& torch_npu) {
  const auto it = std::find_if(m.releases.begin(), m.releases.end(),
                               [&](const auto& r) { return r.torch_npu == torch_npu; });
  if (it == m.releases.end()) throw std::runtime_error("no release " + torch_npu);
  return *it;
}

TEST(CompatMatrix, CarriesEveryReleaseOfAscendsTableAndPypiBeyondIt) {
  const auto m = shipped();
  EXPECT_EQ(m.schema_version, 2);
  // Ascend's COMPATIBILITY.md: 26 current rows and 36 historical; PyPI: 2.13.0 and 2.14.0.
  ASSERT_EQ(m.releases.size(), 64u);
  EXPECT_EQ(std::count_if(m.releases.begin(), m.releases.end(), [](const auto& r) { return r.historical; }),
            36);
  const auto& newest_table = release(m, "2.12.0");
  EXPECT_EQ(newest_table.branch, "v2.12.0-26.1.0");
  EXPECT_EQ(newest_table.torch, "2.12.0");
  EXPECT_EQ(newest_table.cann, "9.1.0");
  EXPECT_EQ(newest_table.source, "ascend_compatibility");
  const auto& oldest = release(m, "1.5.0.post2");
  EXPECT_EQ(oldest.branch, "2.0.2.tr5");
  EXPECT_EQ(oldest.cann, "5.0.2");
  EXPECT_TRUE(oldest.historical);
  EXPECT_TRUE(release(m, "1.11.0.rc1").beta);
  EXPECT_EQ(release(m, "1.11.0.post3").cann, "6.3.RC3.1");
  // PyPI's: the torch pin of its METADATA and the Pythons of its wheels; no CANN is published.
  const auto& pypi = release(m, "2.14.0");
  EXPECT_EQ(pypi.torch_requirement, "torch==2.14.0.*");
  EXPECT_EQ(pypi.python, (std::vector<std::string>{"3.10", "3.11", "3.12", "3.13", "3.14"}));
  EXPECT_FALSE(pypi.cann);
  EXPECT_FALSE(pypi.branch);
  for (const auto& r : m.releases) EXPECT_TRUE(m.sources.contains(r.source)) << r.torch_npu;
}

TEST(CompatMatrix, CarriesAscendsPythonsPerPytorch) {
  const auto m = shipped();
  ASSERT_EQ(m.python_by_torch.size(), 15u);
  EXPECT_EQ(m.python_by_torch.front().torch, "2.13.0");
  EXPECT_EQ(m.python_by_torch.back().torch, "1.11.0");
  EXPECT_EQ(m.python_by_torch.back().note, "Python 3.7 from 3.7.5 on");
  for (const auto& p : m.python_by_torch) EXPECT_TRUE(m.sources.contains(p.source)) << p.torch;
}

TEST(CompatMatrix, KeepsTheApexManualsRows) {
  const auto m = shipped();
  ASSERT_EQ(m.rows.size(), 16u);
  EXPECT_EQ(m.rows.front().ascend_pytorch, "2.0.2");
  EXPECT_EQ(m.rows.back().ascend_pytorch, "5.0.rc3");
  EXPECT_EQ(m.rows[9].pytorch[0].version, "1.11.0.rc1");
  EXPECT_TRUE(m.rows[9].pytorch[0].beta);
  EXPECT_FALSE(m.tested_with.empty());
  EXPECT_EQ(rows_with_branch(m, "v2.0.1-5.0.rc3").at(0)->ascend_pytorch, "5.0.rc3");
}

TEST(CompatMatrix, ApexManualRowsForTorch1110) {
  const auto m = shipped();
  const auto found = match_torch(m, "1.11.0");
  ASSERT_EQ(found.size(), 5u);
  EXPECT_TRUE(found[0].exact);
  EXPECT_EQ(found[0].row->ascend_pytorch, "5.0.rc1");
  EXPECT_EQ(found[0].pytorch_branches, std::vector<std::string>{"v1.11.0-5.0.rc1"});
  EXPECT_EQ(found[0].apex_branches, std::vector<std::string>{"5.0.rc1"});
  EXPECT_EQ(found[2].pytorch_branches, std::vector<std::string>{"v1.11.1-5.0.rc3"});
  EXPECT_FALSE(found[3].exact);  // 1.11.0.rc1 (beta) with 3.0.rc3
  EXPECT_EQ(found[3].row->ascend_pytorch, "3.0.rc3");
  EXPECT_TRUE(match_torch(m, "9.9.9").empty());
}

TEST(CompatMatrix, ReadsASchema1MatrixAsOldManifestsCarryIt) {
  const auto m = parse_compat_matrix(
      R"({"schema_version": 1, "rows": [{"ascend_pytorch": "5.0.rc1", "pytorch": [{"version": "1.11.0"}],
          "pytorch_branches": ["v1.11.0-5.0.rc1"], "apex_branches": ["5.0.rc1"]}]})",
      "old.json");
  EXPECT_EQ(m.rows.size(), 1u);
  EXPECT_TRUE(m.releases.empty());
}

TEST(CompatMatrix, RefusesWhatItCannotRead) {
  auto message = [](const std::string& text) {
    try {
      parse_compat_matrix(text, "m.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("{").find("m.json: not JSON"), std::string::npos);
  EXPECT_NE(message(R"({"schema_version": 3, "rows": []})").find("schema 3"), std::string::npos);
  EXPECT_NE(message(R"({"schema_version": 2, "rows": [], "releases": [{"torch_npu": "1", "torch": "1",
                "source": "nowhere"}]})")
                .find("source 'nowhere' is not a key"),
            std::string::npos);
  EXPECT_NE(message(R"({"schema_version": 2, "rows": [], "releases": [{"torch": "1"}]})").find("m.json"),
            std::string::npos);
}

}  // namespace
}  // namespace apexnpu::manifest
