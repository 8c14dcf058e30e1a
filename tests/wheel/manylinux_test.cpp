// PEP 600 tags from binaries the real compiler builds here: a module needing only old glibc
// versions gets the lowest policy and its legacy alias; one calling a function newer than every
// policy (arc4random, glibc 2.36, against the policies up to 2.35) and one linking a library no
// policy allows fall back to linux_<arch>, naming the symbol or the library; zlib's versions are
// policed as glibc's; a claimed tag is checked as verify does.
#include "wheel/manylinux.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/subprocess.h"
#include "elf/dynamic_info.h"
#include "support/test_support.h"
#include "wheel/platform_check.h"

namespace apexnpu::wheel {
namespace {

class Manylinux : public ::testing::Test {
 protected:
  // Compiles `source` into dir/name as a shared object with `extra` arguments; its bytes.
  std::string build(const std::string& name, const std::string& source,
                    const std::vector<std::string>& extra = {}) {
    test::write_file(dir_ / (name + ".cpp"), source);
    std::vector<std::string> argv = compile::detect_compiler().command;
    argv.insert(argv.end(), {"-shared", "-fPIC", "-O2", "-o", (dir_ / name).string(),
                             (dir_ / (name + ".cpp")).string(), "-L" + dir_.path().string()});
    argv.insert(argv.end(), extra.begin(), extra.end());
    const ProcessResult r = run_process(argv);
    EXPECT_TRUE(r.started && r.exit_code == 0) << r.err << r.spawn_error;
    return test::read_file(dir_ / name);
  }
  WheelBinary binary(const std::string& name, const std::string& source,
                     const std::vector<std::string>& extra = {}) {
    return read_wheel_binary("pkg/" + name, build(name, source, extra));
  }
  static std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }

