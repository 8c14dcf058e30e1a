// Version strings of the matrix and of users: release parts, order, and how a query names a
// listed version.
#include "manifest/versions.h"

#include <gtest/gtest.h>

namespace apexnpu::manifest {
namespace {

TEST(Versions, ReleaseOf) {
  EXPECT_EQ(release_of("1.11.0.rc2"), "1.11.0");
  EXPECT_EQ(release_of("1.5.0.post3"), "1.5.0");
  EXPECT_EQ(release_of("1.8.1"), "1.8.1");
  EXPECT_EQ(release_of("8.0.RC3"), "8.0");
  EXPECT_EQ(release_numbers("2.1.0.post17"), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(release_numbers("2.13.0+cpu"), (std::vector<int>{2, 13, 0}));
}

TEST(Versions, WhatIsAVersion) {
  for (const char* good :
       {"2.13.0", "2.1", "2.1.0.post17", "1.11.0.rc1", "2.13.0+cpu", "8.0.RC3", "6.3.RC3.1"})
    EXPECT_TRUE(is_version(good)) << good;
  for (const char* bad : {"", "latest", "2..1", "v2.1.0", "2.1.0 ", "-1"})
    EXPECT_FALSE(is_version(bad)) << bad;
  EXPECT_EQ(without_local("2.13.0+cpu"), "2.13.0");
}

TEST(Versions, OrderByRelease) {
  EXPECT_GT(compare_releases("2.10.0", "2.9.0"), 0);  // numbers, not text
  EXPECT_LT(compare_releases("2.13.0", "2.14.0"), 0);
  EXPECT_EQ(compare_releases("2.14", "2.14.0"), 0);
  EXPECT_EQ(compare_releases("2.1.0.post4", "2.1.0"), 0);
  EXPECT_GT(compare_releases("2.15.0", "2.14.0"), 0);
  EXPECT_GT(compare_releases("2.99999999999999999999", "2.14.0"), 0);  // no overflow
}

TEST(Versions, Naming) {
  EXPECT_TRUE(names_exactly("8.0.rc3", "8.0.RC3"));
  EXPECT_FALSE(names_exactly("2.1.0", "2.1.0.post4"));
  EXPECT_TRUE(names_loosely("2.1.0", "2.1.0.post4"));
  EXPECT_TRUE(names_loosely("2.1", "2.1.0"));
  EXPECT_FALSE(names_loosely("2.1", "2.10.0"));
  EXPECT_TRUE(names_loosely("8.0", "8.0.RC1"));
  EXPECT_FALSE(names_loosely("8.0.0", "8.0.RC1"));
}

}  // namespace
}  // namespace apexnpu::manifest
