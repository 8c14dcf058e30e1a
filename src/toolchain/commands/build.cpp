#include "commands/build.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <map>

#include "commands/build_output.h"
#include "commands/build_targets.h"
#include "commands/gen.h"
#include "compile/compiler.h"
#include "compile/native_build.h"
#include "compile/object_cache.h"
#include "compile/runtime_build_config.h"
#include "compile/runtime_registry.h"
#include "core/child_group.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/subprocess.h"
#include "fs/file_io.h"
#include "fs/output_guard.h"
#include "fs/tree_io.h"
#include "manifest/build_manifest.h"
#include "manifest/compat_matrix.h"
#include "manifest/tree_marker.h"
#include "wheel/manylinux.h"
#include "wheel/package_files.h"
#include "wheel/pep440.h"
#include "wheel/startup_files.h"
#include "wheel/verify.h"
#include "wheel/wheel_writer.h"

namespace apexnpu::commands {
namespace stdfs = std::filesystem;

std::optional<std::int64_t> epoch_from_env() {
  const char* s = std::getenv("SOURCE_DATE_EPOCH");
  if (s == nullptr || *s == '\0') return std::nullopt;
  std::int64_t v = 0;
  const std::string_view text(s);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw UsageError(fmt::format("SOURCE_DATE_EPOCH={} is not a number of seconds since 1970", s),
                     "set it to e.g. $(git log -1 --format=%ct), or unset it");
  return v;
}

namespace {

constexpr const char* kEmulatorName = "torch_npu_emulator";

// The apex package's files (path -> bytes) and where the tree came from.
struct ApexSources {
  wheel::WheelFiles files;
  std::string tree_source;                     // "gen", "--tree", "--allow-foreign-tree"
  std::optional<manifest::TreeMarker> marker;  // what gen recorded; none for a foreign tree
  std::optional<bool> modified;                // the tree's files changed since gen wrote them
};

void warn_skipped(const wheel::PackageSelection& package, const BuildCallbacks& cb) {
  for (const auto& s : package.skipped_symlinks)
    if (cb.warn) cb.warn(fmt::format("{}: symbolic link left out of the wheel", s));
}

// A --tree: gen's output (its marker says what it was made from, and whether it was edited
// since is found by its digest), or with --allow-foreign-tree any tree holding apex/.
ApexSources collect_tree_files(const BuildOptions& o, const BuildCallbacks& cb) {
  const stdfs::path& tree = *o.tree;
  ApexSources apex;
  const stdfs::path marker_path = tree / manifest::kTreeMarkerName;
  const std::optional<std::string> marker_text = try_read_file(marker_path);
  if (!marker_text) {
    std::error_code ec;
    if (stdfs::is_directory(tree, ec) && !o.allow_foreign_tree)
      throw Error(fmt::format("--tree {} was not made by `apexnpu gen`: it has no {}, so nothing "
                              "says which upstream, patch and overlay it holds",
                              tree.string(), manifest::kTreeMarkerName),
                  "make the tree with `apexnpu gen -o DIR` (and edit it there), or pass "
                  "--allow-foreign-tree to build it anyway (the manifest then says so)");
    const wheel::PackageSelection package = wheel::select_package_files(tree);
    warn_skipped(package, cb);
    for (const auto& rel : package.files) apex.files[rel] = read_file(tree / rel);
    wheel::add_startup_files(tree, apex.files);
    apex.tree_source = "--allow-foreign-tree";
    return apex;
  }
  apex.marker = manifest::parse_tree_marker(*marker_text, marker_path.string());
  // apex/ may be a symlink to a directory (a volume, a CI checkout): read through it, as through
  // the root (run_build keeps -o out of where it points).
  const FileTree files = fs::read_tree(tree, fs::default_excludes(), {}, {"apex"});
  apex.modified = manifest::tree_files_digest(files) != apex.marker->files_digest;
  const wheel::PackageSelection package =
      wheel::select_package_files(files, fmt::format("--tree {}", tree.string()));
  warn_skipped(package, cb);
  for (const auto& rel : package.files) apex.files[rel] = files.at(rel).content;
  wheel::add_startup_files(files, apex.files);
  apex.tree_source = "--tree";
  return apex;
}

// From --tree, or from gen run in memory when there is none; -o is refused where it would
// write into what is read.
ApexSources collect_apex_files(const BuildOptions& o, const BuildCallbacks& cb) {
  if (o.tree) return collect_tree_files(o, cb);
  ApexSources apex;
  GenOptions gen;
  gen.upstream = o.upstream;
  GenInputs inputs = read_gen_inputs(gen, {cb.detail});
  fs::refuse_output_over_inputs(o.output, "-o", inputs.read_paths());
  GenOutcome generated = apply_gen_inputs(std::move(inputs), gen, std::nullopt);
  apex.marker = generated.marker;
  apex.modified = false;
  apex.tree_source = "gen";
  const wheel::PackageSelection package = wheel::select_package_files(
      generated.tree, fmt::format("the tree gen made from {} at {}", generated.marker.upstream_url,
                                  generated.marker.upstream_commit));
  warn_skipped(package, cb);
  for (const auto& rel : package.files) apex.files[rel] = generated.tree.at(rel).content;
  wheel::add_startup_files(generated.tree, apex.files);
  return apex;
}

// Modules of apex's overlay that the emulator's torch_npu carries too, the same bytes at its own
// path: one source for two packages that may not import each other (apex runs on Huawei's
// torch_npu; the emulator never imports apex). In the source tree a symbolic link stands at the
// torch_npu path, for the tests that import the package from there.
struct SharedModule {
  const char* overlay_path;   // under patches/overlay/
  const char* emulator_path;  // in the emulator's wheel
};
constexpr std::array<SharedModule, 1> kSharedModules = {
    {{"apex/optimizers/optimizer_kinds.py", "torch_npu/optim/_optimizer_kinds.py"}}};

// The torch_npu emulator package's files, from apexnpu's own data.
wheel::WheelFiles collect_emulator_files(const BuildCallbacks& cb) {
  const stdfs::path root = emulator_package_root();
  wheel::PackageSelection package = wheel::select_package_files(root, "torch_npu");
  wheel::WheelFiles files;
  for (const auto& rel : package.files) files[rel] = read_file(root / rel);
  for (const SharedModule& shared : kSharedModules) {
    files[shared.emulator_path] = read_file(bundled_overlay_dir() / shared.overlay_path);
    std::erase(package.skipped_symlinks, std::string(shared.emulator_path));
  }
  warn_skipped(package, cb);
  return files;
}

// What every step reads: the bundled data and the build's time.
struct BuildContext {
  std::string version;
  std::int64_t build_time = 0;
  stdfs::path templates;
  stdfs::path runtime_dir;
  stdfs::path object_cache;
  manifest::CompatMatrix matrix;
  wheel::ManylinuxPolicies policies;
};

BuildContext load_context(const BuildOptions& o, std::string version) {
  BuildContext ctx;
  ctx.version = std::move(version);
  ctx.build_time = o.source_date_epoch ? *o.source_date_epoch : static_cast<std::int64_t>(std::time(nullptr));
  ctx.runtime_dir = runtime_source_dir();
  ctx.templates = templates_dir();
  ctx.object_cache =
      stdfs::absolute(o.object_cache ? *o.object_cache : compile::default_cache_dir()).lexically_normal();
  ctx.matrix = manifest::load_compat_matrix(ctx.templates);
  ctx.policies = wheel::load_manylinux_policies(ctx.templates);
  return ctx;
}

// The runtime compiled once for `target` and the binding once per Python, in one job pool.
compile::NativeBuildResult compile_target(const BuildOptions& o, const BuildContext& ctx,
                                          const BuildTarget& target, const BuildOutput& output,
                                          const BuildCallbacks& cb) {
  compile::NativeBuildOptions native;
  native.runtime_dir = ctx.runtime_dir;
  native.cache_dir = ctx.object_cache;
  native.output_dir = output.scratch() / "native" / target.architecture;
  native.jobs = o.jobs;  // 0: core::thread_count's rule for compile work
  native.native = o.native;
  native.debug = o.debug;
  std::vector<compile::TargetPython> pythons;
  for (const auto& py : target.pythons)
    pythons.push_back({py.info.version, py.include_dir, py.info.ext_suffix, py.include_flags});
  return compile::build_native(native, target.config, target.compiler, pythons, cb.progress);
}

// The optimizers the runtime reports about itself, from the built module that links it.
std::vector<compile::RuntimeOptimizer> runtime_optimizers(const std::vector<compile::BuiltModule>& modules) {
  for (const auto& module : modules)
    if (auto optimizers = compile::read_runtime_registry(module.file)) return *optimizers;
  throw Error(fmt::format("no built module carries the runtime's optimizer registry (section {})",
                          compile::kRuntimeRegistrySection),
              "the runtime's optim/registry_description.cpp must be linked into a binding "
              "module (links_runtime in build.json)");
}

// A wheel ready to be written: its files with the dist-info, and its names.
struct PlannedWheel {
  std::string layout_name;  // name-version-tag, the layout directory
  std::string wheel_file;   // the .whl file name
  wheel::WheelFiles files;
  std::string dist_info;
};

PlannedWheel plan_wheel(wheel::WheelFiles files, const wheel::WheelIdentity& id, const stdfs::path& templates,
                        const std::map<std::string, std::string>& extra_dist_info) {
  PlannedWheel w;
  w.layout_name = fmt::format("{}-{}-{}", wheel::escape_file_name_part(id.name),
                              wheel::escape_file_name_part(id.version), id.tag);
  w.wheel_file = wheel::wheel_file_name(id.name, id.version, id.tag);
  w.dist_info = wheel::add_dist_info(files, id, templates, extra_dist_info);
  w.files = std::move(files);
  return w;
}

// The emulator's wheel of one architecture: its package, with the runtime's binding as
// torch_npu/_apexnpu (written for CPython 3.7's stable ABI: one module for every Python).
wheel::WheelIdentity emulator_identity(const BuildContext& ctx, const std::string& platform_tag,
                                       const std::string& platform) {
  wheel::WheelIdentity id;
  id.name = kEmulatorName;
  id.version = ctx.version;
  id.tag = fmt::format("cp37-abi3-{}", platform_tag);
  id.platform = platform;
  id.apexnpu_version = APEXNPU_VERSION;
  id.top_level = {"torch_npu"};
  id.metadata_template = "METADATA-emulator";
  return id;
}

// The options checked before any work is done; returns the local version label.
std::string check_options(const BuildOptions& o) {
  const std::string label = wheel::validate_local_label(o.version_label);
  if (o.jobs < 0) throw UsageError(fmt::format("-j {}: must be 1 or more", o.jobs));
  return label;
}

// The emulator package's files and their digest, which the manifest records.
struct EmulatorPackage {
  wheel::WheelFiles files;
  std::string digest;
};

// What goes into the wheels, read before anything is compiled or written.
struct Packages {
  ApexSources apex;
  std::optional<EmulatorPackage> emulator;  // none with --no-emulator
};

Packages collect_packages(const BuildOptions& o, const BuildCallbacks& cb) {
  Packages packages{collect_apex_files(o, cb), std::nullopt};
  if (o.emulator) {
    wheel::WheelFiles files = collect_emulator_files(cb);
    std::string digest = manifest::files_digest(files);
    packages.emulator = EmulatorPackage{std::move(files), std::move(digest)};
  }
  return packages;
}

// One apex wheel of the build: a target, one of its Pythons, and its compiled modules.
struct WheelJob {
  const BuildTarget* target = nullptr;
  const TargetPython* python = nullptr;
  std::vector<compile::BuiltModule> modules;
  const compile::NativeBuildResult* built = nullptr;  // the target's compilation
};

// The platform tags the job's modules can carry (PEP 600); a linux_ fallback is said, with why.
wheel::PlatformTags platform_of(const BuildContext& ctx, const WheelJob& job,
                                const wheel::WheelFiles& module_files, const BuildCallbacks& cb) {
  std::vector<wheel::WheelBinary> binaries;
  for (const auto& [path, bytes] : module_files) binaries.push_back(wheel::read_wheel_binary(path, bytes));
  wheel::PlatformTags tags = wheel::platform_tags(ctx.policies, job.target->architecture, binaries);
  if (!tags.reasons.empty() && cb.warn) {
    cb.warn(fmt::format("{} for Python {} is tagged {}: no manylinux policy holds", job.target->architecture,
                        job.python->info.version, tags.str()));
    for (const auto& reason : tags.reasons) cb.warn("  " + reason);
  }
  return tags;
}

constexpr const char* kRuntimeModule = "apex._apexnpu";
constexpr const char* kEmulatorRuntimePath = "torch_npu/_apexnpu.abi3.so";

// The emulator's wheel for one target: its package files and the target's runtime binding.
PlannedWheel plan_emulator_wheel(const BuildContext& ctx, const EmulatorPackage& package, const WheelJob& job,
                                 const BuildCallbacks& cb) {
  const auto module = std::find_if(job.modules.begin(), job.modules.end(),
                                   [](const auto& m) { return m.name == kRuntimeModule; });
  if (module == job.modules.end())
    throw Error(fmt::format("no built module is {}, which the emulator's wheel carries", kRuntimeModule),
                "src/runtime/build.json must list it among the binding's modules");
  wheel::WheelFiles files = package.files;
  files[kEmulatorRuntimePath] = read_file(module->file);
  const wheel::PlatformTags platform =
      platform_of(ctx, job, {{kEmulatorRuntimePath, files[kEmulatorRuntimePath]}}, cb);
  return plan_wheel(std::move(files), emulator_identity(ctx, platform.str(), job.python->info.platform),
                    ctx.templates, {});
}

manifest::BuildManifest describe_build(const BuildOptions& o, const BuildContext& ctx,
                                       const ApexSources& apex, const WheelJob& job, const std::string& tag,
                                       const std::string& platform,
                                       const std::vector<std::string>& module_paths,
                                       const std::optional<manifest::EmulatorWheel>& emulator) {
  const TargetPython& py = *job.python;
  manifest::BuildManifest m;
  m.apexnpu_version = APEXNPU_VERSION;
  m.wheel_name = "apex";
  m.wheel_version = ctx.version;
  m.wheel_file = wheel::wheel_file_name("apex", ctx.version, tag);
  // What the tree was made from, as gen recorded it; nothing is assumed of a foreign tree.
  m.tree_source = apex.tree_source;
  if (apex.marker) {
    m.upstream_url = apex.marker->upstream_url;
    m.upstream_commit = apex.marker->upstream_commit;
    m.patch_sha256 = apex.marker->patch_sha256;
    m.overlay_digest = apex.marker->overlay_digest;
  }
  m.tree_modified = apex.modified;
  m.python_version = py.info.version;
  m.python_implementation = py.info.implementation;
  m.python_tag = py.tag.python;
  m.abi_tag = py.tag.abi;
  m.platform_tag = platform;
  m.ext_suffix = py.info.ext_suffix;
  m.architecture = job.target->architecture;
  m.compiler_command = quote_command(job.target->compiler.command);
  m.compiler_version = job.target->compiler.version;
  m.compile_flags = job.built->compile_flags;
  m.link_flags = job.built->link_flags;
  m.runtime_version = job.target->config.runtime_version;
  for (const auto& optimizer : runtime_optimizers(job.modules)) {
    m.optimizers.push_back(optimizer.kind);
    m.optimizer_classes[optimizer.kind] = optimizer.python_class;
  }
  std::sort(m.optimizers.begin(), m.optimizers.end());
  m.isa_levels = job.built->isa_levels;
  m.modules = module_paths;
  m.emulator = emulator;
  m.build_time = ctx.build_time;
  m.build_time_from_source_date_epoch = o.source_date_epoch.has_value();
  m.compat_matrix = ctx.matrix.raw;
  m.tested_with = ctx.matrix.tested_with;
  return m;
}

// `startup_module`: the wheel carries apex's start-up hook (wheel/startup_files.h).
wheel::WheelIdentity apex_identity(const BuildContext& ctx, const WheelJob& job, const std::string& tag,
                                   bool startup_module) {
  wheel::WheelIdentity id;
  id.version = ctx.version;
  id.tag = tag;
  id.platform = job.python->info.platform;
  id.apexnpu_version = APEXNPU_VERSION;
  id.top_level.push_back("apex");
  if (startup_module) id.top_level.emplace_back(wheel::kStartupModule);
  for (const auto& mod : job.target->config.modules) {
    const std::string top = mod.name.substr(0, mod.name.find('.'));
    if (std::find(id.top_level.begin(), id.top_level.end(), top) == id.top_level.end())
      id.top_level.push_back(top);
  }
  std::sort(id.top_level.begin(), id.top_level.end());
  return id;
}

// An apex wheel planned with its manifest.
struct ApexWheel {
  const WheelJob* job = nullptr;
  std::vector<std::string> platform_tags;
  std::string manifest_text;
  PlannedWheel planned;
};

ApexWheel plan_apex_wheel(const BuildOptions& o, const BuildContext& ctx, const Packages& packages,
                          const WheelJob& job, const PlannedWheel* emulator, const BuildCallbacks& cb) {
  wheel::WheelFiles modules;
  std::vector<std::string> module_paths;
  for (const auto& m : job.modules) {
    modules[m.relative_path] = read_file(m.file);
    module_paths.push_back(m.relative_path);
  }
  const wheel::PlatformTags platform = platform_of(ctx, job, modules, cb);
  const std::string tag =
      fmt::format("{}-{}-{}", job.python->tag.python, job.python->tag.abi, platform.str());
  std::optional<manifest::EmulatorWheel> record;
  if (emulator)
    record = manifest::EmulatorWheel{kEmulatorName, emulator->wheel_file, packages.emulator->digest};
  ApexWheel w;
  w.job = &job;
  w.platform_tags = platform.tags;
  w.manifest_text =
      manifest::to_json(describe_build(o, ctx, packages.apex, job, tag, platform.str(), module_paths, record))
          .dump(2) +
      "\n";
  wheel::WheelFiles files = packages.apex.files;
  files.merge(modules);
  const bool startup_module = wheel::has_startup_module(files);
  w.planned = plan_wheel(std::move(files), apex_identity(ctx, job, tag, startup_module), ctx.templates,
                         {{"apexnpu_manifest.json", w.manifest_text}});
  return w;
}

void verify_or_throw(const BuildContext& ctx, const stdfs::path& path) {
  const auto report = wheel::verify_wheel(wheel::load_wheel(path), ctx.policies);
  if (report.ok()) return;
  std::string list;
  for (const auto& v : report.violations) list += "\n  " + v;
  throw Error(fmt::format("the wheel written to {} does not verify:{}", path.string(), list),
              "this is a bug in apexnpu; please report it with the output of `apexnpu verify`");
}

// Writes the layout (and with `zip` the .whl) into the staging folder, verified; returns the
// names of the items to commit.
std::vector<std::string> stage_wheel(const BuildContext& ctx, const BuildOutput& output,
                                     const PlannedWheel& w, bool zip) {
  wheel::write_layout(w.files, output.staged(w.layout_name));
  verify_or_throw(ctx, output.staged(w.layout_name));
  if (!zip) return {w.layout_name};
  write_file_atomic(output.staged(w.wheel_file),
                    wheel::build_wheel_zip(w.files, w.dist_info, ctx.build_time));
  verify_or_throw(ctx, output.staged(w.wheel_file));
  return {w.layout_name, w.wheel_file};
}

std::string manifest_name(const PlannedWheel& apex) { return apex.layout_name + ".manifest.json"; }

// Stages every apex wheel with its manifest beside it, then the emulator's wheel, each verified;
// returns the names to commit, in order.
std::vector<std::string> stage_wheels(const BuildContext& ctx, const BuildOutput& output,
                                      const std::vector<ApexWheel>& apex,
                                      const std::vector<PlannedWheel>& emulators, bool zip) {
  std::vector<std::string> items;
  for (const ApexWheel& w : apex) {
    for (auto& item : stage_wheel(ctx, output, w.planned, zip)) items.push_back(std::move(item));
    write_file_atomic(output.staged(manifest_name(w.planned)), w.manifest_text);
    items.push_back(manifest_name(w.planned));
  }
  for (const PlannedWheel& emulator : emulators)
    for (auto& item : stage_wheel(ctx, output, emulator, zip)) items.push_back(std::move(item));
  return items;
}

// Moves the staged items into -o; returns where each now is, by name.
std::map<std::string, stdfs::path> commit(BuildOutput& output, const std::vector<std::string>& items) {
  const std::vector<stdfs::path> paths = output.commit(items);
  std::map<std::string, stdfs::path> committed;
  for (std::size_t i = 0; i < items.size(); ++i) committed.emplace(items[i], paths[i]);
  return committed;
}

std::optional<stdfs::path> committed_path(const std::map<std::string, stdfs::path>& committed,
                                          const std::string& name) {
  const auto it = committed.find(name);
  return it == committed.end() ? std::nullopt : std::optional<stdfs::path>(it->second);
}

BuiltWheel describe_wheel(const ApexWheel& w, const std::map<std::string, stdfs::path>& committed) {
  const TargetPython& py = *w.job->python;
  BuiltWheel b;
  b.architecture = w.job->target->architecture;
  b.python = {py.executable,      py.info.version, py.info.implementation, py.info.soabi,
              py.info.ext_suffix, py.include_dir,  py.info.platform};
  b.tag = fmt::format("{}-{}-{}", py.tag.python, py.tag.abi, fmt::join(w.platform_tags, "."));
  b.platform_tags = w.platform_tags;
  b.files = w.planned.files.size();
  b.layout = committed.at(w.planned.layout_name);
  b.manifest = committed.at(manifest_name(w.planned));
  b.wheel = committed_path(committed, w.planned.wheel_file);
  if (b.wheel) b.wheel_sha256 = sha256_hex(read_file(*b.wheel));
  b.record_sha256 = sha256_hex(w.planned.files.at(w.planned.dist_info + "/RECORD"));
  b.manifest_sha256 = sha256_hex(w.manifest_text);
  return b;
}

BuildResult describe_result(const BuildContext& ctx, const std::vector<compile::NativeBuildResult>& compiled,
                            const std::vector<ApexWheel>& apex, const std::vector<PlannedWheel>& emulators,
                            const std::map<std::string, stdfs::path>& committed) {
  BuildResult r;
  for (const ApexWheel& w : apex) r.wheels.push_back(describe_wheel(w, committed));
  const BuiltWheel& first = r.wheels.front();
  r.python = first.python;
  r.tag = first.tag;
  r.version = ctx.version;
  for (const auto& built : compiled) {
    r.compiled += built.compiled;
    r.total += built.total;
    r.linked += built.linked;
  }
  r.cached = r.total - r.compiled;
  r.object_cache = ctx.object_cache;
  r.files = first.files;
  r.layout = first.layout;
  r.manifest = first.manifest;
  r.wheel = first.wheel;
  for (const PlannedWheel& emulator : emulators)
    r.emulators.push_back(BuiltEmulator{kEmulatorName, committed.at(emulator.layout_name),
                                        committed_path(committed, emulator.wheel_file)});
  if (!r.emulators.empty()) r.emulator = r.emulators.front();
  return r;
}

}  // namespace

namespace {

nlohmann::json path_or_null(const std::optional<stdfs::path>& p) {
  return p ? nlohmann::json(p->string()) : nlohmann::json(nullptr);
}

nlohmann::json python_json(const BuiltPython& python) {
  return {{"executable", python.executable.string()},
          {"version", python.version},
          {"implementation", python.implementation},
          {"soabi", python.soabi},
          {"ext_suffix", python.ext_suffix},
          {"include_dir", python.include_dir.string()},
          {"platform", python.platform}};
}

}  // namespace

nlohmann::json BuiltWheel::to_json() const {
  return {
      {"architecture", architecture},
      {"python", python_json(python)},
      {"tag", tag},
      {"platform_tags", platform_tags},
      {"files", files},
      {"layout", layout.string()},
      {"manifest", manifest.string()},
      {"wheel", path_or_null(wheel)},
      {"sha256", wheel_sha256 ? nlohmann::json(*wheel_sha256) : nlohmann::json(nullptr)},
      {"record_sha256", record_sha256},
      {"manifest_sha256", manifest_sha256},
  };
}

nlohmann::json emulator_json(const BuiltEmulator& emulator) {
  return {
      {"name", emulator.name}, {"layout", emulator.layout.string()}, {"wheel", path_or_null(emulator.wheel)}};
}

nlohmann::json BuildResult::to_json() const {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& w : wheels) all.push_back(w.to_json());
  nlohmann::json emulators_json = nlohmann::json::array();
  for (const auto& e : emulators) emulators_json.push_back(emulator_json(e));
  return {
      {"python", python_json(python)},
      {"tag", tag},
      {"version", version},
      {"compiled", compiled},
      {"cached", cached},
      {"total", total},
      {"linked", linked},
      {"cache_dir", object_cache.string()},
      {"files", files},
      {"layout", layout.string()},
      {"manifest", manifest.string()},
      {"wheel", path_or_null(wheel)},
      {"wheels", all},
      {"emulator", emulator ? emulator_json(*emulator) : nlohmann::json(nullptr)},
      {"emulators", emulators_json},
      {"verified", true},
  };
}

