// compile::build_native with the real compiler on a tiny runtime written by the test: the
// object cache (nothing recompiled when nothing changed; a header edit recompiles exactly its
// includers), per-ISA kernel compilation, and compiler failures shown with the command.
#include "compile/native_build.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "compile/object_cache.h"
#include "compile/unity_batches.h"
#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::compile {
namespace {
namespace stdfs = std::filesystem;

class NativeBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir(stdfs::temp_directory_path() / ("apexnpu-native-" + unique_suffix()));
    rt_ = dir_.path() / "runtime";
    write("build.json", R"({"runtime_version": "9.9.9", "std": "c++20", "include_dirs": ["."],
      "kernel_suffix": ".kernels.cpp", "excluded_dirs": ["python"],
      "isa_levels": {"x86_64": [{"name": "scalar", "level": 0, "flags": []},
                                {"name": "avx2", "level": 1, "flags": ["-mavx2"]}]},
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
    stdfs::create_directories(dir_.path() / "py");
  }
  void write(const std::string& rel, const std::string& text) {
    stdfs::create_directories((rt_ / rel).parent_path());
    std::ofstream(rt_ / rel) << text;
  }
  NativeBuildResult build(std::vector<TargetPython> pythons = {{"3.11.0", {}, ".test.so"}}) {
    for (auto& p : pythons)
      if (p.include_dir.empty()) p.include_dir = dir_.path() / "py";
    NativeBuildOptions o;
    o.runtime_dir = rt_;
    o.cache_dir = dir_.path() / "cache";
    o.output_dir = dir_.path() / ("out-" + unique_suffix());
    o.jobs = 2;
    const auto config = load_runtime_build_config(rt_);
    return build_native(o, config, detect_compiler(), pythons);
  }
  TempDir dir_;
  stdfs::path rt_;
};

TEST_F(NativeBuild, CachesEverythingAndRecompilesOnlyIncludersOfAChangedHeader) {
  const auto first = build();
  // core: answer.cpp, other.cpp; kernels: sum.kernels.cpp x 2 levels; binding: mod.cpp.
  EXPECT_EQ(first.total, 5u);
  EXPECT_EQ(first.compiled, 5u);
  EXPECT_EQ(first.linked, 1u);
  ASSERT_EQ(first.modules.size(), 1u);
  EXPECT_EQ(first.modules[0].relative_path, "pkg/_mod.test.so");
  EXPECT_TRUE(stdfs::is_regular_file(first.modules[0].file));
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

TEST_F(NativeBuild, SeveralPythonsShareOneRuntimeAndCompileOnlyTheirBindings) {
  const auto both = build({{"3.11.0", {}, ".a.so"}, {"3.12.1", {}, ".b.so"}});
  // core: answer.cpp, other.cpp; kernels: sum.kernels.cpp x 2 levels; binding: mod.cpp x 2.
  EXPECT_EQ(both.total, 6u);
  EXPECT_EQ(both.compiled, 6u);
  ASSERT_EQ(both.modules.size(), 2u);
  EXPECT_EQ(both.modules[0].python, 0u);
  EXPECT_EQ(both.modules[0].relative_path, "pkg/_mod.a.so");
  EXPECT_EQ(both.modules[1].python, 1u);
  EXPECT_EQ(both.modules[1].relative_path, "pkg/_mod.b.so");
  EXPECT_NE(both.modules[0].file.parent_path(), both.modules[1].file.parent_path());
  for (const auto& m : both.modules) EXPECT_TRUE(stdfs::is_regular_file(m.file)) << m.file;

  // A third Python later: the runtime comes from the cache, only its binding compiles.
  const auto third = build({{"3.13.0", {}, ".c.so"}});
  EXPECT_EQ(third.total, 5u);
  EXPECT_EQ(third.compiled, 1u);
  EXPECT_EQ(third.linked, 1u);
}

TEST_F(NativeBuild, FlagsFollowTheIssue) {
  const auto r = build();
  const auto has = [](const std::vector<std::string>& v, const std::string& f) {
    return std::find(v.begin(), v.end(), f) != v.end();
  };
  for (const char* f : {"-std=c++20", "-O3", "-fPIC", "-fvisibility=hidden", "-fstack-protector-strong",
                        "-D_FORTIFY_SOURCE=2"})
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

// The same build with unity batches (build.json "unity"): fewer compilations, a module that
// links and runs, and a cache that recompiles only the batch holding an edited file.
class NativeUnityBuild : public NativeBuild {
 protected:
  void SetUp() override {
    NativeBuild::SetUp();
    write("build.json", R"({"runtime_version": "9.9.9", "std": "c++20", "include_dirs": ["."],
      "kernel_suffix": ".kernels.cpp", "excluded_dirs": ["python"],
      "isa_levels": {"x86_64": [{"name": "scalar", "level": 0, "flags": []},
                                {"name": "avx2", "level": 1, "flags": ["-mavx2"]}]},
      "unity": {"core_batches": 1, "kernel_batches": 1, "binding_batches": 1},
      "binding": {"modules": [{"name": "pkg._mod",
                               "sources": ["python/mod.cpp", "python/extra.cpp"]}]}})");
    // Same-named helpers in anonymous namespaces would collide in a batch; these differ.
    write("core/other.cpp", "namespace { int one() { return 1; } }\nint other() { return one(); }\n");
    write("k/twice.kernels.cpp",
          "#define NS_CAT2(a,b) a##b\n#define NS_CAT(a,b) NS_CAT2(a,b)\n"
          "namespace NS_CAT(isa, APEXNPU_ISA_LEVEL) { int twice(int a) { return 2 * a; } }\n");
    write("python/extra.cpp",
          "int other();\n"
          "namespace isa0 { int sum(int); int twice(int); }\n"
          "namespace isa1 { int sum(int); int twice(int); }\n"
          "extern \"C\" __attribute__((visibility(\"default\"))) int pkg_mod_extra() "
          "{ return other() + isa0::sum(1) + isa1::twice(3); }\n");
  }
  // Calls an exported function of a built module.
  static int call(const stdfs::path& module, const char* symbol) {
    void* handle = ::dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) throw std::runtime_error(::dlerror());
    auto* fn = reinterpret_cast<int (*)()>(::dlsym(handle, symbol));
    const int value = fn != nullptr ? fn() : -1;
    ::dlclose(handle);
    return value;
  }
  std::vector<stdfs::path> leftovers() const {
    std::vector<stdfs::path> found;
    std::error_code ec;
    for (const auto& e : stdfs::directory_iterator(dir_.path() / "cache" / "tmp", ec))
      found.push_back(e.path());
    return found;
  }
};

