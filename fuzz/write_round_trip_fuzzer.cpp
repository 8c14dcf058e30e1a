// libFuzzer harness (c): two small trees (tree_text.h's form, separated by a "%%%%" line), the
// patch make-patch's writer makes of them, parsed and applied to the first: it must give the
// second exactly, whatever the file names, contents, modes and line endings.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_check.h"
#include "patch/patch_engine.h"
#include "tree_text.h"

namespace apexnpu::fuzz {
namespace {

// Drops what make-patch never diffs: deleting an empty file (the writer refuses it, as GNU patch
// cannot apply it) and a path that is a file in one tree and a directory in the other.
void keep_writable(FileTree& before, const FileTree& after) {
  std::erase_if(before, [&](const auto& item) {
    const auto& [path, entry] = item;
    if (!after.contains(path) && entry.content.empty()) return true;
    const auto below = after.lower_bound(path + "/");
    if (below != after.end() && below->first.starts_with(path + "/")) return true;
    for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1))
      if (after.contains(path.substr(0, slash))) return true;
    return false;
  });
}

}  // namespace
}  // namespace apexnpu::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace apexnpu;
  const auto [old_text, new_text] = fuzz::split_at_separator({reinterpret_cast<const char*>(data), size});
  FileTree before = fuzz::read_tree_text(old_text, false);
  const FileTree after = fuzz::read_tree_text(new_text, false);
  fuzz::keep_writable(before, after);
  std::set<std::string> paths;
  for (const auto& [path, entry] : before) paths.insert(path);
  for (const auto& [path, entry] : after) paths.insert(path);

  const std::string text = patch::write_patch(before, after, {paths.begin(), paths.end()});
  patch::ApplyResult result;
  try {
    result = patch::apply_patch(patch::parse_patch(text, "round-trip.patch", 1), before);
  } catch (const Error& e) {
    fuzz::expect(false, std::string("the writer's patch does not parse: ") + e.what() + "\n" + text);
  }
  fuzz::expect(result.ok, "the writer's patch does not apply:\n" + text + result.rejects);
  fuzz::expect(result.tree == after, "the writer's patch gives another tree:\n" + text);
  return 0;
}
