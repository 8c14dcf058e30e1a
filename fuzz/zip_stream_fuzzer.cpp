// libFuzzer harness: any bytes as a .whl through the streaming reader that `apexnpu verify`
// loads wheels with (load_wheel.h, zip_reader.h), under small limits so the RSS cap the harness
// runs with (-rss_limit_mb) catches any allocation that follows a declared size. The reader
// either refuses the bytes with an Error naming the archive, or streams every entry in pieces no
// larger than its buffer, exactly as many bytes as declared, within the total cap; the loader's
// digests agree with the streamed bytes, and the wheel checks then report and never throw.
#include <cstdint>
#include <set>
#include <string>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/sha256.h"
#include "fuzz_check.h"
#include "wheel/load_wheel.h"
#include "wheel/manylinux.h"
#include "wheel/member_names.h"
#include "wheel/verify.h"
#include "wheel/zip_reader.h"

namespace apexnpu::fuzz {
namespace {

constexpr const char* kName = "fuzz-0.1-py3-none-any.whl";
constexpr wheel::LoadLimits kLimits{.zip = {.max_inflated_bytes = 64u << 20, .max_entries = 2000},
                                    .max_kept_bytes = 16u << 20};

const wheel::ManylinuxPolicies& policies() {
  static const wheel::ManylinuxPolicies loaded = wheel::load_manylinux_policies(templates_dir());
  return loaded;
}

void expect_named(const Error& e) {
  expect(std::string_view(e.what()).starts_with(kName),
         std::string("an error that does not name the archive: ") + e.what());
}

// Streams every entry, checking the pieces; returns the members' digests by name.
std::map<std::string, Sha256::Digest> stream_all(const wheel::ZipReader& reader) {
  std::map<std::string, Sha256::Digest> digests;
  std::uint64_t total = 0;
  std::set<std::string> names;
  for (const wheel::ZipMember& m : reader.members()) {
    expect(!wheel::member_name_problem(m.name), "an entry with a name the reader should refuse");
    expect(names.insert(m.name).second, "two entries of one name");
    Sha256 hasher;
    std::uint64_t streamed = 0;
    reader.stream(m, [&](std::string_view piece) {
      expect(piece.size() <= wheel::ZipReader::kChunkBytes, "a piece larger than the buffer");
      streamed += piece.size();
      hasher.update(piece);
    });
    expect(streamed == m.size, "an entry streamed to another size than declared");
    total += streamed;
    if (!m.directory) digests[m.name] = hasher.finish();
  }
  expect(total <= kLimits.zip.max_inflated_bytes, "more inflated than the cap");
  return digests;
}

}  // namespace
}  // namespace apexnpu::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace apexnpu;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::map<std::string, Sha256::Digest> streamed;
  try {
    const wheel::ZipReader reader(bytes, fuzz::kName, fuzz::kLimits.zip);
    streamed = fuzz::stream_all(reader);
  } catch (const Error& e) {
    fuzz::expect_named(e);
    return 0;
  }
  wheel::WheelUnderCheck w;
  try {
    w = wheel::load_wheel_zip(bytes, fuzz::kName, fuzz::kLimits);
  } catch (const Error& e) {  // only the cap on what it keeps whole is left to refuse
    fuzz::expect_named(e);
    fuzz::expect(std::string_view(e.what()).find("bytes apexnpu reads") != std::string_view::npos,
                 std::string("the loader refuses what the reader streamed: ") + e.what());
    return 0;
  }
  fuzz::expect(w.digests.size() == streamed.size(), "the loader lost or added files");
  for (const auto& [name, digest] : w.digests)
    fuzz::expect(streamed.count(name) && streamed.at(name) == digest.sha256,
                 "the loader's digest of " + name + " differs from the streamed bytes");
  const wheel::VerifyReport report = wheel::verify_wheel(w, fuzz::policies());
  fuzz::expect(report.files == w.digests.size(), "verify counted other files than the loader");
  return 0;
}
