// libFuzzer harness (b): a small tree and a patch (tree_text.h's form: the tree, a "%%%%" line,
// the patch) parsed and applied in memory. Applying never throws; a patch that applies leaves
// only safe paths, creates no symlink and reports no failed hunk; one that does not says why.
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/relative_path.h"
#include "fuzz_check.h"
#include "patch/patch_engine.h"
#include "tree_text.h"

namespace apexnpu::fuzz {
namespace {

void check_applied(const FileTree& input, const patch::PatchSet& set, const patch::ApplyResult& result) {
  expect(result.files.size() == set.files.size(), "one report per file section");
  bool any_failed = false;
  for (const auto& file : result.files) {
    any_failed |= file.status == patch::FileStatus::failed;
    for (const auto& hunk : file.hunks)
      expect(hunk.status != patch::FileStatus::failed || !hunk.reason.empty(),
             "a failed hunk without a reason");
  }
  expect(result.ok == !any_failed, "ok disagrees with the file reports");
  if (!result.ok) return;
  for (const auto& [path, entry] : result.tree) {
    expect(!unsafe_path_reason(path), "an unsafe path in the result: " + path);
    if (entry.kind == FileKind::symlink) {
      const auto before = input.find(path);
      expect(before != input.end() && before->second == entry, "a symlink made or changed: " + path);
    }
  }
}

}  // namespace
}  // namespace apexnpu::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace apexnpu;
  const auto [tree_text, patch_text] = fuzz::split_at_separator({reinterpret_cast<const char*>(data), size});
  const FileTree input = fuzz::read_tree_text(tree_text, true);
  patch::PatchSet set;
  try {
    set = patch::parse_patch(patch_text, "fuzz.patch", 1);
  } catch (const Error&) {
    return 0;  // the parser's own harness checks its errors
  }
  fuzz::check_applied(input, set, patch::apply_patch(set, input));
  return 0;
}
