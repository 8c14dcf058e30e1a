// elf::ElfFile on binaries the real compiler builds here (a shared object and an object file
// with a named section), on a big-endian ELF32 assembled byte by byte (the paths the host's
// compiler does not produce), and on malformed files, each refused with the file and the fault.
#include "elf/elf_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "core/error.h"
#include "core/subprocess.h"
#include "support/test_support.h"

namespace apexnpu::elf {
namespace {

constexpr const char* kSource =
    "[[gnu::used, gnu::section(\".apexnpu_test\")]] const char note[] = \"hello, elf\";\n"
    "extern \"C\" int answer() { return 42; }\n";

// Compiles kSource with `mode` ("-shared -fPIC" pieces or "-c") into dir/name; its bytes.
std::string compile(const test::TempDir& dir, const std::string& name, const std::vector<std::string>& mode) {
  test::write_file(dir / "note.cpp", kSource);
  std::vector<std::string> argv = compile::detect_compiler().command;
  argv.insert(argv.end(), mode.begin(), mode.end());
  argv.insert(argv.end(), {"-o", (dir / name).string(), (dir / "note.cpp").string()});
  const ProcessResult r = run_process(argv);
  EXPECT_TRUE(r.started && r.exit_code == 0) << r.err << r.spawn_error;
  return test::read_file(dir / name);
}

std::uint16_t host_machine() {
#if defined(__x86_64__)
  return 62;  // EM_X86_64
#elif defined(__aarch64__)
  return 183;  // EM_AARCH64
#else
  return 0;
#endif
}

std::string expect_error(const std::string& bytes, const std::string& source) {
  try {
    ElfFile file(bytes, source);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << source;
  return {};
}

TEST(ElfFile, ReadsANamedSectionOfASharedObjectTheCompilerBuilt) {
  test::TempDir dir;
  const std::string bytes = compile(dir, "note.so", {"-shared", "-fPIC", "-O2"});
  const ElfFile file(bytes, "note.so");
  EXPECT_TRUE(file.is_64bit());
  EXPECT_TRUE(file.little_endian());
  EXPECT_EQ(file.file_type(), 3);  // ET_DYN
  if (host_machine() != 0) {
    EXPECT_EQ(file.machine(), host_machine());
  }
  const auto note = file.find_section(".apexnpu_test");
  ASSERT_TRUE(note.has_value());
  EXPECT_EQ(file.contents(*note), std::string_view("hello, elf\0", 11));
  EXPECT_TRUE(file.find_section(".dynsym").has_value());
  EXPECT_TRUE(file.find_section(".text").has_value());
  EXPECT_FALSE(file.find_section(".no_such_section").has_value());

  // Stripping keeps a section the program's image holds.
  const ProcessResult strip = run_process({"strip", (dir / "note.so").string()});
  if (strip.started && strip.exit_code == 0) {
    const ElfFile stripped = read_elf_file(dir / "note.so");
    ASSERT_TRUE(stripped.find_section(".apexnpu_test").has_value());
    EXPECT_EQ(stripped.contents(*stripped.find_section(".apexnpu_test")).substr(0, 10), "hello, elf");
  }
}

TEST(ElfFile, ReadsAnObjectFile) {
  test::TempDir dir;
  const ElfFile file(compile(dir, "note.o", {"-c", "-O2"}), "note.o");
  EXPECT_EQ(file.file_type(), 1);  // ET_REL
  ASSERT_TRUE(file.find_section(".apexnpu_test").has_value());
}

// A big-endian ELF32 with a null section, a section-name table and one data section.
std::string big_endian_elf32() {
  std::string b(52, '\0');
  b.replace(0, 7,
            std::string("\x7f"
                        "ELF\x01\x02\x01",
                        7));  // ELFCLASS32, ELFDATA2MSB
  const auto put = [&](std::size_t at, std::uint64_t v, unsigned width) {
    for (unsigned i = 0; i < width; ++i) b[at + i] = static_cast<char>(v >> (8 * (width - 1 - i)));
  };
  const std::string names("\0.shstrtab\0.payload\0", 20);
  const std::string payload = "big-endian";
  const std::size_t names_at = b.size();
  b += names;
  const std::size_t payload_at = b.size();
  b += payload;
  const std::size_t table = b.size();
  b += std::string(3 * 40, '\0');
  put(16, 2, 2);      // ET_EXEC
  put(18, 20, 2);     // EM_PPC
  put(32, table, 4);  // e_shoff
  put(46, 40, 2);     // e_shentsize
  put(48, 3, 2);      // e_shnum
  put(50, 1, 2);      // e_shstrndx
  const auto section = [&](std::size_t index, std::uint32_t name, std::uint32_t type, std::size_t offset,
                           std::size_t size) {
    const std::size_t at = table + index * 40;
    put(at, name, 4);
    put(at + 4, type, 4);
    put(at + 16, offset, 4);
    put(at + 20, size, 4);
  };
  section(1, 1, 3, names_at, names.size());       // SHT_STRTAB
  section(2, 11, 1, payload_at, payload.size());  // SHT_PROGBITS
  return b;
}

TEST(ElfFile, ReadsABigEndianElf32) {
  const ElfFile file(big_endian_elf32(), "be32");
  EXPECT_FALSE(file.is_64bit());
  EXPECT_FALSE(file.little_endian());
  EXPECT_EQ(file.file_type(), 2);
  EXPECT_EQ(file.machine(), 20);
  ASSERT_EQ(file.sections().size(), 3u);
  EXPECT_EQ(file.sections()[1].name, ".shstrtab");
  const auto payload = file.find_section(".payload");
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(file.contents(*payload), "big-endian");
}

TEST(ElfFile, RefusesWhatIsNotElfNamingTheFile) {
  EXPECT_NE(expect_error("#!/bin/sh\necho not elf\n", "script.sh").find("script.sh is not an ELF file"),
            std::string::npos);
  EXPECT_NE(expect_error("\x7f"
                         "ELF",
                         "tiny")
                .find("tiny is not an ELF file"),
            std::string::npos);
  std::string bad_class = big_endian_elf32();
  bad_class[4] = 9;
  EXPECT_NE(expect_error(bad_class, "f").find("unknown ELF class 9"), std::string::npos);
}

TEST(ElfFile, RefusesTruncatedAndInconsistentTables) {
  const std::string good = big_endian_elf32();
  // Cut inside the section table.
  const std::string cut = expect_error(good.substr(0, good.size() - 10), "cut.so");
  EXPECT_NE(cut.find("cut.so: a section header reaches past the end of the file"), std::string::npos) << cut;

  std::string entry = good;
  entry[47] = 64;  // e_shentsize 64 in an ELF32
  EXPECT_NE(expect_error(entry, "f").find("section headers of 64 bytes, expected 40"), std::string::npos);

  std::string names = good;
  names[51] = 7;  // e_shstrndx past the 3 sections
  EXPECT_NE(expect_error(names, "f").find("the section names are in section 7, but there are 3"),
            std::string::npos);

  std::string count = good;
  count[48] = 0x7f;  // e_shnum far beyond what the file holds
  EXPECT_NE(expect_error(count, "f").find("section headers cannot fit"), std::string::npos);

  std::string payload = good;
  const std::size_t size_field = payload.size() - 40 + 20;  // section 2's sh_size
  payload[size_field + 2] = 0x10;
  const ElfFile file(payload, "f");
  try {
    file.contents(*file.find_section(".payload"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("section '.payload'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace apexnpu::elf
