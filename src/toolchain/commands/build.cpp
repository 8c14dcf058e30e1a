#include "commands/build.h"

#include <fmt/core.h>

#include <charconv>
#include <cstdlib>
#include <ctime>
#include <map>
#include <thread>

#include "commands/build_output.h"
#include "commands/gen.h"
#include "compile/compiler.h"
#include "fs/file_io.h"
#include "compile/native_build.h"
#include "compile/object_cache.h"
#include "compile/runtime_build_config.h"
#include "compile/runtime_registry.h"
#include "core/sha256.h"
#include "core/subprocess.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "manifest/build_manifest.h"
#include "manifest/compat_matrix.h"
#include "python/interpreter.h"
#include "wheel/package_files.h"
#include "wheel/pep440.h"
#include "wheel/verify.h"
#include "wheel/wheel_writer.h"

namespace apexnpu::commands {
namespace fs = std::filesystem;

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

// The interpreter the apex wheel is built for, checked before any work is done.
struct TargetPython {
  fs::path executable;
  python::PythonInfo info;
  fs::path include_dir;
  python::WheelTag tag;
};

TargetPython resolve_python(const BuildOptions& o, const BuildCallbacks& cb) {
  TargetPython py;
  py.executable = python::find_python(o.python, python::SearchEnv::from_environment());
  py.info = python::probe_python(py.executable);
  python::check_supported(py.info);
  py.include_dir = python::find_python_headers(py.info);
  py.tag = python::wheel_tag(py.info);
  if (cb.detail)
    cb.detail(fmt::format("python: {} ({} {}, tag {})", py.executable.string(),
                          py.info.implementation, py.info.version, py.tag.str()));
  return py;
}

// The apex package's files (path -> bytes) and where the tree came from.
struct ApexSources {
  wheel::WheelFiles files;
  std::optional<std::string> upstream_url, upstream_commit;
};

void warn_skipped(const wheel::PackageSelection& package, const BuildCallbacks& cb) {
  for (const auto& s : package.skipped_symlinks)
    if (cb.warn) cb.warn(fmt::format("{}: symbolic link left out of the wheel", s));
}

// From --tree, or from gen run in memory when there is none.
ApexSources collect_apex_files(const BuildOptions& o, const BuildCallbacks& cb) {
  ApexSources apex;
  if (o.tree) {
    const wheel::PackageSelection package = wheel::select_package_files(*o.tree);
    warn_skipped(package, cb);
    for (const auto& rel : package.files) apex.files[rel] = read_file(*o.tree / rel);
    return apex;
  }
  GenOptions gen;
  gen.upstream = o.upstream;
  GenOutcome generated = generate_tree(gen, {cb.detail}, std::nullopt);
  apex.upstream_url = generated.result.upstream.url;
  apex.upstream_commit = generated.result.upstream.commit;
  const wheel::PackageSelection package = wheel::select_package_files(
      generated.tree,
      fmt::format("the tree gen made from {} at {}", *apex.upstream_url, *apex.upstream_commit));
  warn_skipped(package, cb);
  for (const auto& rel : package.files) apex.files[rel] = generated.tree.at(rel).content;
  return apex;
}

// The torch_npu emulator package's files, from apexnpu's own data.
wheel::WheelFiles collect_emulator_files(const BuildCallbacks& cb) {
  const fs::path root = emulator_package_root();
  const wheel::PackageSelection package = wheel::select_package_files(root, "torch_npu");
  warn_skipped(package, cb);
  wheel::WheelFiles files;
  for (const auto& rel : package.files) files[rel] = read_file(root / rel);
  return files;
}

// What every step reads: the bundled data, the compiler and the build's time.
struct BuildContext {
  std::string version;
  std::int64_t build_time = 0;
  fs::path templates;
  fs::path runtime_dir;
  compile::RuntimeBuildConfig config;
  compile::Compiler compiler;
  manifest::CompatMatrix matrix;
};

BuildContext load_context(const BuildOptions& o, std::string version) {
  BuildContext ctx;
  ctx.version = std::move(version);
  ctx.build_time = o.source_date_epoch ? *o.source_date_epoch
                                       : static_cast<std::int64_t>(std::time(nullptr));
  ctx.compiler = compile::detect_compiler();
  ctx.runtime_dir = runtime_source_dir();
  ctx.config = compile::load_runtime_build_config(ctx.runtime_dir);
  ctx.templates = templates_dir();
  ctx.matrix = manifest::load_compat_matrix(ctx.templates);
  return ctx;
}

compile::NativeBuildResult run_native_build(const BuildOptions& o, const BuildContext& ctx,
                                            const TargetPython& py, const BuildOutput& output,
                                            const BuildCallbacks& cb,
                                            const fs::path& object_cache) {
  compile::NativeBuildOptions native;
  native.runtime_dir = ctx.runtime_dir;
  native.cache_dir = object_cache;
  native.output_dir = output.scratch() / "native";
  native.jobs = o.jobs > 0 ? o.jobs
                           : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  native.native = o.native;
  native.debug = o.debug;
  return compile::build_native(native, ctx.config, ctx.compiler,
                               {py.info.version, py.include_dir, py.info.ext_suffix}, cb.progress);
}

// The optimizers the runtime reports about itself, from the built module that links it.
std::vector<compile::RuntimeOptimizer> runtime_optimizers(const compile::NativeBuildResult& built) {
  for (const auto& module : built.modules)
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

PlannedWheel plan_wheel(wheel::WheelFiles files, const wheel::WheelIdentity& id,
                        const fs::path& templates,
                        const std::map<std::string, std::string>& extra_dist_info) {
  PlannedWheel w;
  w.layout_name = fmt::format("{}-{}-{}", wheel::escape_file_name_part(id.name),
                              wheel::escape_file_name_part(id.version), id.tag);
  w.wheel_file = wheel::wheel_file_name(id.name, id.version, id.tag);
  w.dist_info = wheel::add_dist_info(files, id, templates, extra_dist_info);
  w.files = std::move(files);
  return w;
}

wheel::WheelIdentity apex_identity(const BuildContext& ctx, const TargetPython& py) {
  wheel::WheelIdentity id;
  id.version = ctx.version;
  id.tag = py.tag.str();
  id.platform = py.info.platform;
  id.apexnpu_version = APEXNPU_VERSION;
  id.top_level.push_back("apex");
  for (const auto& mod : ctx.config.modules) {
    const std::string top = mod.name.substr(0, mod.name.find('.'));
    if (std::find(id.top_level.begin(), id.top_level.end(), top) == id.top_level.end())
      id.top_level.push_back(top);
  }
  std::sort(id.top_level.begin(), id.top_level.end());
  return id;
}

wheel::WheelIdentity emulator_identity(const BuildContext& ctx) {
  wheel::WheelIdentity id;
  id.name = kEmulatorName;
  id.version = ctx.version;
  id.tag = "py3-none-any";
  id.platform = "any";
  id.apexnpu_version = APEXNPU_VERSION;
  id.top_level = {"torch_npu"};
  id.metadata_template = "METADATA-emulator";
  id.purelib = true;
  return id;
}

manifest::BuildManifest describe_build(const BuildOptions& o, const BuildContext& ctx,
                                       const TargetPython& py, const ApexSources& apex,
                                       const compile::NativeBuildResult& built,
                                       const std::vector<std::string>& module_paths,
                                       const std::optional<manifest::EmulatorWheel>& emulator) {
  manifest::BuildManifest m;
  m.apexnpu_version = APEXNPU_VERSION;
  m.wheel_name = "apex";
  m.wheel_version = ctx.version;
  m.wheel_file = wheel::wheel_file_name("apex", ctx.version, py.tag.str());
  m.tree_source = o.tree ? "--tree" : "gen";
  m.upstream_url = apex.upstream_url;
  m.upstream_commit = apex.upstream_commit;
  std::error_code ec;
  const fs::path patch = bundled_patch_file();
  if (fs::is_regular_file(patch, ec)) m.patch_sha256 = sha256_hex(read_file(patch));
  const fs::path overlay = bundled_overlay_dir();
  if (fs::is_directory(overlay, ec)) m.overlay_digest = manifest::directory_digest(overlay.string());
  m.python_version = py.info.version;
  m.python_implementation = py.info.implementation;
  m.python_tag = py.tag.python;
  m.abi_tag = py.tag.abi;
  m.platform_tag = py.tag.platform;
  m.ext_suffix = py.info.ext_suffix;
  m.compiler_command = quote_command(ctx.compiler.command);
  m.compiler_version = ctx.compiler.version;
  m.compile_flags = built.compile_flags;
  m.link_flags = built.link_flags;
  m.runtime_version = ctx.config.runtime_version;
  for (const auto& optimizer : runtime_optimizers(built)) {
    m.optimizers.push_back(optimizer.kind);
    m.optimizer_classes[optimizer.kind] = optimizer.python_class;
  }
  std::sort(m.optimizers.begin(), m.optimizers.end());
  m.isa_levels = built.isa_levels;
  m.modules = module_paths;
  m.emulator = emulator;
  m.build_time = ctx.build_time;
  m.build_time_from_source_date_epoch = o.source_date_epoch.has_value();
  m.compat_matrix = ctx.matrix.raw;
  m.tested_with = ctx.matrix.tested_with;
  return m;
}

void verify_or_throw(const fs::path& path) {
  const auto report = wheel::verify_wheel(wheel::load_wheel(path));
  if (report.ok()) return;
  std::string list;
  for (const auto& v : report.violations) list += "\n  " + v;
  throw Error(fmt::format("the wheel written to {} does not verify:{}", path.string(), list),
              "this is a bug in apexnpu; please report it with the output of `apexnpu verify`");
}

// Writes the layout (and with `zip` the .whl) into the staging folder, verified; returns the
// names of the items to commit.
std::vector<std::string> stage_wheel(const BuildOutput& output, const PlannedWheel& w, bool zip,
                                     std::int64_t build_time) {
  wheel::write_layout(w.files, output.staged(w.layout_name));
  verify_or_throw(output.staged(w.layout_name));
  if (!zip) return {w.layout_name};
  write_file_atomic(output.staged(w.wheel_file),
                    wheel::build_wheel_zip(w.files, w.dist_info, build_time));
  verify_or_throw(output.staged(w.wheel_file));
  return {w.layout_name, w.wheel_file};
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

// The runtime and binding compiled through the object cache, their modules added to apex's
// files.
struct CompiledRuntime {
  fs::path object_cache;
  compile::NativeBuildResult built;
  std::vector<std::string> module_paths;  // inside the wheel
};

CompiledRuntime compile_runtime(const BuildOptions& o, const BuildContext& ctx,
                                const TargetPython& py, const BuildOutput& output,
                                const BuildCallbacks& cb, wheel::WheelFiles& apex_files) {
  CompiledRuntime runtime;
  runtime.object_cache = o.object_cache ? *o.object_cache : compile::default_cache_dir();
  runtime.built = run_native_build(o, ctx, py, output, cb, runtime.object_cache);
  for (const auto& m : runtime.built.modules) {
    apex_files[m.relative_path] = read_file(m.file);
    runtime.module_paths.push_back(m.relative_path);
  }
  return runtime;
}

// The manifest's text, as written beside apex's layout and into its dist-info.
std::string make_manifest(const BuildOptions& o, const BuildContext& ctx, const TargetPython& py,
                          const Packages& packages, const CompiledRuntime& runtime,
                          const std::optional<PlannedWheel>& emulator) {
  std::optional<manifest::EmulatorWheel> record;
  if (emulator)
    record = manifest::EmulatorWheel{kEmulatorName, emulator->wheel_file,
                                     packages.emulator->digest};
  const manifest::BuildManifest m =
      describe_build(o, ctx, py, packages.apex, runtime.built, runtime.module_paths, record);
  return manifest::to_json(m).dump(2) + "\n";
}

std::string manifest_name(const PlannedWheel& apex) { return apex.layout_name + ".manifest.json"; }

// Stages apex's wheel, the manifest beside it and the emulator's wheel, each verified; returns
// the names to commit, in order.
std::vector<std::string> stage_wheels(const BuildOutput& output, const PlannedWheel& apex,
                                      const std::string& manifest_text,
                                      const std::optional<PlannedWheel>& emulator, bool zip,
                                      std::int64_t build_time) {
  std::vector<std::string> items = stage_wheel(output, apex, zip, build_time);
  write_file_atomic(output.staged(manifest_name(apex)), manifest_text);
  items.push_back(manifest_name(apex));
  if (emulator)
    for (auto& item : stage_wheel(output, *emulator, zip, build_time))
      items.push_back(std::move(item));
  return items;
}

// Moves the staged items into -o; returns where each now is, by name.
std::map<std::string, fs::path> commit(BuildOutput& output, const std::vector<std::string>& items) {
  const std::vector<fs::path> paths = output.commit(items);
  std::map<std::string, fs::path> committed;
  for (std::size_t i = 0; i < items.size(); ++i) committed.emplace(items[i], paths[i]);
  return committed;
}

std::optional<fs::path> committed_path(const std::map<std::string, fs::path>& committed,
                                       const std::string& name) {
  const auto it = committed.find(name);
  return it == committed.end() ? std::nullopt : std::optional<fs::path>(it->second);
}

BuildResult describe_result(const TargetPython& py, const BuildContext& ctx,
                            const CompiledRuntime& runtime, const PlannedWheel& apex,
                            const std::optional<PlannedWheel>& emulator,
                            const std::map<std::string, fs::path>& committed) {
  BuildResult r;
  r.python = {py.executable,      py.info.version, py.info.implementation, py.info.soabi,
              py.info.ext_suffix, py.include_dir,  py.info.platform};
  r.tag = py.tag.str();
  r.version = ctx.version;
  r.compiled = runtime.built.compiled;
  r.cached = runtime.built.total - runtime.built.compiled;
  r.total = runtime.built.total;
  r.linked = runtime.built.linked;
  r.object_cache = runtime.object_cache;
  r.files = apex.files.size();
  r.layout = committed.at(apex.layout_name);
  r.manifest = committed.at(manifest_name(apex));
  r.wheel = committed_path(committed, apex.wheel_file);
  if (emulator)
    r.emulator = BuiltEmulator{kEmulatorName, committed.at(emulator->layout_name),
                               committed_path(committed, emulator->wheel_file)};
  return r;
}

}  // namespace

nlohmann::json BuildResult::to_json() const {
  const auto path_or_null = [](const std::optional<fs::path>& p) {
    return p ? nlohmann::json(p->string()) : nlohmann::json(nullptr);
  };
  return {
      {"python", {{"executable", python.executable.string()}, {"version", python.version},
                  {"implementation", python.implementation}, {"soabi", python.soabi},
                  {"ext_suffix", python.ext_suffix}, {"include_dir", python.include_dir.string()},
                  {"platform", python.platform}}},
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
      {"emulator", emulator ? nlohmann::json{{"name", emulator->name},
                                             {"layout", emulator->layout.string()},
                                             {"wheel", path_or_null(emulator->wheel)}}
                            : nlohmann::json(nullptr)},
      {"verified", true},
  };
}

BuildResult run_build(const BuildOptions& o, const BuildCallbacks& cb) {
  const std::string label = check_options(o);
  const TargetPython py = resolve_python(o, cb);
  // Read everything before anything is compiled or written.
  Packages packages = collect_packages(o, cb);
  const BuildContext ctx = load_context(o, wheel::wheel_version(label));

  BuildOutput output(o.output);
  const CompiledRuntime runtime = compile_runtime(o, ctx, py, output, cb, packages.apex.files);
  std::optional<PlannedWheel> emulator;
  if (packages.emulator)
    emulator = plan_wheel(std::move(packages.emulator->files), emulator_identity(ctx),
                          ctx.templates, {});
  const std::string manifest_text = make_manifest(o, ctx, py, packages, runtime, emulator);
  const PlannedWheel apex = plan_wheel(std::move(packages.apex.files), apex_identity(ctx, py),
                                       ctx.templates, {{"apexnpu_manifest.json", manifest_text}});
  const std::vector<std::string> items =
      stage_wheels(output, apex, manifest_text, emulator, o.wheel, ctx.build_time);
  const std::map<std::string, fs::path> committed = commit(output, items);
  return describe_result(py, ctx, runtime, apex, emulator, committed);
}

}  // namespace apexnpu::commands