TEST_F(NativeUnityBuild, BatchesCompileOnceLinkAndRecompileOnlyTheirOwnBatch) {
  const auto first = build();
  // core: one batch; kernels: one batch per level; binding: one batch.
  EXPECT_EQ(first.total, 4u);
  EXPECT_EQ(first.compiled, 4u);
  ASSERT_EQ(first.modules.size(), 1u);
  EXPECT_EQ(call(first.modules[0].file, "pkg_mod_answer"), 42);
  EXPECT_EQ(call(first.modules[0].file, "pkg_mod_extra"), 1 + 2 + 6);
  EXPECT_TRUE(leftovers().empty());  // the generated batch files are gone

  const auto again = build();
  EXPECT_EQ(again.compiled, 0u);
  EXPECT_EQ(again.linked, 0u);

  write("k/twice.kernels.cpp",
        "#define NS_CAT2(a,b) a##b\n#define NS_CAT(a,b) NS_CAT2(a,b)\n"
        "namespace NS_CAT(isa, APEXNPU_ISA_LEVEL) { int twice(int a) { return a + a + 1; } }\n");
  const auto after_edit = build();
  EXPECT_EQ(after_edit.compiled, 2u);  // the kernel batch at each of the two levels
  EXPECT_EQ(after_edit.linked, 1u);
  EXPECT_EQ(call(after_edit.modules[0].file, "pkg_mod_extra"), 1 + 2 + 7);
}

TEST_F(NativeUnityBuild, ACollisionInABatchNamesTheBatchAndKeepsItsGeneratedFile) {
  write("core/answer.cpp",
        "#include \"core/answer.h\"\nnamespace { int one() { return 1; } }\n"
        "int answer() { return 41 + one(); }\n");
  try {
    build();
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("compiling core batch 1/1 (core/answer.cpp, core/other.cpp) failed"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("redefinition"), std::string::npos) << what;  // the compiler's words
    EXPECT_NE(e.hint().find("anonymous namespaces"), std::string::npos) << e.hint();
  }
  const auto kept = leftovers();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(read_file(kept[0] / "unity.cpp"), unity_source_text({"core/answer.cpp", "core/other.cpp"}));
}

TEST_F(NativeUnityBuild, DebugObjectsDoNotDependOnTheCacheLocation) {
  const auto build_debug = [&](const std::string& cache) {
    NativeBuildOptions o;
    o.runtime_dir = rt_;
    o.cache_dir = dir_.path() / cache;
    o.output_dir = dir_.path() / ("out-" + cache);
    o.debug = true;
    return build_native(o, load_runtime_build_config(rt_), detect_compiler(),
                        {{"3.11.0", dir_.path() / "py", ".test.so"}});
  };
  const auto a = build_debug("cache-a");
  const auto b = build_debug("cache-b-with-a-longer-name");
  EXPECT_EQ(read_file(a.modules[0].file), read_file(b.modules[0].file));
}

TEST(Depfile, ParsesMakeSyntax) {
  EXPECT_EQ(parse_depfile("out.o: a.cpp b\\ c.h \\\n  /x/d.h\n"),
            (std::vector<std::string>{"a.cpp", "b c.h", "/x/d.h"}));
  EXPECT_EQ(parse_depfile("o.o: a.cpp\nb.h:\n"), (std::vector<std::string>{"a.cpp"}));
}

}  // namespace
}  // namespace apexnpu::compile
