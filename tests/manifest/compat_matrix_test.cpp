// The compatibility matrix shipped in templates/ and the --torch lookup.
#include "manifest/compat_matrix.h"

#include <gtest/gtest.h>

namespace apexnpu::manifest {
namespace {

CompatMatrix shipped() { return load_compat_matrix(std::string(APEXNPU_SOURCE_DIR) + "/templates"); }

TEST(CompatMatrix, ShippedTableHasSpecSection6Rows) {
  const auto m = shipped();
  EXPECT_EQ(m.schema_version, 1);
  ASSERT_EQ(m.rows.size(), 16u);
  EXPECT_EQ(m.rows.front().ascend_pytorch, "2.0.2");
  EXPECT_EQ(m.rows.back().ascend_pytorch, "5.0.rc3");
  EXPECT_EQ(m.rows[9].pytorch[0].version, "1.11.0.rc1");
  EXPECT_TRUE(m.rows[9].pytorch[0].beta);
  EXPECT_FALSE(m.tested_with.empty());
}

TEST(CompatMatrix, ReleaseOf) {
  EXPECT_EQ(release_of("1.11.0.rc2"), "1.11.0");
  EXPECT_EQ(release_of("1.5.0.post3"), "1.5.0");
  EXPECT_EQ(release_of("1.8.1"), "1.8.1");
}

TEST(CompatMatrix, Torch1110) {
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

TEST(CompatMatrix, TableHasEveryRow) {
  const std::string t = format_table(shipped());
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 18);  // header, rule, 16 rows
  EXPECT_NE(t.find("1.11.0.rc2 (beta)"), std::string::npos);
}

}  // namespace
}  // namespace apexnpu::manifest
