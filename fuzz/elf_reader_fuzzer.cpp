// libFuzzer harness: any bytes as an extension module, through the ELF reader `apexnpu verify`
// runs on every module of a wheel: the header and section table, the dynamic section and symbol
// versions, and the wheel binary made of them. Each either refuses the bytes with an Error
// naming the file, or gives sections whose contents lie inside the file.
#include <cstdint>
#include <string>

#include "core/error.h"
#include "elf/dynamic_info.h"
#include "elf/elf_file.h"
#include "fuzz_check.h"
#include "wheel/manylinux.h"

namespace apexnpu::fuzz {
namespace {

constexpr const char* kName = "apex/_fuzz.so";

void expect_named(const Error& e) {
  expect(std::string_view(e.what()).find(kName) != std::string_view::npos,
         std::string("an error that does not name the file: ") + e.what());
}

void check_sections(const elf::ElfFile& file, std::string_view bytes) {
  for (const auto& section : file.sections()) {
    try {
      const std::string_view contents = file.contents(section);
      if (section.type == elf::kSectionNoBits) {
        expect(contents.empty(), "a NOBITS section with contents");
        continue;
      }
      expect(contents.size() == section.size, "a section's contents are not its size");
      expect(section.offset <= bytes.size() && bytes.size() - section.offset >= section.size,
             "a section's contents read past the file");
    } catch (const Error& e) {
      expect_named(e);
    }
  }
}

}  // namespace
}  // namespace apexnpu::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace apexnpu;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const elf::ElfFile file(bytes, fuzz::kName);
    fuzz::check_sections(file, bytes);
    elf::read_dynamic_info(file);
  } catch (const Error& e) {
    fuzz::expect_named(e);
  }
  try {
    const wheel::WheelBinary binary = wheel::read_wheel_binary(fuzz::kName, bytes);
    fuzz::expect(binary.path == fuzz::kName, "the binary is not named as given");
    fuzz::expect(binary.architecture == "x86_64" || binary.architecture == "aarch64",
                 "a wheel binary of an architecture the tool does not tag: " + binary.architecture);
  } catch (const Error& e) {
    fuzz::expect_named(e);
  }
  return 0;
}
