#include <gtest/gtest.h>

#include "exec/error.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

int pick(int a, int b, int c) { return select(a, b, c); }

TEST(Isa, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parse_isa("scalar"), IsaLevel::scalar);
  EXPECT_EQ(parse_isa("avx2"), IsaLevel::avx2);
  EXPECT_EQ(parse_isa("avx512"), IsaLevel::avx512);
  try {
    parse_isa("sse4");
    FAIL() << "no exception";
  } catch (const ArgumentError& e) {
    EXPECT_STREQ(e.what(), "unknown ISA level 'sse4'; expected scalar, avx2 or avx512");
  }
}

TEST(Isa, ScalarAlwaysSupportedAndLevelsNested) {
  EXPECT_TRUE(isa_supported(IsaLevel::scalar));
  if (isa_supported(IsaLevel::avx512)) {
    EXPECT_TRUE(isa_supported(IsaLevel::avx2));
  }
  EXPECT_TRUE(isa_supported(best_supported_isa()));
}

TEST(Isa, ForcingSelectsTheVariantAndUnsupportedThrows) {
  for (const IsaLevel level : {IsaLevel::scalar, IsaLevel::avx2, IsaLevel::avx512}) {
    if (!isa_supported(level)) {
      EXPECT_THROW(set_isa_level(level), ArgumentError);
      continue;
    }
    ScopedIsaLevel scoped(level);
    EXPECT_EQ(active_isa(), level);
    EXPECT_EQ(pick(0, 1, 2), static_cast<int>(level));
  }
  EXPECT_THROW(set_isa_level(static_cast<IsaLevel>(7)), ArgumentError);
}

TEST(Isa, LevelFromEnvironment) {
  EXPECT_EQ(isa_level_from_env(nullptr), best_supported_isa());
  EXPECT_EQ(isa_level_from_env(""), best_supported_isa());
  EXPECT_EQ(isa_level_from_env("scalar"), IsaLevel::scalar);
  try {
    isa_level_from_env("avx9");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "environment variable APEXNPU_ISA: unknown ISA level 'avx9'; expected scalar, "
                 "avx2 or avx512");
  }
  if (!isa_supported(IsaLevel::avx512)) {
    EXPECT_THROW(isa_level_from_env("avx512"), Error);
  }
}

}  // namespace
}  // namespace apexnpu::rt
