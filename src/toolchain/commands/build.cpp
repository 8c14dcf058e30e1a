#include "commands/build.h"

#include <fmt/core.h>

#include <charconv>
#include <regex>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "commands/build_output.h"
#include "commands/gen.h"
#include "compile/compiler.h"
#include "compile/file_io.h"
#include "compile/native_build.h"
#include "compile/object_cache.h"
#include "compile/runtime_build_config.h"
#include "compile/sha256.h"
#include "compile/subprocess.h"
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

// The optimizers the runtime carries: each optim/<name>.h that declares a `class Fused...`
// (other than the FusedOptimizer base). AdamW is FusedAdam with decoupled weight decay.
std::vector<std::string> runtime_optimizers(const fs::path& runtime_dir) {
  static const std::regex fused_class(R"(class\s+(Fused\w+)\s*(final\s*)?:)");
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(runtime_dir / "optim", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".h") continue;
    const auto text = try_read_file(it->path());
    if (!text) continue;
    for (std::sregex_iterator m(text->begin(), text->end(), fused_class), none; m != none; ++m)
      if ((*m)[1] != "FusedOptimizer") {
        names.push_back(it->path().stem().string());
        if (names.back() == "adam") names.push_back("adamw");
        break;
      }
  }
  std::sort(names.begin(), names.end());
  return names;
}

void verify_or_throw(const fs::path& path) {
  const auto report = wheel::verify_wheel(wheel::load_wheel(path));
  if (report.ok()) return;
  std::string list;
  for (const auto& v : report.violations) list += "\n  " + v;
  throw Error(fmt::format("the wheel written to {} does not verify:{}", path.string(), list),
              "this is a bug in apexnpu; please report it with the output of `apexnpu verify`");
}

}  // namespace

