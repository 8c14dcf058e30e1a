// A built wheel's manifest read back, and the clear refusals of a file that is not one.
#include "manifest/wheel_manifest.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"

namespace apexnpu::manifest {
namespace {

using test::TempDir;

nlohmann::json a_manifest() {
  return {{"schema_version", 3},
          {"apexnpu_version", "0.1.0"},
          {"wheel", {{"name", "apex"}, {"version", "0.1+ascend"}, {"file", "apex-0.1+ascend-cp311.whl"}}},
          {"source", {{"upstream_url", "https://example.com/apex"}, {"upstream_commit", nullptr}}},
          {"python",
           {{"version", "3.11.7"},
            {"python_tag", "cp311"},
            {"abi_tag", "cp311"},
            {"platform_tag", "manylinux_2_17_x86_64"}}},
          {"runtime", {{"architecture", "x86_64"}}},
          {"emulator", {{"file", "torch_npu_emulator-0.1+ascend-cp37-abi3.whl"}}},
          {"tested_with", nlohmann::json::array({{{"torch", "2.13.0"}}})},
          {"compatibility", {{"schema_version", 1}, {"rows", nlohmann::json::array()}}}};
}

std::string refusal(const std::filesystem::path& file) {
  try {
    read_wheel_manifest(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(WheelManifest, ReadsWhatTheWheelWasMadeFor) {
  TempDir tmp;
  test::write_file(tmp / "w.manifest.json", a_manifest().dump());
  const auto w = read_wheel_manifest(tmp / "w.manifest.json");
  EXPECT_EQ(w.wheel_file, "apex-0.1+ascend-cp311.whl");
  EXPECT_EQ(python_line(w.python_version), "3.11");
  EXPECT_EQ(w.platform_tag, "manylinux_2_17_x86_64");
  EXPECT_EQ(w.upstream_url, "https://example.com/apex");
  EXPECT_FALSE(w.upstream_commit);
  EXPECT_EQ(w.emulator_file, "torch_npu_emulator-0.1+ascend-cp37-abi3.whl");
  EXPECT_EQ(w.tested_with[0]["torch"], "2.13.0");
  EXPECT_EQ(w.matrix.schema_version, 1);
}

TEST(WheelManifest, RefusesWhatIsNotOne) {
  TempDir tmp;
  EXPECT_NE(refusal(tmp / "absent.json").find("no such manifest file"), std::string::npos);
  test::write_file(tmp / "junk.json", "not json");
  EXPECT_NE(refusal(tmp / "junk.json").find("junk.json: not JSON"), std::string::npos);
  test::write_file(tmp / "other.json", R"({"name": "x"})");
  EXPECT_NE(refusal(tmp / "other.json").find("not a build manifest"), std::string::npos);
  auto broken = a_manifest();
  broken["python"].erase("abi_tag");
  test::write_file(tmp / "broken.json", broken.dump());
  EXPECT_NE(refusal(tmp / "broken.json").find("a field missing"), std::string::npos);
}

TEST(WheelManifest, PythonLine) {
  EXPECT_EQ(python_line("3.11.7"), "3.11");
  EXPECT_EQ(python_line("3.8"), "3.8");
}

}  // namespace
}  // namespace apexnpu::manifest
