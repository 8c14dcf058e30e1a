// Interpreter discovery over fake PATH / pyenv folders, probe parsing, tags, support checks,
// and one real probe of the system Python.
#include "python/interpreter.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::python {
namespace {
namespace stdfs = std::filesystem;

class Interpreter : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir(stdfs::temp_directory_path() / ("apexnpu-interp-" + unique_suffix()));
    stdfs::create_directories(dir_.path());
  }
  stdfs::path make_exe(const stdfs::path& rel) {
    const stdfs::path p = dir_.path() / rel;
    stdfs::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\nexit 0\n";
    stdfs::permissions(p, stdfs::perms(0755));
    return p;
  }
  TempDir dir_;
};

TEST_F(Interpreter, VersionOnPathWinsAndShimsAreSkipped) {
  const stdfs::path root = dir_.path() / "pyenv";
  make_exe("pyenv/shims/python3.9");
  const stdfs::path on_path = make_exe("bin/python3.9");
  make_exe("pyenv/versions/3.9.18/bin/python3.9");
  SearchEnv env{(root / "shims").string() + ":" + (dir_.path() / "bin").string(), root};
  EXPECT_EQ(find_python("3.9", env), on_path);
}

TEST_F(Interpreter, PyenvHighestPatchAndNoPrefixConfusion) {
  const stdfs::path root = dir_.path() / "pyenv";
  make_exe("pyenv/versions/3.1.5/bin/python3.1");
  make_exe("pyenv/versions/3.10.2/bin/python3.10");
  const stdfs::path best = make_exe("pyenv/versions/3.10.13/bin/python3.10");
  make_exe("pyenv/versions/3.10.9/bin/python3.10");
  SearchEnv env{(dir_.path() / "empty").string(), root};
  EXPECT_EQ(find_python("3.10", env), best);
  try {
    find_python("3.12", env);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("python3.12 on PATH"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("versions/3.12*"), std::string::npos) << e.what();
  }
}

TEST_F(Interpreter, AVersionNotInstalledIsAFailureValueNamingWhereItLooked) {
  const stdfs::path root = dir_.path() / "pyenv";
  const stdfs::path installed = make_exe("pyenv/versions/3.11.7/bin/python3.11");
  SearchEnv env{(dir_.path() / "empty").string(), root};
  const Expected<stdfs::path> found = locate_python("3.11", env);
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ(*found, installed);
  const Expected<stdfs::path> missing = locate_python("3.8", env);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(),
            fmt::format("no Python 3.8 found (searched python3.8 on PATH, {}/versions/3.8*/bin/"
                        "python3.8)",
                        root.string()));
}

TEST_F(Interpreter, BadRequests) {
  SearchEnv env{"", dir_.path()};
  EXPECT_THROW(find_python("2", env), UsageError);
  EXPECT_THROW(find_python("3.x", env), UsageError);
  EXPECT_THROW(find_python("/nonexistent/python", env), Error);
}

TEST(ProbeOutput, TagsFromSoabiNeverHardCoded) {
  const auto py37 = parse_probe_output("p", R"({"version":"3.7.16","major":3,"minor":7,
    "implementation":"cpython","soabi":"cpython-37m-x86_64-linux-gnu",
    "ext_suffix":".cpython-37m-x86_64-linux-gnu.so","include":"/i","includepy":"/i",
    "platform":"linux-x86_64","pointer_bits":64})");
  EXPECT_EQ(wheel_tag(py37).str(), "cp37-cp37m-linux_x86_64");
  auto py311 = py37;
  py311.major = 3;
  py311.minor = 11;
  py311.soabi = "cpython-311-x86_64-linux-gnu";
  EXPECT_EQ(wheel_tag(py311).str(), "cp311-cp311-linux_x86_64");
  py311.platform = "macosx-10.9-x86_64";
  EXPECT_EQ(wheel_tag(py311).platform, "macosx_10_9_x86_64");
  EXPECT_THROW(parse_probe_output("p", "not json"), Error);
}

TEST(ProbeOutput, SupportChecks) {
  PythonInfo ok{"p",
                "3.13.0",
                3,
                13,
                "cpython",
                "cpython-313-x86_64-linux-gnu",
                ".cpython-313-x86_64-linux-gnu.so",
                "/i",
                "/i",
                "linux-x86_64",
                64};
  EXPECT_NO_THROW(check_supported(ok));
  auto py36 = ok;
  py36.minor = 6;
  EXPECT_THROW(check_supported(py36), Error);
  auto py314 = ok;
  py314.minor = 14;
  EXPECT_THROW(check_supported(py314), Error);
  auto py2 = ok;
  py2.major = 2;
  py2.minor = 7;
  py2.version = "2.7.18";
  try {
    check_supported(py2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Python 2.7 is not supported"), std::string::npos);
  }
  auto pypy = ok;
  pypy.implementation = "pypy";
  EXPECT_THROW(check_supported(pypy), Error);
  auto bits32 = ok;
  bits32.pointer_bits = 32;
  EXPECT_THROW(check_supported(bits32), Error);
}

TEST(ProbeOutput, MissingHeadersNameTheDevPackage) {
  PythonInfo info{"p",       "3.9.1",
                  3,         9,
                  "cpython", "cpython-39-x86_64-linux-gnu",
                  ".so",     "/nonexistent/include/python3.9",
                  "",        "linux-x86_64",
                  64};
  try {
    find_python_headers(info);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/include/python3.9"), std::string::npos);
    EXPECT_NE(e.hint().find("python3.9-dev"), std::string::npos);
  }
}

TEST(RealProbe, SystemPython) {
  if (!stdfs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const PythonInfo info = probe_python("/usr/bin/python3");
  EXPECT_EQ(info.implementation, "cpython");
  EXPECT_EQ(info.major, 3);
  EXPECT_EQ(info.pointer_bits, 64);
  EXPECT_NE(info.ext_suffix.find(info.soabi), std::string::npos);
  EXPECT_EQ(wheel_tag(info).python, "cp3" + std::to_string(info.minor));
}

TEST(RealProbe, NotAPython) {
  EXPECT_THROW(probe_python("/bin/true"), Error);
  EXPECT_THROW(probe_python("/nonexistent"), Error);
}

}  // namespace
}  // namespace apexnpu::python