nlohmann::json run_build(const BuildOptions& o, const BuildCallbacks& cb) {
  const std::string label = wheel::validate_local_label(o.version_label);
  const std::string version = wheel::wheel_version(label);
  if (o.jobs < 0) throw UsageError(fmt::format("-j {}: must be 1 or more", o.jobs));

  // The target Python, checked before any work is done.
  const fs::path python_exe = python::find_python(o.python, python::SearchEnv::from_environment());
  const python::PythonInfo py = python::probe_python(python_exe);
  python::check_supported(py);
  const fs::path python_include = python::find_python_headers(py);
  const python::WheelTag tag = python::wheel_tag(py);
  if (cb.detail) cb.detail(fmt::format("python: {} ({} {}, tag {})", python_exe.string(),
                                       py.implementation, py.version, tag.str()));

  // The apex package's files (path -> bytes), read before anything is compiled or written.
  wheel::WheelFiles package_files;
  std::optional<std::string> upstream_url, upstream_commit;
  if (!o.tree) {
    GenOptions gen;
    gen.upstream = o.upstream;
    GenOutcome generated = generate_tree(gen, {cb.detail}, std::nullopt);
    const auto& up = generated.result.at("upstream");
    upstream_url = up.value("url", std::string());
    upstream_commit = up.value("commit", std::string());
    const wheel::PackageSelection package = wheel::select_package_files(
        generated.tree, fmt::format("the tree gen made from {} at {}", *upstream_url, *upstream_commit));
    for (const auto& s : package.skipped_symlinks)
      if (cb.warn) cb.warn(fmt::format("{}: symbolic link left out of the wheel", s));
    for (const auto& rel : package.files) package_files[rel] = generated.tree.at(rel).content;
  } else {
    const wheel::PackageSelection package = wheel::select_package_files(*o.tree);
    for (const auto& s : package.skipped_symlinks)
      if (cb.warn) cb.warn(fmt::format("{}: symbolic link left out of the wheel", s));
    for (const auto& rel : package.files) package_files[rel] = read_file(*o.tree / rel);
  }

  const std::optional<std::int64_t> epoch = o.source_date_epoch;
  const std::int64_t build_time = epoch ? *epoch : static_cast<std::int64_t>(std::time(nullptr));
  const compile::Compiler compiler = compile::detect_compiler();
  const fs::path runtime_dir = runtime_source_dir();
  const compile::RuntimeBuildConfig config = compile::load_runtime_build_config(runtime_dir);
  const fs::path templates = templates_dir();
  const manifest::CompatMatrix matrix = manifest::load_compat_matrix(templates);

  BuildOutput output(o.output);

  compile::NativeBuildOptions native;
  native.runtime_dir = runtime_dir;
  native.cache_dir = o.cache_dir ? *o.cache_dir : compile::default_cache_dir();
  native.output_dir = output.scratch() / "native";
  native.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  native.native = o.native;
  native.debug = o.debug;
  const compile::NativeBuildResult built = compile::build_native(
      native, config, compiler, {py.version, python_include, py.ext_suffix}, cb.progress);

  wheel::WheelFiles files = std::move(package_files);
  std::vector<std::string> module_paths;
  for (const auto& m : built.modules) {
    files[m.relative_path] = read_file(m.file);
    module_paths.push_back(m.relative_path);
  }

  const std::string layout_name = fmt::format("{}-{}-{}", wheel::escape_file_name_part("apex"),
                                              wheel::escape_file_name_part(version), tag.str());
  const std::string wheel_name = wheel::wheel_file_name("apex", version, tag.str());
  const std::string manifest_name = layout_name + ".manifest.json";

  manifest::BuildManifest m;
  m.apexnpu_version = APEXNPU_VERSION;
  m.wheel_name = "apex";
  m.wheel_version = version;
  m.wheel_file = wheel_name;
  m.tree_source = o.tree ? "--tree" : "gen";
  m.upstream_url = upstream_url;
  m.upstream_commit = upstream_commit;
  {
    std::error_code ec;
    const fs::path patch = bundled_patch_file();
    if (fs::is_regular_file(patch, ec)) m.patch_sha256 = sha256_hex(read_file(patch));
    const fs::path overlay = bundled_overlay_dir();
    if (fs::is_directory(overlay, ec)) m.overlay_digest = manifest::directory_digest(overlay.string());
  }
  m.python_version = py.version;
  m.python_implementation = py.implementation;
  m.python_tag = tag.python;
  m.abi_tag = tag.abi;
  m.platform_tag = tag.platform;
  m.ext_suffix = py.ext_suffix;
  m.compiler_command = quote_command(compiler.command);
  m.compiler_version = compiler.version;
  m.compile_flags = built.compile_flags;
  m.link_flags = built.link_flags;
  m.runtime_version = config.runtime_version;
  m.optimizers = runtime_optimizers(runtime_dir);
  m.isa_levels = built.isa_levels;
  m.modules = module_paths;
  m.build_time = build_time;
  m.build_time_from_source_date_epoch = epoch.has_value();
  m.compat_matrix = matrix.raw;
  m.tested_with = matrix.tested_with;
  const std::string manifest_text = manifest::to_json(m).dump(2) + "\n";

  wheel::WheelIdentity id;
  id.version = version;
  id.tag = tag.str();
  id.platform = py.platform;
  id.apexnpu_version = APEXNPU_VERSION;
  for (const auto& mod : config.modules) {
    const std::string top = mod.name.substr(0, mod.name.find('.'));
    if (std::find(id.top_level.begin(), id.top_level.end(), top) == id.top_level.end())
      id.top_level.push_back(top);
  }
  if (std::find(id.top_level.begin(), id.top_level.end(), "apex") == id.top_level.end())
    id.top_level.insert(id.top_level.begin(), "apex");
  std::sort(id.top_level.begin(), id.top_level.end());
  const std::string dist_info =
      wheel::add_dist_info(files, id, templates, {{"apexnpu_manifest.json", manifest_text}});

  std::vector<std::string> items = {layout_name, manifest_name};
  wheel::write_layout(files, output.staged(layout_name));
  write_file_atomic(output.staged(manifest_name), manifest_text);
  verify_or_throw(output.staged(layout_name));
  if (o.wheel) {
    write_file_atomic(output.staged(wheel_name),
                      wheel::build_wheel_zip(files, dist_info, build_time));
    verify_or_throw(output.staged(wheel_name));
    items.push_back(wheel_name);
  }
  const auto final_paths = output.commit(items);

  nlohmann::json result = {
      {"python", {{"executable", python_exe.string()}, {"version", py.version},
                  {"implementation", py.implementation}, {"soabi", py.soabi},
                  {"ext_suffix", py.ext_suffix}, {"include_dir", python_include.string()},
                  {"platform", py.platform}}},
      {"tag", tag.str()},
      {"version", version},
      {"compiled", built.compiled},
      {"cached", built.total - built.compiled},
      {"total", built.total},
      {"linked", built.linked},
      {"cache_dir", native.cache_dir.string()},
      {"files", files.size()},
      {"layout", final_paths[0].string()},
      {"manifest", final_paths[1].string()},
      {"wheel", o.wheel ? nlohmann::json(final_paths[2].string()) : nlohmann::json(nullptr)},
      {"verified", true},
  };
  return result;
}

}  // namespace apexnpu::commands
