// build.json's ISA levels are keyed by architecture: the config gives the named architecture's
// levels (the host's by default) and says which architectures there are when one is missing.
#include "compile/runtime_build_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compile/native_build.h"
#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::compile {
namespace {

constexpr const char* kTwoArchitectures = R"({"runtime_version": "1",
  "isa_levels": {"comment": "levels per architecture",
                 "x86_64": [{"name": "scalar", "level": 0, "flags": ["-O2"]},
                            {"name": "avx2", "level": 1, "flags": ["-mavx2"]}],
                 "aarch64": [{"name": "scalar", "level": 0}]},
  "binding": {"modules": []}})";

std::vector<std::string> names(const RuntimeBuildConfig& c) {
  std::vector<std::string> n;
  for (const auto& l : c.isa_levels) n.push_back(l.name);
  return n;
}

TEST(RuntimeBuildConfig, GivesTheLevelsOfTheNamedArchitecture) {
  const auto x86 = parse_runtime_build_config(kTwoArchitectures, "b.json", "x86_64");
  EXPECT_EQ(x86.architecture, "x86_64");
  EXPECT_EQ(names(x86), (std::vector<std::string>{"scalar", "avx2"}));
  EXPECT_EQ(x86.isa_levels[1].level, 1);
  EXPECT_EQ(x86.isa_levels[1].flags, (std::vector<std::string>{"-mavx2"}));

  const auto arm = parse_runtime_build_config(kTwoArchitectures, "b.json", "arm64");
  EXPECT_EQ(arm.architecture, "aarch64");
  EXPECT_EQ(names(arm), (std::vector<std::string>{"scalar"}));
  EXPECT_TRUE(arm.isa_levels[0].flags.empty());

  EXPECT_EQ(parse_runtime_build_config(kTwoArchitectures, "b.json", "amd64").architecture, "x86_64");
}

TEST(RuntimeBuildConfig, DefaultsToTheHostArchitecture) {
  EXPECT_EQ(normalize_architecture("amd64"), "x86_64");
  EXPECT_EQ(normalize_architecture("aarch64"), "aarch64");
  const auto host = parse_runtime_build_config(kTwoArchitectures, "b.json");
  EXPECT_EQ(host.architecture, host_architecture());
}

TEST(RuntimeBuildConfig, NamesTheArchitecturesWhenOneIsMissing) {
  try {
    parse_runtime_build_config(kTwoArchitectures, "b.json", "riscv64");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "b.json: isa_levels has no levels for architecture 'riscv64' (it has: "
                 "aarch64, x86_64)");
    EXPECT_NE(e.hint().find("exec/isa_levels.h"), std::string::npos) << e.hint();
  }
}

TEST(RuntimeBuildConfig, RejectsLevelsNotKeyedByArchitecture) {
  const std::string flat = R"({"runtime_version": "1",
    "isa_levels": [{"name": "scalar", "level": 0}], "binding": {"modules": []}})";
  try {
    parse_runtime_build_config(flat, "b.json", "x86_64");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "b.json: isa_levels must map each architecture to its levels");
  }
}

TEST(RuntimeBuildConfig, TheBundledConfigStartsEveryArchitectureAtScalar) {
  for (const char* arch : {"x86_64", "aarch64"}) {
    const auto c = load_runtime_build_config(std::string(APEXNPU_SOURCE_DIR) + "/src/runtime", arch);
    ASSERT_FALSE(c.isa_levels.empty()) << arch;
    EXPECT_EQ(c.isa_levels[0].name, "scalar") << arch;
    for (std::size_t i = 0; i < c.isa_levels.size(); ++i) {
      const auto& level = c.isa_levels[i];
      EXPECT_EQ(level.level, static_cast<int>(i)) << arch << " " << level.name;
      // Bit-identical results at every level need FMA contraction off everywhere.
      EXPECT_NE(std::find(level.flags.begin(), level.flags.end(), "-ffp-contract=off"), level.flags.end())
          << arch << " " << level.name;
    }
  }
}

// Every --wrap=NAME of the modules' link flags binds NAME to __wrap_NAME, which
// python/glibc_floor.cpp must define, and every definition there must be wrapped (or it is dead).
TEST(RuntimeBuildConfig, EveryWrappedGlibcSymbolIsDefinedByTheFloor) {
  const std::string runtime = std::string(APEXNPU_SOURCE_DIR) + "/src/runtime";
  const auto c = load_runtime_build_config(runtime, "x86_64");
  std::vector<std::string> wrapped;
  for (const auto& flag : c.module_link_flags) {
    for (std::size_t at = flag.find("--wrap="); at != std::string::npos; at = flag.find("--wrap=", at + 1)) {
      const std::size_t start = at + 7;
      wrapped.push_back(flag.substr(start, flag.find(',', start) - start));
    }
  }
  ASSERT_FALSE(wrapped.empty());
  const std::string floor = read_file(runtime + "/python/glibc_floor.cpp");
  for (const auto& name : wrapped) {
    const bool defined = floor.find("__wrap_" + name + "(") != std::string::npos ||
                         floor.find("__wrap_" + name + " =") != std::string::npos ||
                         floor.find("APEXNPU_AT_BASELINE(int, " + name + ",") != std::string::npos ||
                         floor.find(", " + name + ", (") != std::string::npos;
    EXPECT_TRUE(defined) << name << " is wrapped but glibc_floor.cpp does not define __wrap_" << name;
  }
  for (std::size_t at = floor.find("APEXNPU_AT_BASELINE("); at != std::string::npos;
       at = floor.find("APEXNPU_AT_BASELINE(", at + 1)) {
    const std::size_t comma = floor.find(", ", at);
    const std::string name = floor.substr(comma + 2, floor.find(',', comma + 2) - comma - 2);
    if (name == "name") continue;  // the macro's own definition
    EXPECT_NE(std::find(wrapped.begin(), wrapped.end(), name), wrapped.end())
        << name << " is pinned in glibc_floor.cpp but not wrapped in build.json";
  }
  for (const auto& module : c.modules)
    EXPECT_NE(std::find(module.sources.begin(), module.sources.end(), "python/glibc_floor.cpp"),
              module.sources.end())
        << module.name << " is linked with the wraps but without their definitions";
}

// Sources outside the kernel files compute too (step sizes, bias corrections, projections):
// gcc fuses their multiplies and adds by default where the baseline has FMA (aarch64), which
// x86-64's baseline cannot, so every source needs contraction off for the same bits on both.
TEST(RuntimeBuildConfig, EverySourceHasContractionOffAndTheBaseFlagsCarryIt) {
  const auto c = load_runtime_build_config(std::string(APEXNPU_SOURCE_DIR) + "/src/runtime");
  EXPECT_EQ(c.compile_flags, (std::vector<std::string>{"-ffp-contract=off"}));
  const auto flags = base_compile_flags(c, false, false);
  EXPECT_NE(std::find(flags.begin(), flags.end(), "-ffp-contract=off"), flags.end());
  EXPECT_TRUE(parse_runtime_build_config(kTwoArchitectures, "b.json", "x86_64").compile_flags.empty());
}

}  // namespace
}  // namespace apexnpu::compile
