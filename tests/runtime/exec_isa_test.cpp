#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "exec/error.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

// select() over the level numbers: the active level's number.
int pick() {
  return []<int... kLevel>(std::integer_sequence<int, kLevel...>) { return select(kLevel...); }
  (std::make_integer_sequence<int, kIsaLevelCount>{});
}

// This architecture's level names, and the list the errors give.
struct NamedLevel {
  std::string_view name;
  IsaLevel level;
};
#if defined(__x86_64__)
constexpr NamedLevel kNamedLevels[] = {
    {"scalar", IsaLevel::scalar}, {"avx2", IsaLevel::avx2}, {"avx512", IsaLevel::avx512}};
constexpr const char* kExpectedLevels = "scalar, avx2 or avx512";
#elif defined(__aarch64__)
constexpr NamedLevel kNamedLevels[] = {{"scalar", IsaLevel::scalar}, {"neon", IsaLevel::neon}};
constexpr const char* kExpectedLevels = "scalar or neon";

// Linux distributions for aarch64 (and qemu-aarch64) build everything for ARMv8-A with Advanced
// SIMD: a probe that missed it would leave the neon kernels untested, every test passing.
TEST(Isa, NeonIsSupported) {
  EXPECT_TRUE(isa_supported(IsaLevel::neon));
  EXPECT_EQ(best_supported_isa(), IsaLevel::neon);
}
#endif

TEST(Isa, ParsesNamesAndRejectsOthers) {
  static_assert(std::size(kNamedLevels) == kIsaLevelCount);
  for (const auto& [name, level] : kNamedLevels) EXPECT_EQ(parse_isa(name), level);
  try {
    parse_isa("sse4");
    FAIL() << "no exception";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), std::string("unknown ISA level 'sse4'; expected ") + kExpectedLevels);
  }
}

TEST(Isa, ScalarAlwaysSupportedAndLevelsNested) {
  EXPECT_TRUE(isa_supported(IsaLevel::scalar));
  for (int i = 1; i < kIsaLevelCount; ++i) {  // each level includes the one below it
    if (isa_supported(kIsaLevels[i])) {
      EXPECT_TRUE(isa_supported(kIsaLevels[i - 1]));
    }
  }
  EXPECT_TRUE(isa_supported(best_supported_isa()));
}

TEST(Isa, ForcingSelectsTheVariantAndUnsupportedThrows) {
  for (const IsaLevel level : kIsaLevels) {
    if (!isa_supported(level)) {
      EXPECT_THROW(set_isa_level(level), ArgumentError);
      continue;
    }
    ScopedIsaLevel scoped(level);
    EXPECT_EQ(active_isa(), level);
    EXPECT_EQ(pick(), static_cast<int>(level));
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
    EXPECT_EQ(std::string(e.what()),
              std::string("environment variable APEXNPU_ISA: unknown ISA level 'avx9'; expected ") +
                  kExpectedLevels);
  }
  for (const IsaLevel level : kIsaLevels) {  // a level the CPU lacks is refused
    if (!isa_supported(level)) {
      EXPECT_THROW(isa_level_from_env(isa_name(level)), Error);
    } else {
      EXPECT_EQ(isa_level_from_env(isa_name(level)), level);
    }
  }
}

}  // namespace
}  // namespace apexnpu::rt
