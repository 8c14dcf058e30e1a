#include "commands/make_patch.h"

#include <fmt/core.h>

#include <algorithm>
#include <future>
#include <system_error>

#include "commands/phase_timer.h"
#include "commands/upstream_defaults.h"
#include "commands/upstream_report.h"
#include "core/error.h"
#include "fs/file_io.h"
#include "fs/tree_io.h"
#include "patch/patch_engine.h"

namespace apexnpu::commands {
namespace stdfs = std::filesystem;

namespace {

// How the edited tree differs from upstream, paths sorted (both trees are sorted maps).
struct TreeDifference {
  std::vector<std::string> changed;  // in both, content or kind differs
  std::vector<std::string> deleted;  // upstream only (and not excluded)
  FileTree added;                    // edited tree only: becomes the overlay
};

TreeDifference compare_trees(const FileTree& upstream, const FileTree& edited,
                             const std::vector<std::string>& excludes) {
  TreeDifference diff;
  for (const auto& [path, entry] : upstream) {
    if (fs::is_excluded(path, excludes)) continue;
    const auto it = edited.find(path);
    if (it == edited.end())
      diff.deleted.push_back(path);
    else if (!(it->second == entry))
      diff.changed.push_back(path);
  }
  for (const auto& [path, entry] : edited)
    if (!upstream.contains(path)) diff.added.emplace(path, entry);
  return diff;
}

}  // namespace

nlohmann::json MakePatchResult::to_json() const {
  return {{"upstream", upstream.to_json()},
          {"tree", tree.string()},
          {"patch", patch.string()},
          {"overlay", overlay.string()},
          {"changed", changed},
          {"deleted", deleted},
          {"overlay_files", overlay_files},
          {"patch_bytes", patch_bytes},
          {"excludes", excludes},
          {"timings", timings}};
}

MakePatchResult run_make_patch(const MakePatchOptions& options,
                              const MakePatchCallbacks& callbacks) {
  std::error_code ec;
  if (!stdfs::is_directory(options.tree, ec))
    throw UsageError(fmt::format("--tree {} is not a directory", options.tree.string()),
                     "pass the edited Apex tree, e.g. one written by `apexnpu gen`");

  PhaseTimer timer;
  std::vector<std::string> excludes = fs::default_excludes();
  excludes.insert(excludes.end(), options.excludes.begin(), options.excludes.end());
  // The edited tree is read while upstream is: one is mostly system calls, the other inflating.
  std::future<FileTree> edited_tree =
      std::async(std::launch::async, [&] { return fs::read_tree(options.tree, excludes); });
  const git::UpstreamTree upstream = git::read_upstream(with_pinned_defaults(options.upstream));
  const FileTree edited = edited_tree.get();
  timer.mark("read_upstream_and_tree");

  timer.restart();
  const TreeDifference diff = compare_trees(upstream.tree, edited, excludes);
  std::vector<std::string> patched_paths = diff.changed;
  patched_paths.insert(patched_paths.end(), diff.deleted.begin(), diff.deleted.end());
  std::sort(patched_paths.begin(), patched_paths.end());
  const std::string patch_text = patch::write_patch(upstream.tree, edited, patched_paths);
  timer.mark("diff");
  if (callbacks.detail)
    callbacks.detail(fmt::format("{} changed, {} deleted, {} new", diff.changed.size(),
                                 diff.deleted.size(), diff.added.size()));

  timer.restart();
  const stdfs::path patch_file = options.output / "npu.patch";
  const stdfs::path overlay_dir = options.output / "overlay";
  stdfs::create_directories(options.output, ec);
  if (ec)
    throw Error(fmt::format("cannot create the output directory {}: {}",
                            options.output.string(), ec.message()));
  write_file_atomic(patch_file, patch_text);
  fs::write_tree_atomically(diff.added, overlay_dir, fs::ReplaceMode::replace);
  timer.mark("write");

  MakePatchResult result{describe_upstream(upstream), options.tree, patch_file, overlay_dir,
                         diff.changed, diff.deleted, {}, patch_text.size(), excludes,
                         timer.timings()};
  for (const auto& [path, entry] : diff.added) result.overlay_files.push_back(path);
  return result;
}

}  // namespace apexnpu::commands