  test::TempDir dir_;
  const ManylinuxPolicies policies_ = load_manylinux_policies(templates_dir());
};

// Plain C functions, no C++ runtime: only libc.
constexpr const char* kPlainC =
    "#include <string.h>\n"
    "extern \"C\" unsigned long plain_length(const char* s) { return strlen(s); }\n";
const std::vector<std::string> kOnlyLibc = {"-nodefaultlibs", "-lc"};

TEST_F(Manylinux, AModuleNeedingOnlyOldGlibcGetsTheLowestPolicyAndItsAlias) {
  const WheelBinary b = binary("plain.so", kPlainC, kOnlyLibc);
  EXPECT_EQ(b.dynamic.needed, std::vector<std::string>{"libc.so.6"});
  const PlatformTags tags = platform_tags(policies_, b.architecture, {b});
  if (b.architecture == "x86_64") {
    EXPECT_EQ(tags.tags, (std::vector<std::string>{"manylinux_2_5_x86_64", "manylinux1_x86_64"}));
    EXPECT_EQ(tags.str(), "manylinux_2_5_x86_64.manylinux1_x86_64");
  } else {
    EXPECT_EQ(tags.tags.front(), "manylinux_2_17_" + b.architecture);
  }
  EXPECT_TRUE(tags.reasons.empty());
}

TEST_F(Manylinux, ATooNewSymbolFallsBackToLinuxNamingIt) {
  const WheelBinary b = binary(
      "new.so", "#include <stdlib.h>\nextern \"C\" unsigned fresh() { return arc4random(); }\n", kOnlyLibc);
  const auto needs = std::find_if(b.dynamic.versions.begin(), b.dynamic.versions.end(),
                                  [](const elf::VersionRequirement& v) { return v.version == "GLIBC_2.36"; });
  ASSERT_NE(needs, b.dynamic.versions.end()) << "arc4random is glibc 2.36's";
  EXPECT_EQ(needs->library, "libc.so.6");
  EXPECT_EQ(needs->symbols, std::vector<std::string>{"arc4random"});

  // Policies up to glibc 2.35: arc4random is newer than every one of them.
  ManylinuxPolicies older = policies_;
  std::erase_if(older.policies, [](const ManylinuxPolicy& p) { return p.glibc_minor > 35; });
  const PlatformTags tags = platform_tags(older, b.architecture, {b});
  EXPECT_EQ(tags.tags, std::vector<std::string>{"linux_" + b.architecture});
  const std::string why = joined(tags.reasons);
  EXPECT_NE(why.find("pkg/new.so needs GLIBC_2.36 from libc.so.6"), std::string::npos) << why;
  EXPECT_NE(why.find("arc4random"), std::string::npos) << why;
  // The bundled policies go on to glibc 2.41, as auditwheel's do: manylinux_2_36 holds.
  EXPECT_EQ(platform_tags(policies_, b.architecture, {b}).tags,
            std::vector<std::string>{"manylinux_2_36_" + b.architecture});
}

TEST_F(Manylinux, ZlibVersionsArePolicedAsGlibcs) {
  // deflatePending is zlib 1.2.5.1's (ZLIB_1.2.5.1): too new for manylinux_2_12's zlib 1.2.3,
  // and manylinux_2_5 allows no versioned zlib symbol at all.
  const WheelBinary b = binary("z.so",
                               "#include <zlib.h>\nextern \"C\" int pending(z_stream* s) { return "
                               "deflatePending(s, nullptr, nullptr); }\n",
                               {"-nodefaultlibs", "-lc", "-lz"});
  const auto needs = std::find_if(b.dynamic.versions.begin(), b.dynamic.versions.end(),
                                  [](const elf::VersionRequirement& v) { return v.library == "libz.so.1"; });
  ASSERT_NE(needs, b.dynamic.versions.end());
  EXPECT_EQ(needs->version, "ZLIB_1.2.5.1");
  EXPECT_EQ(platform_tags(policies_, b.architecture, {b}).tags.front(), "manylinux_2_17_" + b.architecture);
  if (b.architecture != "x86_64") return;  // the older policies are x86_64's only
  const auto policy = [&](int minor) {
    return *std::find_if(policies_.policies.begin(), policies_.policies.end(),
                         [&](const ManylinuxPolicy& p) { return p.glibc_minor == minor; });
  };
  const std::string at12 = joined(policy_violations(policies_, policy(12), {b}));
  EXPECT_NE(at12.find("ZLIB_1.2.5.1 is newer than manylinux_2_12's ZLIB_1.2.2.4"), std::string::npos) << at12;
  const std::string at5 = joined(policy_violations(policies_, policy(5), {b}));
  EXPECT_NE(at5.find("manylinux_2_5 allows no ZLIB version on x86_64"), std::string::npos) << at5;
}

TEST_F(Manylinux, AForbiddenLibraryFallsBackToLinuxNamingIt) {
  build("libforbidden.so", "extern \"C\" int forbidden() { return 7; }\n",
        {"-Wl,-soname,libforbidden.so", "-nodefaultlibs", "-lc"});
  const WheelBinary b =
      binary("user.so", "extern \"C\" int forbidden();\nextern \"C\" int use() { return forbidden(); }\n",
             {"-lforbidden", "-nodefaultlibs", "-lc"});
  EXPECT_NE(std::find(b.dynamic.needed.begin(), b.dynamic.needed.end(), "libforbidden.so"),
            b.dynamic.needed.end());
  const PlatformTags tags = platform_tags(policies_, b.architecture, {b});
  EXPECT_EQ(tags.tags, std::vector<std::string>{"linux_" + b.architecture});
  EXPECT_NE(joined(tags.reasons).find("pkg/user.so links libforbidden.so"), std::string::npos)
      << joined(tags.reasons);
}

TEST_F(Manylinux, AForbiddenSymbolOfAnOldBaselineIsNamed) {
  const WheelBinary b =
      binary("tls.so",
             "extern \"C\" int __cxa_thread_atexit_impl(void (*)(void*), void*, void*);\n"
             "static void done(void*) {}\n"
             "extern \"C\" int at_exit() { return __cxa_thread_atexit_impl(done, nullptr, nullptr); }\n",
             kOnlyLibc);
  const auto& policy = *std::find_if(policies_.policies.begin(), policies_.policies.end(),
                                     [](const ManylinuxPolicy& p) { return p.glibc_minor == 17; });
  const std::string why = joined(policy_violations(policies_, policy, {b}));
  EXPECT_NE(why.find("uses __cxa_thread_atexit_impl from libc.so.6, which manylinux_2_17 lacks"),
            std::string::npos)
      << why;
}

TEST_F(Manylinux, VerifyChecksTheClaimedTag) {
  const std::string fresh =
      build("new.so", "#include <stdlib.h>\nextern \"C\" unsigned f() { return arc4random(); }\n", kOnlyLibc);
  const std::string arch = read_wheel_binary("x", fresh).architecture;
  WheelFiles files{{"pkg/_new.so", fresh}};
  const auto wrong = platform_tag_violations(files, {"cp311-cp311-manylinux_2_17_" + arch}, policies_);
  ASSERT_FALSE(wrong.empty());
  EXPECT_NE(joined(wrong).find("tag manylinux_2_17_" + arch + ": pkg/_new.so needs GLIBC_2.36"),
            std::string::npos)
      << joined(wrong);
  EXPECT_TRUE(platform_tag_violations(files, {"cp311-cp311-linux_" + arch}, policies_).empty());

  const std::string other = arch == "x86_64" ? "aarch64" : "x86_64";
  const auto misplaced = platform_tag_violations(files, {"cp311-cp311-linux_" + other}, policies_);
  EXPECT_NE(joined(misplaced).find("an " + arch + " binary in a wheel tagged linux_" + other),
            std::string::npos)
      << joined(misplaced);

  WheelFiles plain{{"pkg/_plain.so", build("plain.so", kPlainC, kOnlyLibc)}};
  EXPECT_TRUE(
      platform_tag_violations(
          plain, {"cp311-cp311-manylinux_2_28_" + arch, "cp311-cp311-manylinux2014_" + arch}, policies_)
          .empty());
}

TEST(ManylinuxTags, GlibcMinorOfPlatformTags) {
  EXPECT_EQ(manylinux_glibc_minor("manylinux_2_17_x86_64", "x86_64"), 17);
  EXPECT_EQ(manylinux_glibc_minor("manylinux2014_aarch64", "aarch64"), 17);
  EXPECT_EQ(manylinux_glibc_minor("manylinux1_x86_64", "x86_64"), 5);
  EXPECT_EQ(manylinux_glibc_minor("linux_x86_64", "x86_64"), std::nullopt);
  EXPECT_EQ(manylinux_glibc_minor("manylinux_2_17_x86_64", "aarch64"), std::nullopt);
  EXPECT_EQ(manylinux_glibc_minor("manylinux_3_1_x86_64", "x86_64"), std::nullopt);
}

TEST(ManylinuxPolicies, TheBundledPoliciesGoUpFromTheLowest) {
  const auto p = load_manylinux_policies(templates_dir());
  ASSERT_FALSE(p.policies.empty());
  for (const auto& policy : p.policies) {
    EXPECT_TRUE(policy.newest.contains("x86_64")) << policy.name;
    for (const auto& [arch, newest] : policy.newest)
      for (const char* prefix : {"GLIBC", "CXXABI", "GLIBCXX", "GCC", "ZLIB", "LIBATOMIC"})
        EXPECT_TRUE(newest.contains(prefix)) << policy.name << " " << arch << " " << prefix;
  }
  EXPECT_EQ(p.loaders.at("aarch64"), "ld-linux-aarch64.so.1");
}

TEST(ManylinuxPolicies, MalformedPoliciesAreRefusedNamingTheFile) {
  const auto refused = [](const std::string& text) {
    try {
      parse_manylinux_policies(text, "policy.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string base = R"({"libraries": [], "loaders": {}, "policies": [)";
  const std::string p17 = R"({"name": "manylinux_2_17", "newest": {}, "also": {}, "forbidden_symbols": {}})";
  const std::string p12 = R"({"name": "manylinux_2_12", "newest": {}, "also": {}, "forbidden_symbols": {}})";
  EXPECT_NE(refused(base + p17 + "," + p12 + "]}").find("from the lowest glibc up"), std::string::npos);
  EXPECT_NE(refused(base + R"({"name": "musllinux_1_2"}]})").find("is not manylinux_2_N"), std::string::npos);
  EXPECT_NE(refused("{").find("policy.json is malformed"), std::string::npos);
}

}  // namespace
}  // namespace apexnpu::wheel
