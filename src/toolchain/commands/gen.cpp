#include "commands/gen.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <system_error>

#include "commands/phase_timer.h"
#include "commands/upstream_defaults.h"
#include "commands/upstream_report.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/git_path_rules.h"
#include "core/relative_path.h"
#include "core/sha256.h"
#include "fs/directory_update.h"
#include "fs/file_io.h"
#include "fs/staging.h"
#include "fs/tree_io.h"
#include "manifest/build_manifest.h"
#include "patch/patch_engine.h"

namespace apexnpu::commands {
namespace stdfs = std::filesystem;

namespace {

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
                   {"operation", patch::to_string(file.operation)},
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
      lines +=
          fmt::format("\n  {}: hunk {} ({}:{}): {}", file.path, h.header, patch_name, h.patch_line, h.reason);
    }
    if (file.status == patch::FileStatus::failed && file.hunks.empty())
      lines += fmt::format("\n  {}: {} failed", file.path, patch::to_string(file.operation));
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

// The parent directories of -o that do not exist yet, made (as git clone and pip install
// --target make theirs) for the tree or the reject report beside it; those left empty when gen
// fails are removed again.
class OutputParents {
 public:
  explicit OutputParents(const stdfs::path& output) {
    const stdfs::path parent = output.parent_path();
    std::error_code ec;
    for (stdfs::path p = parent; !p.empty() && !stdfs::exists(stdfs::symlink_status(p, ec));
         p = p.parent_path()) {
      made_.push_back(p);
      if (p == p.parent_path()) break;
    }
    if (made_.empty()) return;
    stdfs::create_directories(parent, ec);
    if (ec) {
      made_.clear();
      throw Error(fmt::format("cannot create {}, the parent of -o {}: {}", parent.string(), output.string(),
                              ec.message()),
                  "choose an -o DIR whose parent you can create");
    }
  }
  OutputParents(const OutputParents&) = delete;
  OutputParents& operator=(const OutputParents&) = delete;
  ~OutputParents() {
    if (kept_) return;
    for (const stdfs::path& dir : made_)  // innermost first; stops at one that is not empty
      if (::rmdir(dir.c_str()) != 0) break;
  }
  void keep() { kept_ = true; }

