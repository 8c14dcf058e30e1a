// RECORD rows, base64, PEP 440 labels, file names, package file selection, the zip writer.
#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"
#include "wheel/package_files.h"
#include "wheel/pep440.h"
#include "wheel/record.h"
#include "wheel/zip_archive.h"

namespace apexnpu::wheel {
namespace {

TEST(Record, HashIsUnpaddedUrlsafeBase64OfSha256) {
  // sha256("") in urlsafe base64 without padding, as pip writes it.
  EXPECT_EQ(record_hash(""), "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

TEST(Record, Base64RoundTripsEveryLength) {
  std::string bytes;
  for (int n = 0; n < 40; ++n) {
    const std::string enc = urlsafe_b64_nopad(bytes);
    EXPECT_EQ(enc.find('='), std::string::npos);
    EXPECT_EQ(enc.find_first_of("+/"), std::string::npos);
    ASSERT_TRUE(urlsafe_b64_decode(enc).has_value());
    EXPECT_EQ(*urlsafe_b64_decode(enc), bytes);
    bytes += static_cast<char>(0xfb + n);  // bytes that map to '-' and '_'
  }
  EXPECT_FALSE(urlsafe_b64_decode("ab+c").has_value());
  EXPECT_FALSE(urlsafe_b64_decode("abc=").has_value());
}

TEST(Record, FormatsRowsAndItsOwnRowLast) {
  WheelFiles files = {{"a/x.py", "hi"}, {"d.dist-info/RECORD", "ignored"}, {"b,c.py", ""}};
  const std::string text = format_record(files, "d.dist-info/RECORD");
  EXPECT_EQ(text,
            "a/x.py,sha256=j0NDRmSPa5bfid2pAcUXaxCm2Dlh3TwayItZstwyeqQ,2\n"
            "\"b,c.py\",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
            "d.dist-info/RECORD,,\n");
  const auto parsed = parse_record(text);
  ASSERT_TRUE(parsed) << parsed.error();
  const auto& rows = *parsed;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].path, "b,c.py");
  EXPECT_EQ(rows[2].hash, "");
  EXPECT_EQ(rows[2].line, 3u);
}

TEST(Record, MalformedRowsAreFailuresNamingTheLine) {
  const auto short_row = parse_record("a,b,c\na,b\n");
  ASSERT_FALSE(short_row);
  EXPECT_EQ(short_row.error(), "RECORD line 2: 2 fields, expected 3 (path,hash,size)");
  const auto open_quote = parse_record("\"a,b,c\n");
  ASSERT_FALSE(open_quote);
  EXPECT_EQ(open_quote.error(), "RECORD line 1: unterminated quoted field");
}

TEST(Pep440, AcceptsAndNormalisesLocalLabels) {
  EXPECT_EQ(validate_local_label("ascend"), "ascend");
  EXPECT_EQ(validate_local_label("Ascend.RC1"), "ascend.rc1");
  EXPECT_EQ(wheel_version("ascend"), "0.1+ascend");
}

TEST(Pep440, RefusesInvalidLabels) {
  for (const char* bad : {"", "ascend-1", "-ascend", "a..b", ".a", "a.", "as cend", "a+b", "a/b", "a_b"})
    EXPECT_THROW(validate_local_label(bad), UsageError) << bad;
  try {
    validate_local_label("ascend-rc1");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--version-label"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'-'"), std::string::npos);
  }
}

TEST(Pep440, FileNames) {
  EXPECT_EQ(dist_info_dir("apex", "0.1+ascend"), "apex-0.1+ascend.dist-info");
  EXPECT_EQ(wheel_file_name("apex", "0.1+ascend", "cp311-cp311-linux_x86_64"),
            "apex-0.1+ascend-cp311-cp311-linux_x86_64.whl");
  EXPECT_EQ(escape_file_name_part("my-dist"), "my_dist");
}

TEST(PackageFiles, KeepsPythonAndDataOnly) {
  EXPECT_TRUE(is_package_file("apex/__init__.py"));
  EXPECT_TRUE(is_package_file("apex/amp/lists/data.json"));
  EXPECT_TRUE(is_package_file("apex/py.typed"));
  for (const char* out :
       {"setup.py", "tests/test_a.py", "csrc/a.cpp", "apex/contrib/csrc/x.cu", "apex/contrib/test/t.py",
        "apex/tests/t.py", "apex/__pycache__/a.pyc", "apex/a.pyc", "apex/_apexnpu.so", "apex/x.cpp",
        "apex/x.h", "apex/build/lib/a.py", "apex/a.egg-info/PKG-INFO", "apex/a.py.orig", "apex/a.py.rej",
        "apex/../x.py", "apexx/a.py",
        // What upstream's setup.py never packages: docs, scripts, images, dotfiles, folders
        // whose names cannot be packages.
        "apex/README.md", "apex/pyprof/FAQs.md", "apex/pyprof/examples/apex/test.sh", "apex/mha/MHA_fwd.png",
        "apex/pyprof/examples/.gitignore", "apex/.hidden.py", "apex/my.pkg/a.py", "apex/sparsity/COPYRIGHT"})
    EXPECT_FALSE(is_package_file(out)) << out;
}

TEST(PackageFiles, AnotherPackage) {
  EXPECT_TRUE(is_package_file("torch_npu/__init__.py", "torch_npu"));
  EXPECT_TRUE(is_package_file("torch_npu/contrib/transfer_to_npu.py", "torch_npu"));
  EXPECT_FALSE(is_package_file("torch_npu/__pycache__/a.pyc", "torch_npu"));
  EXPECT_FALSE(is_package_file("apex/__init__.py", "torch_npu"));
  EXPECT_FALSE(is_package_file("torch_npu/a.py"));  // the default package is apex
}

