// libFuzzer harness (a): any bytes through the parser. It either refuses them with an Error
// naming the patch, or gives a model whose every path is safe and whose hunks hold exactly the
// lines their headers count, only a side's last line without a newline.
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/relative_path.h"
#include "fuzz_check.h"
#include "patch/lines.h"
#include "patch/patch_engine.h"

namespace apexnpu::fuzz {
namespace {

void check_hunk(const patch::Hunk& hunk) {
  std::int64_t old_lines = 0, new_lines = 0;
  std::int64_t old_unterminated = -1, new_unterminated = -1;  // the side's line without "\n"
  for (const auto& line : hunk.lines) {
    const bool old_side = line.kind != patch::LineKind::added;
    const bool new_side = line.kind != patch::LineKind::removed;
    expect(old_unterminated < 0 || !old_side, "an old-side line after one without a newline");
    expect(new_unterminated < 0 || !new_side, "a new-side line after one without a newline");
    old_lines += old_side;
    new_lines += new_side;
    if (!patch::ends_with_newline(line.text)) {
      if (old_side) old_unterminated = old_lines;
      if (new_side) new_unterminated = new_lines;
    }
  }
  expect(old_lines == hunk.old_count && new_lines == hunk.new_count,
         "a hunk's lines do not match its header " + hunk.header);
}

void check_model(const patch::PatchSet& set) {
  for (const auto& file : set.files) {
    expect(!unsafe_path_reason(file.target_path()), "an unsafe path parsed: " + file.target_path());
    if (!file.old_path.empty()) expect(!unsafe_path_reason(file.old_path), "an unsafe old path");
    for (const auto& hunk : file.hunks) check_hunk(hunk);
  }
}

}  // namespace
}  // namespace apexnpu::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    apexnpu::fuzz::check_model(apexnpu::patch::parse_patch(bytes, "fuzz.patch", 1));
  } catch (const apexnpu::Error& e) {
    apexnpu::fuzz::expect(std::string_view(e.what()).starts_with("fuzz.patch:"),
                          std::string("an error that does not name the patch: ") + e.what());
  }
  return 0;
}
