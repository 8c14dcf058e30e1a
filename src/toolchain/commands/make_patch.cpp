#include "commands/make_patch.h"

#include <fmt/core.h>

#include <optional>
#include <system_error>

#include "commands/phase_timer.h"
#include "commands/tree_status.h"
#include "commands/upstream_defaults.h"
#include "commands/upstream_patch.h"
#include "commands/upstream_report.h"
#include "core/error.h"
#include "core/job_pool.h"
#include "fs/directory_update.h"
#include "fs/file_io.h"
#include "fs/output_guard.h"
#include "fs/tree_io.h"
#include "manifest/tree_marker.h"

namespace apexnpu::commands {
namespace stdfs = std::filesystem;

namespace {

// gen writes regular files only (it refuses a link in the overlay), so a link that differs from
// upstream has no place in npu.patch or overlay/: it is refused by name, before anything is
// written, instead of breaking the round trip.
void refuse_symlinks(const stdfs::path& root, const FileTree& edited, const TreeStatus& diff) {
  std::string links;
  for (const auto* paths : {&diff.changed, &diff.added})
    for (const std::string& path : *paths)
      if (edited.at(path).kind == FileKind::symlink)
        links += fmt::format("\n  {} -> {}", (root / path).string(), edited.at(path).content);
  if (!links.empty())
    throw Error(fmt::format("the edited tree holds symlinks, which npu.patch and overlay/ cannot "
                            "carry (gen writes regular files only):{}",
                            links),
                "replace each with the file it points to, or leave it out with --exclude");
}

// The paths -o must not touch: the edited tree (and its apex/, resolved where it points when a
// symlink), then, once it is known, the upstream repository. Checked before anything is read:
// an -o inside --tree would take in its own previous output.
std::vector<fs::ReadPath> guard_tree_inputs(const MakePatchOptions& options) {
  std::error_code ec;
  if (!stdfs::is_directory(options.tree, ec))
    throw UsageError(fmt::format("--tree {} is not a directory", options.tree.string()),
                     "pass the edited Apex tree, e.g. one written by `apexnpu gen`");
  std::vector<fs::ReadPath> inputs{{options.tree, "the edited tree (--tree)"},
                                   {options.tree / "apex", "the edited tree's apex/"}};
  fs::refuse_output_over_inputs(options.output, "-o", inputs);
  return inputs;
}

struct Inputs {
  git::UpstreamTree upstream;  // blob ids only: no upstream blob is inflated until it differs
  HashedTree edited;
};

// The edited tree is read and hashed by a few threads while upstream's tree objects are read
// beside them. When both fail, the upstream's failure is the one reported.
Inputs read_inputs(const MakePatchOptions& options, const std::vector<std::string>& read_excludes) {
  std::optional<git::UpstreamTree> upstream;
  std::optional<HashedTree> edited;
  core::run_side_by_side({
      [&] {
        upstream = git::read_upstream(with_pinned_defaults(options.upstream), git::UpstreamContent::blob_ids);
      },
      [&] { edited = read_hashed_tree(options.tree, read_excludes); },
  });
  return {std::move(*upstream), std::move(*edited)};
}

// What the edit is: the upstream files it changed or deleted (for npu.patch), and its new files,
// taken out of `edited` (for overlay/).
struct Edit {
  TreeStatus diff;
  FileTree overlay;
};

Edit split_edit(const MakePatchOptions& options, const git::UpstreamTree& upstream, HashedTree& edited,
                const std::vector<std::string>& read_excludes, const MakePatchCallbacks& callbacks) {
  Edit edit{compare_with_commit(upstream.blobs, edited, read_excludes), {}};
  refuse_symlinks(options.tree, edited.files, edit.diff);
  for (const std::string& path : edit.diff.added) edit.overlay.insert(edited.files.extract(path));
  if (callbacks.detail)
    callbacks.detail(fmt::format("{} changed, {} deleted, {} new", edit.diff.changed.size(),
                                 edit.diff.deleted.size(), edit.diff.added.size()));
  return edit;
}

// npu.patch and overlay/ are staged beside -o (the overlay while the patch is diffed: neither
// needs the other) and put in place together: -o holds the old pair or the new one. When both
// fail, the patch's failure is the one reported. Returns the patch's size.
std::size_t write_outputs(const MakePatchOptions& options, const git::UpstreamTree& upstream,
                          const FileTree& edited_files, const Edit& edit, PhaseTimer& timer) {
  fs::DirectoryUpdate output(options.output);
  std::vector<std::string> patched_paths = edit.diff.changed;
  patched_paths.insert(patched_paths.end(), edit.diff.deleted.begin(), edit.diff.deleted.end());
  std::string patch_text;
  core::run_side_by_side({
      [&] {
        patch_text = write_upstream_patch(upstream, edited_files, patched_paths);
        timer.mark("diff");  // "write" runs from here: it includes waiting for the overlay
      },
      [&] {
        const stdfs::path dir = output.staged("overlay");
        stdfs::create_directory(dir);
        stdfs::permissions(dir, stdfs::perms(0755));
        fs::create_tree(edit.overlay, dir);
      },
  });
  // Not synced, like the overlay beside it: the renames make the pair appear whole or not at all.
  write_file_atomic(output.staged("npu.patch"), patch_text, kFileMode, Durability::renamed);
  output.commit({"npu.patch", "overlay"});
  timer.mark("write");
  return patch_text.size();
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

MakePatchResult run_make_patch(const MakePatchOptions& options, const MakePatchCallbacks& callbacks) {
  std::vector<fs::ReadPath> inputs = guard_tree_inputs(options);
  PhaseTimer timer;
  std::vector<std::string> excludes = fs::default_excludes();
  excludes.insert(excludes.end(), options.excludes.begin(), options.excludes.end());
  // gen's record of what the tree was made from is never part of the edit.
  std::vector<std::string> read_excludes = excludes;
  read_excludes.push_back(manifest::kTreeMarkerName);
  Inputs read = read_inputs(options, read_excludes);
  timer.mark("read_upstream_and_tree");
  for (const auto& dir : read.upstream.read_dirs) inputs.push_back({dir, "the upstream repository"});
  fs::refuse_output_over_inputs(options.output, "-o", inputs);

  timer.restart();
  const Edit edit = split_edit(options, read.upstream, read.edited, read_excludes, callbacks);
  const std::size_t patch_bytes = write_outputs(options, read.upstream, read.edited.files, edit, timer);
  return {describe_upstream(read.upstream),
          options.tree,
          options.output / "npu.patch",
          options.output / "overlay",
          edit.diff.changed,
          edit.diff.deleted,
          edit.diff.added,
          patch_bytes,
          excludes,
          timer.timings()};
}

}  // namespace apexnpu::commands