TEST(PackageFiles, FromATreeInMemory) {
  FileTree tree = {{"apex/__init__.py", {"", FileKind::regular}},
                   {"apex/link.py", {"__init__.py", FileKind::symlink}},
                   {"apex/csrc/x.cpp", {"", FileKind::regular}},
                   {"apex/tool.sh", {"#!/bin/sh", FileKind::executable}},
                   {"apex/sub/__init__.py", {"", FileKind::regular}},
                   {"apex/sub/lists.json", {"{}", FileKind::regular}},
                   {"apex/sub/README.md", {"# sub", FileKind::regular}},
                   // Not packages (no __init__.py), so not looked into, as find_packages does.
                   {"apex/sub/examples/run.py", {"", FileKind::regular}},
                   {"apex/sub/examples/deep/__init__.py", {"", FileKind::regular}},
                   {"apex/sub/linked/__init__.py", {"../__init__.py", FileKind::symlink}},
                   {"apex/sub/linked/x.py", {"", FileKind::regular}},
                   {"tests/t.py", {"", FileKind::regular}}};
  const auto sel = select_package_files(tree, "gen");
  EXPECT_EQ(sel.files,
            (std::vector<std::string>{"apex/__init__.py", "apex/sub/__init__.py", "apex/sub/lists.json"}));
  EXPECT_EQ(sel.skipped_symlinks, std::vector<std::string>{"apex/link.py"});
  tree.erase("apex/__init__.py");
  EXPECT_THROW(select_package_files(tree, "gen"), Error);
}

TEST(PackageFiles, FromADirectoryWalksPackagesOnly) {
  test::TempDir dir;
  for (const char* rel : {"apex/__init__.py", "apex/README.md", "apex/sub/__init__.py", "apex/sub/data.json",
                          "apex/sub/MHA_fwd.png", "apex/sub/.gitignore", "apex/sub/run.sh",
                          "apex/examples/job.py", "apex/examples/inner/__init__.py", "apex/tests/__init__.py",
                          "apex/tests/test_a.py", "apex/my.pkg/__init__.py", "setup.py"})
    test::write_file(dir / rel, "x\n");
  const auto sel = select_package_files(dir.path(), "apex");
  EXPECT_EQ(sel.files,
            (std::vector<std::string>{"apex/__init__.py", "apex/sub/__init__.py", "apex/sub/data.json"}));
}

TEST(Zip, RoundTripsDeterministically) {
  const std::vector<ZipEntry> entries = {{"a/b.py", "print(1)\n", 0100644},
                                         {"big.bin", std::string(100000, 'z'), 0100644},
                                         {"m.so",
                                          "\x7f"
                                          "ELF",
                                          0100755},
                                         {"empty", "", 0100644}};
  const std::string z1 = write_zip(entries, 1700000000);
  EXPECT_EQ(z1, write_zip(entries, 1700000000));
  EXPECT_NE(z1, write_zip(entries, 1700000002));
  EXPECT_LT(z1.size(), 2000u);  // the 100 kB of 'z' really were deflated
  const auto back = read_zip(z1, "t.zip");
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(back[i].name, entries[i].name);
    EXPECT_EQ(back[i].bytes, entries[i].bytes);
    EXPECT_EQ(back[i].mode, entries[i].mode);
  }
}

TEST(Zip, EpochsBefore1980AreClamped) {
  const std::vector<ZipEntry> e = {{"a", "x", 0100644}};
  EXPECT_EQ(write_zip(e, 0), write_zip(e, kZipEpochMin));
  EXPECT_NE(write_zip(e, kZipEpochMin), write_zip(e, kZipEpochMin + 2));
}

TEST(Zip, DamageIsDetected) {
  std::string z = write_zip({{"a.txt", std::string(50, 'q'), 0100644}}, 1700000000);
  EXPECT_THROW(read_zip(z.substr(0, z.size() - 5), "t.zip"), Error);
  // The same wrong CRC in both headers: they agree, and the data shows it.
  z[14] ^= 0x55;
  const auto central = z.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  z[central + 16] ^= 0x55;
  try {
    read_zip(z, "t.zip");
    ADD_FAILURE() << "a CRC mismatch was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "t.zip: entry a.txt: CRC mismatch");
  }
}

// What the zip reader's fuzzer found: 32-bit offsets and sizes near 4 GiB wrapped around in the
// bounds checks (a read 4 GiB past the archive), and a size claim was reserved before inflating.
TEST(Zip, FieldsNear4GiBAreRefusedNotFollowed) {
  const std::string whole = write_zip({{"a.txt", std::string(50, 'q'), 0100644}}, 1700000000);
  const auto central = whole.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  auto with = [&](std::size_t at, std::uint32_t value) {
    std::string z = whole;
    for (int i = 0; i < 4; ++i) z[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
    return z;
  };
  auto message = [](const std::string& z) -> std::string {
    try {
      read_zip(z, "t.zip");
    } catch (const Error& e) {
      return e.what();
    }
    return "(read)";
  };
  EXPECT_EQ(message(with(central + 42, 0xfffffff0u)),
            "t.zip: entry a.txt: no local header where the central directory points");
  EXPECT_EQ(message(with(central + 20, 0xfffffff0u)),
            "t.zip: entry a.txt: the local header's CRC or sizes differ from the central directory's");
  EXPECT_EQ(message(with(central + 24, 0xffffffffu)),
            "t.zip: entry a.txt: claims 4294967295 bytes from " + std::to_string(whole[central + 20] & 0xff));
  const auto end = whole.find("PK\x05\x06");
  EXPECT_EQ(message(with(end + 16, 0xffffffc0u)),
            "t.zip: not a valid zip archive (the central directory is not where the end record says)");
}

}  // namespace
}  // namespace apexnpu::wheel
