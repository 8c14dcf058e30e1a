// The streaming zip reader and the wheel loader on hostile input (issue 44): zips that readers
// disagree on, zip bombs, caps on the inflated size and the entry count, layout directories with
// symlinks and sparse giants, and the names `build` refuses in its input tree.
#include "wheel/zip_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>

#include "core/error.h"
#include "support/test_support.h"
#include "wheel/load_wheel.h"
#include "wheel/member_names.h"
#include "wheel/package_files.h"
#include "wheel/zip_archive.h"

namespace apexnpu::wheel {
namespace {
namespace stdfs = std::filesystem;

void put16(std::string& o, std::uint32_t v) {
  o += static_cast<char>(v & 0xff);
  o += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& o, std::uint32_t v) {
  put16(o, v & 0xffff);
  put16(o, v >> 16);
}

// One entry of a hand-made zip: stored unless `deflated` holds its compressed bytes.
struct RawEntry {
  std::string name;
  std::string data{};
  std::uint32_t mode = 0100644;
  std::string local_name{};  // empty: the same as `name`
  std::uint32_t flags = 0;   // general purpose flags, in both headers
  std::string deflated{};    // when set, method 8 with these bytes
  std::uint64_t size = 0;    // the declared inflated size for a deflated entry
  int share_data_of = -1;    // >= 0: no header of its own; it is that entry's data
  int same_header_as = -1;   // >= 0: no header of its own; it is that entry's header
};

std::uint32_t crc_of(std::string_view s) {
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

// A zip laid out by hand, so each test can break one thing a writer never would.
std::string raw_zip(const std::vector<RawEntry>& entries, std::uint32_t crc_override = 0) {
  std::string out, central;
  std::vector<std::uint32_t> offsets;
  for (const RawEntry& e : entries) {
    const bool deflate = !e.deflated.empty();
    const std::string& body = deflate ? e.deflated : e.data;
    const std::uint32_t usize = deflate ? static_cast<std::uint32_t>(e.size) : body.size();
    const std::uint32_t crc = crc_override ? crc_override : crc_of(e.data);
    const std::string& local_name = e.local_name.empty() ? e.name : e.local_name;
    auto header = [&](std::string& o, bool local) {
      put32(o, local ? 0x04034b50 : 0x02014b50);
      if (!local) put16(o, (3 << 8) | 20);
      put16(o, 20);
      put16(o, e.flags);
      put16(o, deflate ? 8 : 0);
      put32(o, 0);  // time, date
      put32(o, crc);
      put32(o, static_cast<std::uint32_t>(body.size()));
      put32(o, usize);
      put16(o, static_cast<std::uint32_t>((local ? local_name : e.name).size()));
      put16(o, 0);
    };
    if (e.same_header_as >= 0) {
      offsets.push_back(offsets[static_cast<std::size_t>(e.same_header_as)]);
    } else if (e.share_data_of >= 0) {
      const auto k = static_cast<std::size_t>(e.share_data_of);
      const RawEntry& host = entries[k];
      offsets.push_back(
          offsets[k] + 30 +
          static_cast<std::uint32_t>((host.local_name.empty() ? host.name : host.local_name).size()));
    } else {
      offsets.push_back(static_cast<std::uint32_t>(out.size()));
      header(out, true);
      out += local_name + body;
    }
    header(central, false);
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, e.mode << 16);
    put32(central, offsets.back());
    central += e.name;
  }
  const auto central_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put32(out, 0);
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, central_offset);
  put16(out, 0);
  return out;
}

std::string deflated(std::string_view in) {
  uLongf size = compressBound(static_cast<uLong>(in.size()));
  std::string out(size, '\0');
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The message of the Error `f` throws, or "" when it does not throw.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string zip_error(const std::string& z, ZipLimits limits = {}) {
  return error_of([&] { ZipReader reader(z, "bad.whl", limits); });
}

TEST(ZipReader, StreamsAnEntryInBoundedPieces) {
  const std::string big(1 << 20, 'a');
  const std::string z = write_zip({{"a.bin", big, 0100644}}, 0);
  const ZipReader reader(z, "t.whl");
  ASSERT_EQ(reader.members().size(), 1u);
  std::size_t pieces = 0, total = 0;
  reader.stream(reader.members()[0], [&](std::string_view piece) {
    EXPECT_LE(piece.size(), ZipReader::kChunkBytes);
    ++pieces;
    total += piece.size();
  });
  EXPECT_EQ(total, big.size());
  EXPECT_GE(pieces, big.size() / ZipReader::kChunkBytes);
}

TEST(ZipReader, RefusesEntriesSharingTheirData) {
  // An overlapping bomb's geometry: entry b's header and data lie inside entry a's data, so a
  // reader that follows the central directory inflates the same bytes twice.
  RawEntry b{"b.py", std::string(1000, 'x')};
  const std::string b_local = raw_zip({b}).substr(0, 30 + 4 + 1000);
  b.share_data_of = 0;
  const std::string error = zip_error(raw_zip({{"a.py", b_local}, b}));
  EXPECT_NE(error.find("bad.whl: entry a.py: overlaps entry b.py"), std::string::npos) << error;
  // Many entries on one body, told apart only in the central directory: their local header
  // names one of them.
  const std::string body = deflated(std::string(1 << 20, '\0'));
  std::vector<RawEntry> many = {{"a0.py", std::string(1 << 20, '\0'), 0100644, "", 0, body, 1 << 20}};
  for (int i = 1; i < 50; ++i)
    many.push_back(
        {"a" + std::to_string(i) + ".py", std::string(1 << 20, '\0'), 0100644, "", 0, body, 1 << 20, -1, 0});
  const std::string shared = zip_error(raw_zip(many));
  EXPECT_NE(shared.find("bad.whl: entry a1.py: the local header names it differently ('a0.py')"),
            std::string::npos)
      << shared;
}

TEST(ZipReader, CapsTheDeclaredTotalBeforeInflatingAnything) {
  const std::string data(3 << 20, '\0');
  const std::string z = raw_zip(
      {{"x.py", "", 0100644, "", 0, "", 0}, {"big.bin", data, 0100644, "", 0, deflated(data), data.size()}});
  const std::string error = zip_error(z, {.max_inflated_bytes = 2 << 20});
  EXPECT_NE(error.find("bad.whl: entry big.bin:"), std::string::npos) << error;
  EXPECT_NE(error.find("more than the 2097152 allowed"), std::string::npos) << error;
  EXPECT_EQ(zip_error(z), "");
}

TEST(ZipReader, CapsTheEntryCount) {
  std::vector<ZipEntry> entries;
  for (int i = 0; i < 11; ++i) entries.push_back({"f" + std::to_string(i), "", 0100644});
  const std::string error = zip_error(write_zip(entries, 0), {.max_entries = 10});
  EXPECT_NE(error.find("bad.whl: 11 entries, more than the 10 allowed"), std::string::npos) << error;
}

TEST(ZipReader, RefusesAnEntryThatInflatesPastItsDeclaredSize) {
  const std::string data(200000, 'q');
  RawEntry e{"q.txt", data, 0100644, "", 0, deflated(data), 1000};
  const std::string error = zip_error(raw_zip({e}));
  ASSERT_EQ(error, "");  // the structure holds; the lie shows while inflating
  const std::string z = raw_zip({e});
  const ZipReader reader(z, "bad.whl");
  const std::string streamed = error_of([&] { reader.stream(reader.members()[0], [](std::string_view) {}); });
  EXPECT_NE(streamed.find("bad.whl: entry q.txt: inflates past its declared 1000 bytes"), std::string::npos)
      << streamed;
}

TEST(ZipReader, RefusesWhatReadersDisagreeOn) {
  const std::vector<std::pair<std::vector<RawEntry>, std::string>> cases = {
      {{{"a.py", "1"}, {"a.py", "2"}}, "entry a.py: the name appears twice"},
      {{{"pkg/x.py", "1", 0100644, "../x.py"}},
       "entry pkg/x.py: the local header names it differently ('../x.py')"},
      {{{"link.py", "target.py", 0120777}}, "entry link.py: a symlink"},
      {{{"fifo", "", 0010644}}, "entry fifo: not a regular file (mode 10644)"},
      {{{"Setup.py", "1"}, {"setup.py", "2"}}, "entry setup.py: the name differs from Setup.py only by case"},
      {{{"a", "1"}, {"a/b.py", "2"}}, "entry a/b.py: the name has a directory that is a, a file"},
      {{{"a/b.py", "1"}, {"a", "2"}}, "entry a: the name is a file, and a/ a directory"},
      {{{"Pkg/x.py", "1"}, {"pkg/y.py", "2"}},
       "the name has a directory that differs from Pkg/ only by case"},
      {{{"caf\xe9.py", "1", 0100644, "", 0x0800}}, "entry caf\\xe9.py: the name is not valid UTF-8"},
      {{{"caf\xc3\xa9.py", "1"}}, "a non-ASCII name without the UTF-8 flag"},
      {{{std::string(60000, 'n'), "1"}}, "the name is 60000 bytes long (at most 1024 allowed)"},
      {{{"a/" + std::string(300, 'n'), "1"}}, "has a part of 300 bytes (at most 255 allowed)"},
      {{{std::string("nul\0.py", 7), "1"}}, "holds a control character"},
  };
  for (const auto& [entries, expected] : cases) {
    const std::string error = zip_error(raw_zip(entries));
    EXPECT_TRUE(error.starts_with("bad.whl: ")) << error;
    EXPECT_NE(error.find(expected), std::string::npos) << "expected: " << expected << "\nwas: " << error;
    EXPECT_LT(error.size(), 400u) << "a long name is cut short in messages";
  }
  // The same names, valid: accepted.
  EXPECT_EQ(
      zip_error(raw_zip({{"caf\xc3\xa9.py", "1", 0100644, "", 0x0800}, {"a/b.py", "2"}, {"a/", "", 040755}})),
      "");
}

TEST(ZipReader, RefusesALocalHeaderWithOtherSizes) {
  std::string z = raw_zip({{"a.py", "hello"}});
  z[18] ^= 1;  // the local header's compressed size
  EXPECT_NE(zip_error(z).find("entry a.py: the local header's CRC or sizes differ"), std::string::npos);
}

TEST(ZipWriter, SetsTheUtf8FlagOnlyOnValidUtf8AndRefusesOtherNames) {
  const std::string ascii = write_zip({{"a.py", "", 0100644}}, 0);
  const std::string utf8 = write_zip({{"caf\xc3\xa9.py", "", 0100644}}, 0);
  EXPECT_EQ(static_cast<unsigned char>(ascii[7]) & 0x08, 0);
  EXPECT_EQ(static_cast<unsigned char>(utf8[7]) & 0x08, 0x08);
  const std::string error = error_of([] { write_zip({{"caf\xe9.py", "", 0100644}}, 0); });
  EXPECT_NE(error.find("cannot put caf\\xe9.py in a wheel: the name is not valid UTF-8"), std::string::npos)
      << error;
}

TEST(MemberNames, BuildRefusesATreeNameThatIsNotUtf8) {
  test::TempDir dir;
  for (const char* rel : {"apex/__init__.py", "apex/caf\xe9.py"}) test::write_file(dir.path() / rel, "x\n");
  const std::string error = error_of([&] { select_package_files(dir.path(), "apex"); });
  EXPECT_NE(error.find("apex: apex/caf\\xe9.py: the name is not valid UTF-8"), std::string::npos) << error;
  EXPECT_EQ(error_of([&] { check_member_names({"apex/__init__.py", "apex/caf\xc3\xa9.py"}, "tree"); }), "");
  EXPECT_NE(error_of([&] {
              check_member_names({"apex/A.py", "apex/a.py"}, "tree");
            }).find("only by case"),
            std::string::npos);
}

TEST(LoadWheel, RefusesASparseGiantInALayoutBeforeReadingIt) {
  test::TempDir dir;
  test::write_file(dir.path() / "pkg/__init__.py", "");
  const stdfs::path giant = dir.path() / "pkg/giant.bin";
  const int fd = ::open(giant.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, std::int64_t{5} << 30), 0);  // 5 GiB of holes: no disk, no time
  ::close(fd);
  const std::string error = error_of([&] { load_wheel(dir.path()); });
  EXPECT_NE(error.find(dir.path().string() + ": pkg/giant.bin: 5368709120 bytes"), std::string::npos)
      << error;
}

TEST(LoadWheel, RefusesSymlinksAndKeepsOnlyWhatVerifyReads) {
  test::TempDir dir;
  test::write_file(dir.path() / "pkg/__init__.py", "x = 1\n");
  test::write_file(dir.path() / "pkg-1.dist-info/METADATA", "Name: pkg\n");
  const WheelUnderCheck w = load_wheel(dir.path());
  EXPECT_EQ(w.digests.size(), 2u);
  EXPECT_EQ(w.digests.at("pkg/__init__.py").size, 6u);
  EXPECT_EQ(w.digests.at("pkg/__init__.py").sha256, sha256("x = 1\n"));
  EXPECT_FALSE(w.files.count("pkg/__init__.py"));
  EXPECT_EQ(w.files.at("pkg-1.dist-info/METADATA"), "Name: pkg\n");
  stdfs::create_symlink("__init__.py", dir.path() / "pkg/link.py");
  const std::string error = error_of([&] { load_wheel(dir.path()); });
  EXPECT_NE(error.find("pkg/link.py: a symlink"), std::string::npos) << error;
}

TEST(LoadWheel, CapsWhatItKeepsWhole) {
  const std::string z = write_zip({{"p-1.dist-info/METADATA", std::string(5000, 'm'), 0100644},
                                   {"p/x.py", std::string(9000, 'x'), 0100644}},
                                  0);
  EXPECT_NO_THROW(load_wheel_zip(z, "p-1-py3-none-any.whl", {.max_kept_bytes = 5000}));
  const std::string error =
      error_of([&] { load_wheel_zip(z, "p-1-py3-none-any.whl", {.max_kept_bytes = 4999}); });
  EXPECT_NE(error.find("p-1-py3-none-any.whl: entry p-1.dist-info/METADATA:"), std::string::npos) << error;
}

}  // namespace
}  // namespace apexnpu::wheel
