// libFuzzer harness: any bytes as a .whl through what `apexnpu verify` runs on a wheel a user
// hands it: the zip reader, then the wheel checks (RECORD, metadata, tags, and each extension
// module's ELF against the manylinux policies). The reader either refuses the bytes with an
// Error naming the archive, or gives entries that a zip written from them reads back the same;
// the checks never throw, they report.
#include <cstdint>
#include <string>

#include "core/data_dir.h"
#include "core/error.h"
#include "fuzz_check.h"
#include "wheel/manylinux.h"
#include "wheel/verify.h"
#include "wheel/zip_archive.h"

namespace apexnpu::fuzz {
namespace {

constexpr const char* kName = "fuzz-0.1-py3-none-any.whl";

const wheel::ManylinuxPolicies& policies() {
  static const wheel::ManylinuxPolicies loaded = wheel::load_manylinux_policies(templates_dir());
  return loaded;
}

void check_round_trip(const std::vector<wheel::ZipEntry>& entries) {
  std::vector<wheel::ZipEntry> again;
  try {
    again = wheel::read_zip(wheel::write_zip(entries, 0), "round trip");
  } catch (const Error& e) {
    // The writer refuses what a zip without zip64 cannot hold; nothing else.
    expect(std::string_view(e.what()).find("too large") != std::string_view::npos,
           std::string("entries read from a zip do not write back: ") + e.what());
    return;
  }
  expect(again.size() == entries.size(), "a different number of entries after a round trip");
  for (std::size_t i = 0; i < entries.size(); ++i)
    expect(again[i].name == entries[i].name && again[i].bytes == entries[i].bytes &&
               again[i].mode == entries[i].mode,
           "entry " + entries[i].name + " changed in a round trip");
}

}  // namespace
}  // namespace apexnpu::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace apexnpu;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<wheel::ZipEntry> entries;
  try {
    entries = wheel::read_zip(bytes, fuzz::kName);
  } catch (const Error& e) {
    fuzz::expect(std::string_view(e.what()).starts_with(fuzz::kName),
                 std::string("an error that does not name the archive: ") + e.what());
    return 0;
  }
  fuzz::check_round_trip(entries);
  // As load_wheel keeps them: directory entries carry no file.
  wheel::WheelUnderCheck wheel;
  wheel.wheel_file_name = fuzz::kName;
  for (auto& e : entries)
    if (!e.name.ends_with("/")) wheel.files[e.name] = std::move(e.bytes);
  const wheel::VerifyReport report = wheel::verify_wheel(wheel, fuzz::policies());
  fuzz::expect(report.files <= wheel.files.size() + 1, "more files reported than the wheel has");
  return 0;
}
