// compile::build_native with the real compiler on a tiny runtime written by the test: the
// object cache (nothing recompiled when nothing changed; a header edit recompiles exactly its
// includers), per-ISA kernel compilation, and compiler failures shown with the command.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "compile/file_io.h"
#include "compile/native_build.h"
#include "compile/object_cache.h"
#include "core/error.h"

namespace apexnpu::compile {
namespace {
namespace fs = std::filesystem;

class NativeBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir(fs::temp_directory_path() / ("apexnpu-native-" + unique_suffix()));
    rt_ = dir_.path() / "runtime";
    write("build.json", R"({"runtime_version": "9.9.9", "std": "c++20", "include_dirs": ["."],
      "kernel_suffix": ".kernels.cpp", "excluded_dirs": ["python"],
      "isa_levels": [{"name": "scalar", "level": 0, "flags": []},
                     {"name": "avx2", "level": 1, "flags": ["-mavx2"]}],
      "binding": {"modules": [{"name": "pkg._mod", "sources": ["python/mod.cpp"]}]}})");
    write("core/answer.h", "#pragma once\nint answer();\n");
    write("core/answer.cpp", "#include \"core/answer.h\"\nint answer() { return 42; }\n");
    write("core/other.cpp", "int other() { return 1; }\n");
    write("k/sum.kernels.cpp",
          "#define NS_CAT2(a,b) a##b\n#define NS_CAT(a,b) NS_CAT2(a,b)\n"
          "namespace NS_CAT(isa, APEXNPU_ISA_LEVEL) { int sum(int a) { return a + 1; } }\n");
    write("python/mod.cpp",
          "#include \"core/answer.h\"\n"
          "extern \"C\" __attribute__((visibility(\"default\"))) int pkg_mod_answer() "
          "{ return answer(); }\n");
    fs::create_directories(dir_.path() / "py");
  }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((rt_ / rel).parent_path());
    std::ofstream(rt_ / rel) << text;
  }
  NativeBuildResult build() {
    NativeBuildOptions o;
    o.runtime_dir = rt_;
    o.cache_dir = dir_.path() / "cache";
    o.output_dir = dir_.path() / ("out-" + unique_suffix());
    o.jobs = 2;
    const auto config = load_runtime_build_config(rt_);
    return build_native(o, config, detect_compiler(), {"3.11.0", dir_.path() / "py", ".test.so"});
  }
  TempDir dir_;
  fs::path rt_;
};

TEST_F(NativeBuild, CachesEverythingAndRecompilesOnlyIncludersOfAChangedHeader) {
  const auto first = build();
  // core: answer.cpp, other.cpp; kernels: sum.kernels.cpp x 2 levels; binding: mod.cpp.
  EXPECT_EQ(first.total, 5u);
  EXPECT_EQ(first.compiled, 5u);
  EXPECT_EQ(first.linked, 1u);
  ASSERT_EQ(first.modules.size(), 1u);
  EXPECT_EQ(first.modules[0].relative_path, "pkg/_mod.test.so");
  EXPECT_TRUE(fs::is_regular_file(first.modules[0].file));
  EXPECT_EQ(first.isa_levels, (std::vector<std::string>{"scalar", "avx2"}));
  const std::string so = read_file(first.modules[0].file);

  const auto again = build();
  EXPECT_EQ(again.compiled, 0u);
  EXPECT_EQ(again.linked, 0u);
  EXPECT_EQ(read_file(again.modules[0].file), so);

  write("core/answer.h", "#pragma once\nint answer();  // edited\n");
  const auto after_edit = build();
  EXPECT_EQ(after_edit.compiled, 2u);  // answer.cpp and python/mod.cpp include it
  EXPECT_EQ(after_edit.linked, 1u);
}

TEST_F(NativeBuild, FlagsFollowTheIssue) {
  const auto r = build();
  const auto has = [](const std::vector<std::string>& v, const std::string& f) {
    return std::find(v.begin(), v.end(), f) != v.end();
  };
  for (const char* f : {"-std=c++20", "-O3", "-fPIC", "-fvisibility=hidden",
                        "-fstack-protector-strong", "-D_FORTIFY_SOURCE=2"})
    EXPECT_TRUE(has(r.compile_flags, f)) << f;
  EXPECT_TRUE(has(r.compile_flags, "-DAPEXNPU_RUNTIME_VERSION=\"9.9.9\""));
  for (const char* f : {"-shared", "-Wl,-z,relro,-z,now", "-Wl,-z,noexecstack", "-s"})
    EXPECT_TRUE(has(r.link_flags, f)) << f;
  EXPECT_FALSE(has(r.compile_flags, "-march=native"));
  const auto debug = base_link_flags(true, true);
  EXPECT_TRUE(has(debug, "-g"));
  EXPECT_FALSE(has(debug, "-s"));
  EXPECT_TRUE(has(debug, "-march=native"));
}

TEST_F(NativeBuild, CompilerFailureShowsItsMessageAndTheCommand) {
  write("core/other.cpp", "int other() { return undeclared_thing; }\n");
  try {
    build();
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("compiling core/other.cpp failed"), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_thing"), std::string::npos) << what;  // the compiler's words
    EXPECT_NE(what.find("command: "), std::string::npos) << what;
    EXPECT_NE(what.find("core/other.cpp -MMD"), std::string::npos) << what;
  }
}

TEST_F(NativeBuild, ConcurrentBuildsSharingACacheCompileEachObjectOnce) {
  NativeBuildResult a, b;
  std::thread other([&] { a = build(); });
  b = build();
  other.join();
  EXPECT_EQ(a.compiled + b.compiled, 5u);  // every unit compiled by exactly one of the two
  EXPECT_EQ(read_file(a.modules[0].file), read_file(b.modules[0].file));
}

TEST(Depfile, ParsesMakeSyntax) {
  EXPECT_EQ(parse_depfile("out.o: a.cpp b\\ c.h \\\n  /x/d.h\n"),
            (std::vector<std::string>{"a.cpp", "b c.h", "/x/d.h"}));
  EXPECT_EQ(parse_depfile("o.o: a.cpp\nb.h:\n"), (std::vector<std::string>{"a.cpp"}));
}

}  // namespace
}  // namespace apexnpu::compile