 private:
  std::vector<stdfs::path> made_;  // innermost first
  bool kept_ = false;
};

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
std::vector<std::string> add_overlay(FileTree& tree, FileTree overlay, const stdfs::path& overlay_dir) {
  std::vector<std::string> added;
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

// Every name of the tree gen makes obeys git's rules (core/git_path_rules.h), whoever chose it:
// upstream, the patch or the overlay. Checked before anything is written, so that neither a tree
// nor a wheel built from it ever holds a name git refuses (a ".GIT" directory, say).
void refuse_names_git_refuses(const FileTree& tree, const std::vector<std::string>& overlay_files,
                              const GenInputs& inputs, const patch::ApplyResult& applied) {
  for (const auto& [path, entry] : tree) {
    std::optional<std::string> reason = unsafe_path_reason(path);
    if (!reason) reason = control_character_reason(path);
    if (!reason && entry.kind == FileKind::symlink)
      reason = git_symlink_reason(path.substr(path.rfind('/') + 1));
    if (!reason) continue;
    const std::string shown = printable_path(path);
    std::string origin = fmt::format("upstream's file {} (at {})", shown, inputs.upstream.commit);
    if (std::find(overlay_files.begin(), overlay_files.end(), path) != overlay_files.end())
      origin = fmt::format("the overlay file {}", printable_path((inputs.overlay_dir / path).string()));
    for (const auto& file : applied.files)
      if (file.path == path) origin = fmt::format("{} (patched by {})", shown, inputs.patch_file.string());
    throw Error(fmt::format("gen refuses to write {}: {}", origin, *reason),
                "git refuses this name too; rename the file (in the overlay, or in the patch with "
                "`apexnpu make-patch`)");
  }
}

// The tree GNU patch leaves when hunks fail: the hunks that applied, and each file's failed ones
// in <file>.rej beside it.
// Several sections of one file append to its one .rej, as GNU's do.
GenOutcome keep_rejects(patch::ApplyResult& applied, GenResult result) {
  result.rejects.emplace();
  for (const auto& file : applied.files) {
    if (file.rejects.empty()) continue;
    const std::string rej = file.path + ".rej";
    const bool ours = std::find(result.rejects->begin(), result.rejects->end(), rej) != result.rejects->end();
    if (ours) {
      applied.tree[rej].content += file.rejects;
      continue;
    }
    if (applied.tree.contains(rej))
      throw Error(
          fmt::format("cannot keep the rejects of {}: {} already exists in the tree", file.path, rej));
    applied.tree[rej] = FileEntry{file.rejects, FileKind::regular};
    result.rejects->push_back(rej);
  }
  GenOutcome outcome{std::move(applied.tree), {}, std::move(result), 0, {}};
  outcome.failed_hunks = count_failed_hunks(applied);
  outcome.failures = describe_failures(applied, outcome.result.patch.filename().string());
  return outcome;
}

// A patch that did not apply: the reject report goes to `reject_file` when there is one, and
// the error lists every failed hunk.
[[noreturn]] void fail_patch(const patch::ApplyResult& applied, PatchReport report,
                             const std::optional<stdfs::path>& reject_file) {
  std::string where;
  if (reject_file) {
    // The report is a convenience: failing to write it must not hide the failed hunks.
    try {
      write_file_atomic(*reject_file, applied.rejects);
      report.reject_file = *reject_file;
      where = fmt::format("; rejects written to {}", reject_file->string());
    } catch (const Error& e) {
      where = fmt::format(" (the rejects could not be written: {})", e.what());
    }
  }
  throw Error(
      fmt::format("{} hunk(s) of {} did not apply{}, nothing was written:{}", count_failed_hunks(applied),
                  report.patch.string(), where, describe_failures(applied, report.patch.filename().string())),
      "the upstream ref may not be the one the patch was made for (see --ref); "
      "regenerate the patch with `apexnpu make-patch`",
      report.to_json());
}

}  // namespace

nlohmann::json PatchReport::to_json() const {
  nlohmann::json j = {{"upstream", upstream.to_json()},
                      {"patch", patch.string()},
                      {"files", describe_files(files)},
                      {"timings", timings}};
  if (reject_file) j["reject_file"] = reject_file->string();
  return j;
}

nlohmann::json GenResult::to_json() const {
  nlohmann::json j = PatchReport::to_json();
  j["overlay_files"] = overlay_files;
  if (overlay) j["overlay"] = overlay->string();
  if (rejects) j["rejects"] = *rejects;
  j["check"] = check;
  j["tree_files"] = tree_files;
  if (output) j["output"] = output->string();
  return j;
}

std::vector<fs::ReadPath> GenInputs::read_paths() const {
  std::vector<fs::ReadPath> paths{{patch_file, "the patch"}};
  if (overlay) paths.push_back({overlay_dir, "the overlay"});
  for (const auto& dir : upstream.read_dirs) paths.push_back({dir, "the upstream repository"});
  return paths;
}

GenInputs read_gen_inputs(const GenOptions& options, const GenCallbacks& callbacks) {
  GenInputs inputs;
  // A make-patch killed while it replaced the pair: read the pair it committed to, never a mix.
  inputs.patch_file = options.patch_file.value_or(bundled_patch_file());
  const std::string patch_text = read_file(fs::committed_entry(inputs.patch_file));
  inputs.patch_sha256 = sha256_hex(patch_text);
  inputs.patch_set = patch::parse_patch(patch_text, inputs.patch_file.string(), 1);
  inputs.overlay_dir = options.overlay_dir.value_or(bundled_overlay_dir());
  if (!options.no_overlay) inputs.overlay = read_overlay(fs::committed_entry(inputs.overlay_dir));
  inputs.timer.mark("read_patch_and_overlay");

  inputs.upstream = git::read_upstream(with_pinned_defaults(options.upstream));
  inputs.timer.mark("read_upstream");
  if (callbacks.detail)
    callbacks.detail(fmt::format("upstream {} at {}: {} files", inputs.upstream.url, inputs.upstream.commit,
                                 inputs.upstream.tree.size()));
  return inputs;
}

GenOutcome apply_gen_inputs(GenInputs inputs, const GenOptions& options,
                            const std::optional<stdfs::path>& reject_file) {
  PhaseTimer& timer = inputs.timer;
  if (inputs.upstream.tree.contains(manifest::kTreeMarkerName) ||
      (inputs.overlay && inputs.overlay->contains(manifest::kTreeMarkerName)))
    throw Error(fmt::format("upstream or the overlay has a file named {}, the name gen gives its "
                            "record of what a tree was made from",
                            manifest::kTreeMarkerName),
                "rename that file: gen writes its own there");
  manifest::TreeMarker marker;
  marker.apexnpu_version = APEXNPU_VERSION;
  marker.upstream_url = inputs.upstream.url;
  marker.upstream_commit = inputs.upstream.commit;
  marker.patch_sha256 = inputs.patch_sha256;
  if (inputs.overlay) {
    std::map<std::string, std::string> files;
    for (const auto& [path, entry] : *inputs.overlay) files.emplace(path, entry.content);
    marker.overlay_digest = manifest::files_digest(files);
  }
  GenResult result;
  result.upstream = describe_upstream(inputs.upstream);
  result.patch = inputs.patch_file;
  patch::ApplyResult applied = patch::apply_patch(inputs.patch_set, std::move(inputs.upstream.tree));
  timer.mark("apply_patch");
  result.files = applied.files;
  if (!applied.ok && options.keep_rejects) {
    GenOutcome outcome = keep_rejects(applied, std::move(result));
    if (inputs.overlay)
      outcome.result.overlay_files =
          add_overlay(outcome.tree, std::move(*inputs.overlay), inputs.overlay_dir);
    refuse_names_git_refuses(outcome.tree, outcome.result.overlay_files, inputs, applied);
    outcome.result.timings = timer.timings();
    marker.failed_hunks = outcome.failed_hunks;
    marker.files_digest = manifest::tree_files_digest(outcome.tree);
    outcome.marker = std::move(marker);
    return outcome;
  }
  if (!applied.ok) {
    result.timings = timer.timings();
    fail_patch(applied, result, reject_file);
  }

  if (inputs.overlay) {
    result.overlay_files = add_overlay(applied.tree, std::move(*inputs.overlay), inputs.overlay_dir);
    result.overlay = inputs.overlay_dir;
    timer.mark("overlay");
  }
  refuse_names_git_refuses(applied.tree, result.overlay_files, inputs, applied);
  result.timings = timer.timings();
  marker.files_digest = manifest::tree_files_digest(applied.tree);
  return {std::move(applied.tree), std::move(marker), std::move(result), 0, {}};
}

GenOutcome generate_tree(const GenOptions& options, const GenCallbacks& callbacks,
                         const std::optional<stdfs::path>& reject_file) {
  return apply_gen_inputs(read_gen_inputs(options, callbacks), options, reject_file);
}

GenResult run_gen(const GenOptions& options, const GenCallbacks& callbacks) {
  if (options.keep_rejects && options.check)
    throw UsageError("--keep-rejects writes the tree; --check writes nothing", "pass one of them");
  const stdfs::path output = normalised_output(options.output);

  std::optional<stdfs::path> reject_file;
  if (!options.check) reject_file = stdfs::path(output.string() + ".rej");
  GenInputs inputs = read_gen_inputs(options, callbacks);
  if (!options.check) {
    fs::refuse_output_over_inputs(output, "-o", inputs.read_paths());
    fs::refuse_output_over_inputs(*reject_file, "the reject report (beside -o)", inputs.read_paths());
    if (!options.force) refuse_non_empty_output(output);
  }
  std::optional<OutputParents> parents;
  if (!options.check) parents.emplace(output);
  GenOutcome outcome = apply_gen_inputs(std::move(inputs), options, reject_file);

  GenResult& result = outcome.result;
  result.check = options.check;
  result.tree_files = outcome.tree.size();
  if (options.check) return result;

  PhaseTimer timer;
  outcome.tree[manifest::kTreeMarkerName] =
      FileEntry{manifest::marker_text(outcome.marker), FileKind::regular};
  fs::write_tree_atomically(outcome.tree, output,
                            options.force ? fs::ReplaceMode::replace : fs::ReplaceMode::refuse_non_empty);
  timer.mark("write");
  parents->keep();
  for (const auto& [phase, seconds] : timer.timings()) result.timings[phase] = seconds;
  result.output = output;
  // A reject report from an earlier failed run describes a patch that now applies.
  std::error_code ec;
  stdfs::remove(*reject_file, ec);
  fs::remove_stale_staging(*reject_file);
  if (outcome.failed_hunks > 0) {
    std::string message = fmt::format(
        "{} hunk(s) of {} did not apply; {} was written with the hunks that did, and each "
        "file's failed ones in <file>.rej beside it:{}",
        outcome.failed_hunks, result.patch.string(), output.string(), outcome.failures);
    throw Error(std::move(message),
                "fix those files by hand, delete the .rej files, then regenerate the patch with "
                "`apexnpu make-patch --ref <the new commit> --tree " +
                    output.string() + "`",
                result.to_json());
  }
  return result;
}

}  // namespace apexnpu::commands