BuildResult run_build(const BuildOptions& o, const BuildCallbacks& cb) {
  const std::string label = check_options(o);
  // Both resolved: a --tree or an apex/ in it that is a symlink is guarded where it points.
  if (o.tree)
    fs::refuse_output_over_inputs(o.output, "-o",
                                  {{*o.tree, "the tree (--tree)"}, {*o.tree / "apex", "the tree's apex/"}});
  // Every compiler, linker and probe this build starts dies with it, however it ends.
  const ChildGroup children;
  const std::vector<BuildTarget> targets =
      resolve_targets(o.target, o.python, runtime_source_dir(), cb.warn, cb.detail);
  // Read everything before anything is compiled or written.
  Packages packages = collect_packages(o, cb);
  const BuildContext ctx = load_context(o, wheel::wheel_version(label));

  BuildOutput output(o.output);
  std::vector<compile::NativeBuildResult> compiled;
  for (const BuildTarget& target : targets) compiled.push_back(compile_target(o, ctx, target, output, cb));
  std::vector<WheelJob> jobs;
  for (std::size_t t = 0; t < targets.size(); ++t)
    for (std::size_t p = 0; p < targets[t].pythons.size(); ++p) {
      WheelJob job{&targets[t], &targets[t].pythons[p], {}, &compiled[t]};
      for (const auto& m : compiled[t].modules)
        if (m.python == p) job.modules.push_back(m);
      jobs.push_back(std::move(job));
    }

  // One emulator wheel per target, made with the target's first wheel job.
  std::vector<PlannedWheel> emulators;
  std::vector<std::size_t> emulator_of_job;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (!packages.emulator) break;
    if (j == 0 || jobs[j].target != jobs[j - 1].target)
      emulators.push_back(plan_emulator_wheel(ctx, *packages.emulator, jobs[j], cb));
    emulator_of_job.push_back(emulators.size() - 1);
  }
  std::vector<ApexWheel> apex;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const PlannedWheel* emulator = packages.emulator ? &emulators[emulator_of_job[j]] : nullptr;
    apex.push_back(plan_apex_wheel(o, ctx, packages, jobs[j], emulator, cb));
  }
  const std::vector<std::string> items = stage_wheels(ctx, output, apex, emulators, o.wheel);
  const std::map<std::string, stdfs::path> committed = commit(output, items);
  return describe_result(ctx, compiled, apex, emulators, committed);
}

}  // namespace apexnpu::commands
