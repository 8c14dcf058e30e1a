#include "commands/gen.h"

#include <fmt/core.h>

#include <system_error>

#include "commands/phase_timer.h"
#include "commands/upstream_defaults.h"
#include "commands/upstream_report.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "fs/file_io.h"
#include "fs/tree_io.h"
#include "patch/patch_engine.h"

namespace apexnpu::commands {
namespace stdfs = std::filesystem;

namespace {

std::string_view operation_name(patch::FileOperation op) {
  switch (op) {
    case patch::FileOperation::create: return "create";
    case patch::FileOperation::remove: return "remove";
    case patch::FileOperation::modify: break;
  }
  return "modify";
}

nlohmann::json describe_files(const std::vector<patch::FileReport>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& file : files) {
    nlohmann::json hunks = nlohmann::json::array();
    for (const auto& h : file.hunks) {
      nlohmann::json hunk = {{"header", h.header},
                             {"patch_line", h.patch_line},
                             {"status", patch::to_string(h.status)},
                             {"offset", h.offset},
                             {"fuzz", h.fuzz}};
      if (!h.reason.empty()) hunk["reason"] = h.reason;
      hunks.push_back(std::move(hunk));
    }
    out.push_back({{"path", file.path},
                   {"operation", operation_name(file.operation)},
                   {"status", patch::to_string(file.status)},
                   {"hunks", std::move(hunks)}});
  }
  return out;
}

// Every failed hunk, one line each: file, hunk header, where it is in the patch, why.
std::string describe_failures(const patch::ApplyResult& applied, const std::string& patch_name) {
  std::string lines;
  for (const auto& file : applied.files) {
    for (const auto& h : file.hunks) {
      if (h.status != patch::FileStatus::failed) continue;
      lines += fmt::format("\n  {}: hunk {} ({}:{}): {}", file.path, h.header, patch_name,
                           h.patch_line, h.reason);
    }
    if (file.status == patch::FileStatus::failed && file.hunks.empty())
      lines += fmt::format("\n  {}: {} failed", file.path, operation_name(file.operation));
  }
  return lines;
}

std::size_t count_failed_hunks(const patch::ApplyResult& applied) {
  std::size_t n = 0;
  for (const auto& file : applied.files)
    for (const auto& h : file.hunks) n += h.status == patch::FileStatus::failed;
  return n;
}

// The output path without a trailing separator, so that <output>.rej and the temporary
// directory land beside it.
stdfs::path normalised_output(const stdfs::path& output) {
  stdfs::path p = output.lexically_normal();
  if (p.has_relative_path() && !p.has_filename()) p = p.parent_path();
  if (p.empty()) p = ".";
  return p;
}

void refuse_non_empty_output(const stdfs::path& output) {
  std::error_code ec;
  const auto status = stdfs::symlink_status(output, ec);
  if (ec || !stdfs::exists(status)) return;
  if (!stdfs::is_directory(status))
    throw Error(fmt::format("the output {} exists and is not a directory", output.string()),
                "choose another -o DIR");
  if (!stdfs::is_empty(output, ec))
    throw Error(fmt::format("the output directory {} is not empty", output.string()),
                "pass --force to replace it, or choose another -o DIR");
}

// The overlay's files, checked to be whole regular files.
FileTree read_overlay(const stdfs::path& overlay_dir) {
  std::error_code ec;
  if (!stdfs::is_directory(overlay_dir, ec))
    throw Error(fmt::format("the overlay directory {} does not exist", overlay_dir.string()),
                "pass --overlay DIR, or --no-overlay to apply the patch alone");
  FileTree overlay = fs::read_tree(overlay_dir, {});
  overlay.erase(".keep");  // placeholder that keeps an empty overlay in git
  for (const auto& [path, entry] : overlay)
    if (entry.kind == FileKind::symlink)
      throw Error(fmt::format("the overlay file {} is a symlink", (overlay_dir / path).string()),
                  "the overlay holds whole regular files only");
  return overlay;
}

// Adds the overlay's files to the patched tree; an overlay file may not replace a file of the
// tree, because changes to upstream files belong in npu.patch.
nlohmann::json add_overlay(FileTree& tree, FileTree overlay, const stdfs::path& overlay_dir) {
  nlohmann::json added = nlohmann::json::array();
  for (auto& [path, entry] : overlay) {
    if (tree.contains(path))
      throw Error(fmt::format("the overlay file {} also exists in the patched upstream tree",
                              (overlay_dir / path).string()),
                  "changes to upstream files belong in npu.patch (see `apexnpu make-patch`)");
    added.push_back(path);
    tree.emplace(path, std::move(entry));
  }
  return added;
}

// The tree GNU patch leaves when hunks fail: the hunks that applied, and each file's failed ones
// in <file>.rej beside it.
GenOutcome keep_rejects(patch::ApplyResult& applied, const stdfs::path& patch_file,
                        nlohmann::json result) {
  nlohmann::json rejects = nlohmann::json::array();
  for (const auto& file : applied.files) {
    if (file.rejects.empty()) continue;
    const std::string rej = file.path + ".rej";
    if (applied.tree.contains(rej))
      throw Error(fmt::format("cannot keep the rejects of {}: {} already exists in the tree",
                              file.path, rej));
    applied.tree[rej] = FileEntry{file.rejects, FileKind::regular};
    rejects.push_back(rej);
  }
  result["rejects"] = std::move(rejects);
  GenOutcome outcome{std::move(applied.tree), std::move(result)};
  outcome.failed_hunks = count_failed_hunks(applied);
  outcome.failures = describe_failures(applied, patch_file.filename().string());
  return outcome;
}

}  // namespace

