// The levels the runtime is compiled with (exec/isa_levels.h) are build.json's for the same
// architecture: CMake and `apexnpu build` compile the kernel files at build.json's levels, and
// dispatch indexes the variants by the runtime's, so both must list the same levels in order.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "exec/isa.h"
#include "support/test_support.h"

namespace apexnpu::rt {
namespace {

TEST(IsaLevels, MatchBuildJsonForThisArchitecture) {
  const auto config =
      nlohmann::json::parse(test::read_file(std::string(APEXNPU_SOURCE_DIR) + "/src/runtime/build.json"));
  const std::string arch(kIsaArchitecture);
  ASSERT_TRUE(config.at("isa_levels").contains(arch)) << "build.json has no levels for " << arch;
  const auto& listed = config.at("isa_levels").at(arch);
  ASSERT_EQ(listed.size(), static_cast<std::size_t>(kIsaLevelCount)) << listed.dump();
  for (int i = 0; i < kIsaLevelCount; ++i) {
    EXPECT_EQ(listed[i].at("name").get<std::string>(), isa_name(static_cast<IsaLevel>(i)));
    EXPECT_EQ(listed[i].at("level").get<int>(), i);
  }
}

TEST(IsaLevels, NamesRoundTripAndLevelZeroIsAlwaysSupported) {
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const auto level = static_cast<IsaLevel>(i);
    EXPECT_EQ(parse_isa(isa_name(level)), level);
  }
  EXPECT_STREQ(isa_name(static_cast<IsaLevel>(kIsaLevelCount)), "unknown");
  EXPECT_TRUE(isa_supported(static_cast<IsaLevel>(0)));
  EXPECT_FALSE(isa_supported(static_cast<IsaLevel>(kIsaLevelCount)));
}

}  // namespace
}  // namespace apexnpu::rt
