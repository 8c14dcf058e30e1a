#include "patch/patch_lines.h"

#include <fmt/core.h>

#include "core/error.h"
#include "patch/lines.h"

namespace apexnpu::patch {

PatchLines::PatchLines(std::string_view bytes, std::string_view source_name)
    : lines_(split_lines(bytes)), source_(source_name) {}

void PatchLines::fail(std::size_t index, const std::string& what) const {
  throw Error(fmt::format("{}:{}: {}", source_, index + 1, what),
              "fix or regenerate the patch (apexnpu make-patch writes well-formed patches)");
}

}  // namespace apexnpu::patch