GenOutcome generate_tree(const GenOptions& options, const GenCallbacks& callbacks,
                         const std::optional<stdfs::path>& reject_file) {
  PhaseTimer timer;
  // The patch and the overlay first: a patch that does not parse fails before the upstream is
  // fetched or read.
  const stdfs::path patch_file = options.patch_file.value_or(bundled_patch_file());
  const patch::PatchSet patch_set =
      patch::parse_patch(read_file(patch_file), patch_file.string(), 1);
  const stdfs::path overlay_dir = options.overlay_dir.value_or(bundled_overlay_dir());
  std::optional<FileTree> overlay;
  if (!options.no_overlay) overlay = read_overlay(overlay_dir);
  timer.mark("read_patch_and_overlay");

  git::UpstreamTree upstream = git::read_upstream(with_pinned_defaults(options.upstream));
  timer.mark("read_upstream");
  if (callbacks.detail)
    callbacks.detail(fmt::format("upstream {} at {}: {} files", upstream.url, upstream.commit,
                                 upstream.tree.size()));

  nlohmann::json result = {{"upstream", describe_upstream(upstream)},
                           {"patch", patch_file.string()}};
  patch::ApplyResult applied = patch::apply_patch(patch_set, std::move(upstream.tree));
  timer.mark("apply_patch");
  result["files"] = describe_files(applied.files);
  if (!applied.ok && options.keep_rejects) {
    GenOutcome outcome = keep_rejects(applied, patch_file, std::move(result));
    if (overlay) outcome.result["overlay_files"] = add_overlay(outcome.tree, std::move(*overlay),
                                                               overlay_dir);
    else outcome.result["overlay_files"] = nlohmann::json::array();
    outcome.result["timings"] = timer.timings();
    return outcome;
  }
  if (!applied.ok) {
    std::string where;
    if (reject_file) {
      write_file_atomic(*reject_file, applied.rejects);
      result["reject_file"] = reject_file->string();
      where = fmt::format("; rejects written to {}", reject_file->string());
    }
    result["timings"] = timer.timings();
    throw Error(fmt::format("{} hunk(s) of {} did not apply{}, nothing was written:{}",
                            count_failed_hunks(applied), patch_file.string(), where,
                            describe_failures(applied, patch_file.filename().string())),
                "the upstream ref may not be the one the patch was made for (see --ref); "
                "regenerate the patch with `apexnpu make-patch`",
                std::move(result));
  }

  nlohmann::json overlay_files = nlohmann::json::array();
  if (overlay) {
    overlay_files = add_overlay(applied.tree, std::move(*overlay), overlay_dir);
    result["overlay"] = overlay_dir.string();
    timer.mark("overlay");
  }
  result["overlay_files"] = std::move(overlay_files);
  result["timings"] = timer.timings();
  return {std::move(applied.tree), std::move(result)};
}

nlohmann::json run_gen(const GenOptions& options, const GenCallbacks& callbacks) {
  if (options.keep_rejects && options.check)
    throw UsageError("--keep-rejects writes the tree; --check writes nothing",
                     "pass one of them");
  const stdfs::path output = normalised_output(options.output);
  if (!options.check && !options.force) refuse_non_empty_output(output);

  std::optional<stdfs::path> reject_file;
  if (!options.check) reject_file = stdfs::path(output.string() + ".rej");
  GenOutcome outcome = generate_tree(options, callbacks, reject_file);

  nlohmann::json& result = outcome.result;
  result["check"] = options.check;
  result["tree_files"] = outcome.tree.size();
  if (options.check) return result;

  PhaseTimer timer;
  fs::write_tree_atomically(outcome.tree, output,
                            options.force ? fs::ReplaceMode::replace
                                          : fs::ReplaceMode::refuse_non_empty);
  timer.mark("write");
  result["timings"].update(timer.timings());
  result["output"] = output.string();
  // A reject report from an earlier failed run describes a patch that now applies.
  std::error_code ec;
  stdfs::remove(*reject_file, ec);
  if (outcome.failed_hunks > 0) {
    std::string message = fmt::format(
        "{} hunk(s) of {} did not apply; {} was written with the hunks that did, and each "
        "file's failed ones in <file>.rej beside it:{}",
        outcome.failed_hunks, result["patch"].get<std::string>(), output.string(),
        outcome.failures);
    throw Error(std::move(message),
                "fix those files by hand, delete the .rej files, then regenerate the patch with "
                "`apexnpu make-patch --ref <the new commit> --tree " + output.string() + "`",
                std::move(result));
  }
  return result;
}

}  // namespace apexnpu::commands
