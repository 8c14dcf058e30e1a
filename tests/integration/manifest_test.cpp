// `apexnpu manifest` end to end: the whole matrix, and its four questions (--torch, --torch-npu,
// --cann, a wheel's manifest file) on both kinds of output, and its refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "integration/support.h"
#include "manifest/build_manifest.h"

namespace apexnpu::test {
namespace {

class Manifest : public ::testing::Test {
 protected:
  RunResult run(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"manifest"};
    all.insert(all.end(), args.begin(), args.end());
    return run_apexnpu(all, tmp / "home");
  }
  nlohmann::json json(const std::vector<std::string>& args, int exit_code = 0) {
    std::vector<std::string> all = {"--json", "manifest"};
    all.insert(all.end(), args.begin(), args.end());
    const RunResult r = run_apexnpu(all, tmp / "home");
    EXPECT_EQ(r.exit_code, exit_code) << r.err;
    return nlohmann::json::parse(r.out);
  }
  // A manifest as build writes it (manifest::to_json), carrying `matrix`.
  stdfs::path wheel_manifest(const nlohmann::json& matrix) {
    manifest::BuildManifest m;
    m.apexnpu_version = "0.1.0";
    m.wheel_name = "apex";
    m.wheel_version = "0.1+ascend";
    m.wheel_file = "apex-0.1+ascend-cp311-cp311-manylinux_2_17_x86_64.whl";
    m.tree_source = "gen";
    m.upstream_url = "https://github.com/NVIDIA/apex";
    m.upstream_commit = "0123456789abcdef0123456789abcdef01234567";
    m.python_version = "3.11.7";
    m.python_implementation = "cpython";
    m.python_tag = m.abi_tag = "cp311";
    m.platform_tag = "manylinux_2_17_x86_64";
    m.architecture = "x86_64";
    m.emulator =
        manifest::EmulatorWheel{"torch_npu_emulator", "torch_npu_emulator-0.1+ascend-cp37-abi3.whl", ""};
    m.compat_matrix = matrix;
    m.tested_with = matrix.value("tested_with", nlohmann::json::array());
    const stdfs::path file = tmp / "dist" / "apex-0.1+ascend-cp311.manifest.json";
    write_file(file, manifest::to_json(m).dump(2));
    return file;
  }
  nlohmann::json shipped_matrix() {
    return nlohmann::json::parse(
        read_file(stdfs::path(APEXNPU_SOURCE_DIR) / "templates" / "compat_matrix.json"));
  }
  TempDir tmp;
};

TEST_F(Manifest, TheWholeMatrixWithItsSources) {
  const RunResult r = run({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\ntorch_npu +PyTorch +CANN +Python +branch +notes\n")))
      << r.out;
  EXPECT_NE(r.out.find("v2.12.0-26.1.0"), std::string::npos);
  EXPECT_NE(r.out.find("1.11.0.rc2 (beta)"), std::string::npos);
  EXPECT_NE(r.out.find("ascend_compatibility: github.com/Ascend/pytorch COMPATIBILITY.md"),
            std::string::npos);
  const auto doc = json({});
  EXPECT_EQ(doc["matrix"]["schema_version"], 2);
  EXPECT_EQ(doc["releases"].size(), 64u);
  EXPECT_EQ(doc["apex_manual"].size(), 16u);
}

TEST_F(Manifest, TorchWithReleases) {
  const RunResult r = run({"--torch", "2.13.0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PyTorch 2.13.0: 1 torch_npu release(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PyPI, requires torch==2.13.0.*"), std::string::npos);
  EXPECT_NE(r.out.find("Ascend lists Python 3.10, 3.11, 3.12, 3.13, 3.14 for PyTorch 2.13.0"),
            std::string::npos);
  EXPECT_NE(r.out.find("torch 2.13.0 on Python 3.11"), std::string::npos);
  const auto a = json({"--torch", "2.13.0+cpu"})["answer"];
  EXPECT_EQ(a["torch"], "2.13.0");
  EXPECT_EQ(a["releases"][0]["torch_npu"], "2.13.0");
  EXPECT_FALSE(a["releases"][0].contains("cann"));  // PyPI publishes none
  EXPECT_EQ(a["newer_than_newest"], false);
  EXPECT_EQ(a["tested_with"][0]["torch"], "2.13.0");

  const auto cann = json({"--torch", "2.5.1"})["answer"]["releases"];
  ASSERT_EQ(cann.size(), 2u);
  EXPECT_EQ(cann[0]["cann"], "8.2.RC1");
  EXPECT_EQ(cann[1]["branch"], "v2.5.1-7.0.0");
  EXPECT_EQ(cann[1]["python"], nlohmann::json({"3.9", "3.10", "3.11"}));
}

TEST_F(Manifest, EveryTorchOfTheMatrixIsAnswered) {
  const auto matrix = shipped_matrix();
  std::set<std::string> torch;
  for (const auto& r : matrix["releases"]) torch.insert(r["torch"].get<std::string>());
  for (const auto& p : matrix["python_by_torch"]) torch.insert(p["torch"].get<std::string>());
  for (const auto& t : matrix["tested_with"]) torch.insert(t["torch"].get<std::string>());
  EXPECT_EQ(torch.size(), 19u);
  for (const auto& t : torch) {
    const auto a = json({"--torch", t})["answer"];
    EXPECT_TRUE(!a["releases"].empty() || a.contains("nearest_older")) << t;
  }
}

TEST_F(Manifest, TorchOfTheApexManual) {
  const auto a = json({"--torch", "1.11.0"})["answer"];
  std::vector<std::string> exact;
  for (const auto& m : a["apex_manual"])
    if (m["exact"] == true) exact.push_back(m["ascend_pytorch"]);
  EXPECT_EQ(exact, (std::vector<std::string>{"5.0.rc1", "5.0.rc2", "5.0.rc3"}));
  EXPECT_EQ(a["releases"].size(), 10u);
  const RunResult r = run({"--torch", "1.11.0"});
  EXPECT_NE(r.out.find("v1.11.0-5.0.rc1"), std::string::npos);
  EXPECT_NE(r.out.find("The Ascend Apex-patch manual:"), std::string::npos);
}

TEST_F(Manifest, TorchNewerThanTheNewestRelease) {
  const RunResult r = run({"--torch", "2.15.0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PyTorch 2.15.0 is newer than the newest torch_npu release: torch_npu 2.14.0 "
                       "(PyTorch 2.14.0, requires torch==2.14.0.*)"),
            std::string::npos)
      << r.out;
  const auto a = json({"--torch", "2.15.0"})["answer"];
  EXPECT_EQ(a["newer_than_newest"], true);
  EXPECT_EQ(a["releases"].size(), 0u);
  EXPECT_EQ(a["newest"]["torch_npu"], "2.14.0");
}

TEST_F(Manifest, TorchWithoutAReleaseButTested) {
  const RunResult r = run({"--torch", "1.13.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PyTorch 1.13.1: no torch_npu release is for it; the nearest are torch_npu "
                       "1.11.0.post14 (PyTorch 1.11.0, CANN 8.0.RC2) and torch_npu 2.0.1.post1"),
            std::string::npos)
      << r.out;
  const auto a = json({"--torch", "1.13.1"})["answer"];
  EXPECT_EQ(a["nearest_older"]["torch"], "1.11.0");
  EXPECT_EQ(a["nearest_newer"]["torch"], "2.0.1");
  EXPECT_EQ(a["tested_with"][0]["source"], "Debian bookworm python3-torch");
}

TEST_F(Manifest, TorchNpuAndCann) {
  const RunResult r = run({"--torch-npu", "2.1.0.post17"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2.1.0.post17  2.1.0    8.3.RC1  3.8, 3.9, 3.10, 3.11  v2.1.0-7.2.0"),
            std::string::npos)
      << r.out;
  // A 5.0-era release with its AscendPyTorch release and Apex branch, joined by its branch.
  const auto old = json({"--torch-npu", "2.0.1"});
  EXPECT_EQ(old["releases"][0]["cann"], "7.0.RC1");
  EXPECT_EQ(old["apex_manual"][0]["apex_branches"], nlohmann::json({"5.0.rc3"}));

  const RunResult c = run({"--cann", "CANN 8.1.RC1"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("2.3.1.post6"), std::string::npos);
  const auto doc = json({"--cann", "8.1.rc1"});
  std::vector<std::string> torch;
  for (const auto& rel : doc["releases"]) torch.push_back(rel["torch"]);
  EXPECT_EQ(torch, (std::vector<std::string>{"2.5.1", "2.4.0", "2.3.1", "2.1.0"}));
}

TEST_F(Manifest, UnknownVersionsAreRefusedByName) {
  RunResult r = run({"--torch", "0.4.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--torch 0.4.1: no torch_npu release"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("known PyTorch versions: 2.14.0, 2.13.0, 2.12.0"), std::string::npos) << r.err;
  r = run({"--torch", "latest"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--torch latest: not a version"), std::string::npos) << r.err;
  r = run({"--torch-npu", "2.15.0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("newer than the newest torch_npu release the compatibility matrix knows (2.14.0)"),
            std::string::npos)
      << r.err;
  r = run({"--torch-npu", "1.9.0"});
  EXPECT_NE(r.err.find("no such torch_npu release"), std::string::npos) << r.err;
  r = run({"--cann", "4.0.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("known CANN versions: 9.1.0, 9.0.0, 8.5.0"), std::string::npos) << r.err;
  const auto doc = json({"--cann", "4.0.1"}, 1);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_NE(doc["error"]["hint"].get<std::string>().find("6.3.RC3.1"), std::string::npos);
  EXPECT_EQ(run({"--torch", "2.1.0", "--cann", "8.0.0"}).exit_code, 2);  // one question at a time
}

TEST_F(Manifest, AWheelsManifest) {
  const stdfs::path file = wheel_manifest(shipped_matrix());
  const RunResult r = run({file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("apex 0.1+ascend (apex-0.1+ascend-cp311-cp311-manylinux_2_17_x86_64.whl), built by "
                       "apexnpu 0.1.0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Made for: Python 3.11.7 (cp311-cp311), manylinux_2_17_x86_64, x86_64"),
            std::string::npos);
  EXPECT_NE(r.out.find("Made from: https://github.com/NVIDIA/apex at 0123456789ab"), std::string::npos);
  EXPECT_NE(r.out.find("torch 2.13.0 on Python 3.11, emulated NPU (CPU)"), std::string::npos);
  EXPECT_NE(r.out.find("for Python 3.11 (the matrix the wheel carries)"), std::string::npos);
  const auto a = json({file.string()})["answer"];
  EXPECT_EQ(a["made_for"]["python_tag"], "cp311");
  EXPECT_EQ(a["made_for"]["emulator_wheel"], "torch_npu_emulator-0.1+ascend-cp37-abi3.whl");
  EXPECT_EQ(a["tested_with"].size(), 2u);
  EXPECT_EQ(a["matrix_from"], "wheel");
  const auto& releases = a["goes_with"]["releases"];
  ASSERT_FALSE(releases.empty());
  for (const auto& rel : releases) EXPECT_NE(rel["python"].dump().find("\"3.11\""), std::string::npos);
  EXPECT_EQ(releases[0]["torch_npu"], "2.14.0");
}

TEST_F(Manifest, AnOlderWheelsManifestIsAnsweredFromThisMatrix) {
  const nlohmann::json old = {{"schema_version", 1}, {"rows", nlohmann::json::array()}};
  const auto a = json({wheel_manifest(old).string()})["answer"];
  EXPECT_EQ(a["matrix_from"], "apexnpu");
  EXPECT_FALSE(a["goes_with"]["releases"].empty());
}

TEST_F(Manifest, FilesThatAreNotAManifestAreRefused) {
  RunResult r = run({(tmp / "absent.manifest.json").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("absent.manifest.json: no such manifest file"), std::string::npos) << r.err;
  write_file(tmp / "junk.manifest.json", "{ not json");
  r = run({(tmp / "junk.manifest.json").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("junk.manifest.json: not JSON"), std::string::npos) << r.err;
  write_file(tmp / "matrix.json", shipped_matrix().dump());
  r = run({(tmp / "matrix.json").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a build manifest"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace apexnpu::test
