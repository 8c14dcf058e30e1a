// wheel::verify_wheel on in-memory wheels: a valid one, then one violation at a time.
#include "wheel/verify.h"

#include <gtest/gtest.h>

#include <functional>

#include "wheel/record.h"

namespace apexnpu::wheel {
namespace {

constexpr const char* kDi = "apex-0.1+ascend.dist-info";
const std::string kSo = "apex/_apexnpu.cpython-311-x86_64-linux-gnu.so";

// The 64-byte header of an ELF64 little-endian shared object for `machine` (62: x86_64), with
// no sections: a module that needs nothing, so any platform tag of its architecture holds.
std::string minimal_elf(unsigned char machine = 62) {
  std::string b(64, '\0');
  b.replace(0, 7,
            std::string("\x7f"
                        "ELF\x02\x01\x01",
                        7));
  b[16] = 3;  // ET_DYN
  b[18] = static_cast<char>(machine);
  return b;
}

WheelFiles valid_files() {
  WheelFiles f;
  f["apex/__init__.py"] = "x = 1\n";
  f[kSo] = minimal_elf();
  f[std::string(kDi) + "/METADATA"] = "Metadata-Version: 2.1\nName: apex\nVersion: 0.1+ascend\n";
  f[std::string(kDi) + "/WHEEL"] =
      "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n";
  const std::string record = std::string(kDi) + "/RECORD";
  f[record] = format_record(f, record);
  return f;
}

std::string& record_of(WheelFiles& f) { return f[std::string(kDi) + "/RECORD"]; }

void replace(std::string& s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

// Expects exactly one violation containing `needle`.
void expect_violation(const WheelUnderCheck& w, const std::string& needle) {
  const auto r = verify_wheel(w);
  ASSERT_EQ(r.violations.size(), 1u) << "expected only: " << needle << "\ngot:\n"
                                     << (r.violations.empty() ? "" : r.violations[0]);
  EXPECT_NE(r.violations[0].find(needle), std::string::npos) << r.violations[0];
}

TEST(Verify, ValidWheelPasses) {
  WheelUnderCheck w{valid_files(), "apex-0.1+ascend-cp311-cp311-linux_x86_64.whl"};
  const auto r = verify_wheel(w);
  EXPECT_TRUE(r.ok()) << r.violations.front();
  EXPECT_EQ(r.dist_info, kDi);
  EXPECT_EQ(r.tags, std::vector<std::string>{"cp311-cp311-linux_x86_64"});
}

TEST(Verify, WrongHash) {
  WheelUnderCheck w{valid_files(), {}};
  w.files["apex/__init__.py"] = "x = 2\n";  // same size, other bytes
  expect_violation(w, "hash mismatch");
}

TEST(Verify, WrongSize) {
  WheelUnderCheck w{valid_files(), {}};
  replace(record_of(w.files), "apex/__init__.py," + record_hash("x = 1\n") + ",6",
          "apex/__init__.py," + record_hash("x = 1\n") + ",7");
  expect_violation(w, "size mismatch");
}

TEST(Verify, FileNotInRecord) {
  WheelUnderCheck w{valid_files(), {}};
  w.files["apex/extra.py"] = "";
  expect_violation(w, "apex/extra.py: file not listed in RECORD");
}

TEST(Verify, RecordRowForMissingFile) {
  WheelUnderCheck w{valid_files(), {}};
  w.files.erase("apex/__init__.py");
  expect_violation(w, "missing from the wheel");
}

TEST(Verify, Md5Hash) {
  WheelUnderCheck w{valid_files(), {}};
  replace(record_of(w.files), record_hash("x = 1\n"), "md5=7b8b965ad4bca0e41ab51de7b31363a1");
  expect_violation(w, "md5 hash");
}

TEST(Verify, PaddedBase64) {
  WheelUnderCheck w{valid_files(), {}};
  const std::string h = record_hash("x = 1\n");
  replace(record_of(w.files), h, h + "=");
  expect_violation(w, "padding");
}

TEST(Verify, MissingWheelOrMetadata) {
  for (const char* name : {"/WHEEL", "/METADATA"}) {
    WheelUnderCheck w{valid_files(), {}};
    const std::string path = std::string(kDi) + name;
    w.files.erase(path);
    const auto r = verify_wheel(w);
    bool said_missing = false;
    for (const auto& v : r.violations) said_missing |= v == path + ": missing";
    EXPECT_TRUE(said_missing) << name;  // (plus: its RECORD row now names a missing file)
  }
}

TEST(Verify, DistInfoNameDoesNotMatch) {
  WheelUnderCheck w{valid_files(), {}};
  replace(w.files[std::string(kDi) + "/METADATA"], "Version: 0.1+ascend", "Version: 0.2");
  // METADATA changed, so re-record to isolate the name check.
  const std::string record = std::string(kDi) + "/RECORD";
  w.files[record] = format_record(w.files, record);
  expect_violation(w, ".dist-info name does not match METADATA");
  WheelUnderCheck named{valid_files(), "apex-0.2+ascend-cp311-cp311-linux_x86_64.whl"};
  expect_violation(named, "does not match the file name");
}

TEST(Verify, ExtensionSuffixDoesNotMatchTag) {
  WheelUnderCheck w{valid_files(), {}};
  replace(w.files[std::string(kDi) + "/WHEEL"], "cp311-cp311", "cp310-cp310");
  const std::string record = std::string(kDi) + "/RECORD";
  w.files[record] = format_record(w.files, record);
  expect_violation(w, "extension suffix '.cpython-311-x86_64-linux-gnu.so' does not match");
}

TEST(Verify, CompiledBytecodeIsRefused) {
  for (const char* path : {"apex/__pycache__/__init__.cpython-311.pyc", "apex/old.pyo"}) {
    WheelUnderCheck w{valid_files(), {}};
    w.files[path] = std::string("\xa7\x0d\x0d\x0a", 4);
    const std::string record = std::string(kDi) + "/RECORD";
    w.files[record] = format_record(w.files, record);
    expect_violation(w, std::string(path) + ": compiled bytecode in the wheel");
  }
}

TEST(Verify, InvalidMetadataFieldIsRefused) {
  WheelUnderCheck w{valid_files(), {}};
  w.files[std::string(kDi) + "/METADATA"] += "Requires-Python: >=3.7,<<3.14\n";
  const std::string record = std::string(kDi) + "/RECORD";
  w.files[record] = format_record(w.files, record);
  expect_violation(w, "METADATA: line 4: Requires-Python: '>=3.7,<<3.14' is invalid");
}

// A pure-Python wheel (py3-none-any), as any a user hands verify may be.
WheelFiles pure_files() {
  const std::string di = "torch_npu_emulator-0.1+ascend.dist-info";
  WheelFiles f;
  f["torch_npu/__init__.py"] = "__apexnpu_emulator__ = True\n";
  f[di + "/METADATA"] = "Metadata-Version: 2.1\nName: torch_npu_emulator\nVersion: 0.1+ascend\n";
  f[di + "/WHEEL"] = "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n";
  f[di + "/RECORD"] = format_record(f, di + "/RECORD");
  return f;
}

TEST(Verify, PureWheelPasses) {
  WheelUnderCheck w{pure_files(), "torch_npu_emulator-0.1+ascend-py3-none-any.whl"};
  const auto r = verify_wheel(w);
  EXPECT_TRUE(r.ok()) << r.violations.front();
  EXPECT_EQ(r.tags, std::vector<std::string>{"py3-none-any"});
}

TEST(Verify, ExtensionInAPureWheel) {
  WheelUnderCheck w{pure_files(), {}};
  w.files["torch_npu/_x.cpython-311-x86_64-linux-gnu.so"] = minimal_elf();
  const std::string record = "torch_npu_emulator-0.1+ascend.dist-info/RECORD";
  w.files[record] = format_record(w.files, record);
  expect_violation(w, "does not match");
}

TEST(Verify, ExpectedSoabi) {
  EXPECT_EQ(expected_soabi("cp37m", "linux_x86_64"), "cpython-37m-x86_64-linux-gnu");
  EXPECT_EQ(expected_soabi("cp311", "manylinux2014_aarch64"), "cpython-311-aarch64-linux-gnu");
  EXPECT_EQ(expected_soabi("abi3", "linux_x86_64"), "");
}

}  // namespace
}  // namespace apexnpu::wheel
