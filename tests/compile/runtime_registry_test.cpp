// The optimizer list the runtime embeds in the module that links it (compile/runtime_registry):
// read from a shared object the real compiler builds with such a section, parsed, and refused
// with the module's name when it is malformed or of another schema.
#include "compile/runtime_registry.h"

#include <gtest/gtest.h>

#include <string>

#include "compile/compiler.h"
#include "core/error.h"
#include "core/subprocess.h"
#include "support/test_support.h"

namespace apexnpu::compile {
namespace {

constexpr const char* kDescription =
    R"({"schema": 1, "optimizers": [)"
    R"({"kind": "sgd", "class": "NpuFusedSGD", "options": ["lr", "momentum"], "state": ["momentum_buffer"]},)"
    R"({"kind": "adam", "class": "NpuFusedAdam", "options": ["lr"], "state": ["exp_avg", "exp_avg_sq"]}]})";

std::filesystem::path build_module(const test::TempDir& dir, const std::string& section_text) {
  std::string escaped;
  for (const char c : section_text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  test::write_file(dir / "registry.cpp",
                   "[[gnu::used, gnu::section(\".apexnpu_registry\")]] const char text[] = \"" + escaped +
                       "\";\nint unrelated() { return 1; }\n");
  std::vector<std::string> argv = detect_compiler().command;
  argv.insert(argv.end(),
              {"-shared", "-fPIC", "-s", "-o", (dir / "mod.so").string(), (dir / "registry.cpp").string()});
  const ProcessResult r = run_process(argv);
  EXPECT_TRUE(r.started && r.exit_code == 0) << r.err << r.spawn_error;
  return dir / "mod.so";
}

TEST(RuntimeRegistry, ReadsTheOptimizersFromABuiltModule) {
  test::TempDir dir;
  const auto optimizers = read_runtime_registry(build_module(dir, kDescription));
  ASSERT_TRUE(optimizers.has_value());
  ASSERT_EQ(optimizers->size(), 2u);
  EXPECT_EQ((*optimizers)[0].kind, "sgd");
  EXPECT_EQ((*optimizers)[0].python_class, "NpuFusedSGD");
  EXPECT_EQ((*optimizers)[0].options, (std::vector<std::string>{"lr", "momentum"}));
  EXPECT_EQ((*optimizers)[1].state, (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
}

TEST(RuntimeRegistry, AModuleWithoutTheSectionHasNone) {
  test::TempDir dir;
  test::write_file(dir / "plain.cpp", "int f() { return 2; }\n");
  std::vector<std::string> argv = detect_compiler().command;
  argv.insert(argv.end(),
              {"-shared", "-fPIC", "-o", (dir / "plain.so").string(), (dir / "plain.cpp").string()});
  ASSERT_EQ(run_process(argv).exit_code, 0);
  EXPECT_FALSE(read_runtime_registry(dir / "plain.so").has_value());
}

TEST(RuntimeRegistry, RefusesAMalformedDescriptionNamingTheModule) {
  test::TempDir dir;
  const auto module = build_module(dir, R"({"schema": 1, "optimizers": [{"kind": "sgd"}]})");
  try {
    read_runtime_registry(module);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("mod.so"), std::string::npos) << what;
    EXPECT_NE(what.find("the optimizer registry in section .apexnpu_registry is malformed"),
              std::string::npos)
        << what;
  }
}

TEST(RuntimeRegistry, RefusesAnotherSchema) {
  try {
    parse_runtime_registry(R"({"schema": 2, "optimizers": []})", "m.so");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.so: optimizer registry schema 2, this apexnpu reads 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(RuntimeRegistry, TheSectionsPaddingIsNotPartOfTheText) {
  const std::string padded = std::string(kDescription) + std::string("\0\0\0\0", 4);
  EXPECT_EQ(parse_runtime_registry(padded, "m.so").size(), 2u);
}

}  // namespace
}  // namespace apexnpu::compile
