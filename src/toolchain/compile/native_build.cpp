#include "compile/native_build.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>

#include "fs/file_io.h"
#include "core/job_pool.h"
#include "compile/object_cache.h"
#include "core/sha256.h"
#include "core/subprocess.h"
#include "compile/unity_batches.h"
#include "core/error.h"

namespace apexnpu::compile {
namespace fs = std::filesystem;

namespace {

// One compilation: a source, or a unity batch of sources (compile/unity_batches.h).
struct Unit {
  std::vector<std::string> sources;  // relative to the runtime dir
  std::string name;                  // the source, or "<group> batch k/n" for a batch
  std::vector<std::string> flags;    // beyond the common ones
  std::string key_extra;           // extra cache-key material
  std::string object_key;          // filled in by the build
  fs::path object;                 // filled in by the build
  bool compiled = false;
};

std::string join0(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) {
    s += a;
    s.push_back('\0');
  }
  return s;
}

std::string module_relative_path(const std::string& module, const std::string& ext_suffix) {
  std::string path = module;
  std::replace(path.begin(), path.end(), '.', '/');
  return path + ext_suffix;
}

}  // namespace

std::vector<std::string> base_compile_flags(const RuntimeBuildConfig& config, bool native,
                                            bool debug) {
  std::vector<std::string> f = {"-std=" + config.std, "-O3", "-fPIC", "-fvisibility=hidden",
                                "-fstack-protector-strong", "-D_FORTIFY_SOURCE=2"};
  if (native) f.push_back("-march=native");
  if (debug) f.push_back("-g");
  else f.push_back("-DNDEBUG");
  f.push_back(fmt::format("-DAPEXNPU_RUNTIME_VERSION=\"{}\"", config.runtime_version));
  f.insert(f.end(), config.compile_flags.begin(), config.compile_flags.end());
  return f;
}

std::vector<std::string> base_link_flags(bool native, bool debug) {
  std::vector<std::string> f = {"-shared", "-Wl,-z,relro,-z,now", "-Wl,-z,noexecstack",
                                "-pthread"};
  if (native) f.push_back("-march=native");
  f.push_back(debug ? "-g" : "-s");
  return f;
}

NativeBuildResult build_native(const NativeBuildOptions& options, const RuntimeBuildConfig& config,
                               const Compiler& compiler, const TargetPython& python,
                               const ProgressFn& progress) {
  const fs::path runtime_dir = fs::absolute(options.runtime_dir).lexically_normal();
  ObjectCache cache(options.cache_dir);
  NativeBuildResult result;
  result.compile_flags = base_compile_flags(config, options.native, options.debug);
  result.link_flags = base_link_flags(options.native, options.debug);
  for (const auto& l : config.isa_levels) result.isa_levels.push_back(l.name);

  std::vector<std::string> common = result.compile_flags;
  // Debug info and __FILE__ name sources relative to the runtime, wherever it is installed.
  common.push_back(fmt::format("-ffile-prefix-map={}=.", runtime_dir.string()));
  for (const auto& inc : config.include_dirs)
    common.push_back("-I" + (runtime_dir / inc).lexically_normal().string());

  const RuntimeSources sources = list_runtime_sources(runtime_dir, config);
  const auto source_weight = [&](const std::string& rel) -> std::uintmax_t {
    std::error_code ec;
    const auto size = fs::file_size(runtime_dir / rel, ec);
    return ec ? 0 : size;
  };
  std::vector<Unit> units;
  // Adds the sources as units, in `batches` unity batches (0: one unit per source).
  const auto add_units = [&](const std::vector<std::string>& group, std::size_t batches,
                             const std::string& label, const std::vector<std::string>& flags,
                             const std::string& key_extra) {
    const auto split = split_into_batches(group, batches, source_weight);
    for (std::size_t b = 0; b < split.size(); ++b) {
      std::string name = split[b].size() == 1
                             ? split[b][0]
                             : fmt::format("{} batch {}/{}", label, b + 1, split.size());
      units.push_back({split[b], std::move(name), flags, key_extra, {}, {}, false});
    }
  };
  add_units(sources.core, config.unity.core, "core", {}, {});
  for (const auto& level : config.isa_levels) {
    std::vector<std::string> flags = level.flags;
    flags.push_back(fmt::format("-DAPEXNPU_ISA_LEVEL={}", level.level));
    add_units(sources.kernels, config.unity.kernels, level.name + " kernels", flags, {});
  }
  const std::size_t runtime_units = units.size();
  // Binding sources: the only ones that see Python.h, so only they are keyed on the Python.
  std::vector<std::vector<std::size_t>> module_units(config.modules.size());
  for (std::size_t m = 0; m < config.modules.size(); ++m) {
    const std::size_t first = units.size();
    add_units(config.modules[m].sources, config.unity.binding, config.modules[m].name,
              {"-I" + python.include_dir.string()},
              "python " + python.version + " " + python.include_dir.string());
    for (std::size_t i = first; i < units.size(); ++i) module_units[m].push_back(i);
  }
  result.total = units.size();

  std::atomic<std::size_t> compiled{0};
  auto compile_one = [&](std::size_t i) {
    Unit& u = units[i];
    for (const auto& rel : u.sources) {
      const fs::path source = runtime_dir / rel;
      if (!fs::is_regular_file(source))
        throw Error(fmt::format("runtime source {} is missing (named in {})", source.string(),
                                (runtime_dir / "build.json").string()));
    }
    const bool batch = u.sources.size() > 1;
    // The bytes compiled: the source, or the batch's generated file.
    const std::string text =
        batch ? unity_source_text(u.sources) : read_file(runtime_dir / u.sources[0]);
    std::vector<std::string> argv = compiler.command;
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(argv.end(), u.flags.begin(), u.flags.end());
    argv.push_back("-c");
    // A batch is keyed on its name, not on where its generated file is written this time.
    std::vector<std::string> key_argv = argv;
    key_argv.push_back(batch ? "unity:" + u.name : (runtime_dir / u.sources[0]).string());
    const std::string source_key = sha256_hex(
        join0({"apexnpu-object-v1", compiler.version, join0(key_argv), u.key_extra, text}));
    if (auto hit = cache.lookup_object(source_key)) {
      u.object = *hit;
      u.object_key = ObjectCache::key_of(*hit);
      return;
    }
    const ObjectCache::KeyLock lock(cache, source_key);
    if (auto hit = cache.lookup_object(source_key)) {  // another build compiled it meanwhile
      u.object = *hit;
      u.object_key = ObjectCache::key_of(*hit);
      return;
    }
    TempDir batch_dir;
    fs::path compiled_file = runtime_dir / u.sources[0];
    if (batch) {
      batch_dir = TempDir(cache.scratch_path(".unity"));
      fs::create_directories(batch_dir.path());
      compiled_file = batch_dir.path() / "unity.cpp";
      write_file_atomic(compiled_file, text);
      // Debug info names the generated file "unity/unity.cpp", wherever the cache is.
      argv.insert(argv.end() - 1,
                  fmt::format("-ffile-prefix-map={}=unity", batch_dir.path().string()));
    }
    argv.push_back(compiled_file.string());
    const fs::path object = cache.scratch_path(".o");
    const fs::path depfile = cache.scratch_path(".d");
    argv.insert(argv.end(), {"-MMD", "-MF", depfile.string(), "-o", object.string()});
    // Run in the runtime folder: with --debug, DW_AT_comp_dir is then mapped away by
    // -ffile-prefix-map like the sources, so objects do not depend on where apexnpu ran.
    const ProcessResult r = run_process(argv, runtime_dir.string());
    std::error_code ec;
    if (!r.started || r.exit_code != 0) {
      fs::remove(object, ec);
      fs::remove(depfile, ec);
      const std::string what =
          batch ? fmt::format("{} ({})", u.name, fmt::join(u.sources, ", ")) : u.name;
      batch_dir.release();  // kept, so the command shown reproduces the failure
      throw Error(fmt::format("compiling {} failed:\n{}\n  command: {}", what,
                              r.started ? r.err : "cannot run the compiler: " + r.spawn_error,
                              quote_command(argv)));
    }
    const std::string deps = read_file(depfile);
    fs::remove(depfile, ec);
    // The generated file is in the key already, and is gone after this build.
    auto [key, stored] =
        cache.store_object(source_key, object, deps, batch ? compiled_file.string() : "");
    u.object_key = key;
    u.object = stored;
    u.compiled = true;
    ++compiled;
  };
  // Longest first, so the last job to finish is a short one and the cores stay busy until the
  // end. Measured on the runtime, a unit costs about a fixed 8 KiB's worth (the compiler
  // starting and parsing the standard headers) plus its source bytes, whatever the ISA flags.
  std::vector<std::size_t> order(units.size());
  std::vector<std::uintmax_t> cost(units.size(), 8192);
  for (std::size_t i = 0; i < units.size(); ++i) {
    order[i] = i;
    for (const auto& rel : units[i].sources) cost[i] += source_weight(rel);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  const PoolOutcome outcome =
      run_pool(units.size(), options.jobs, compile_one, progress, order);
  if (!outcome.failures.empty()) {
    std::string message;
    for (const auto& [i, what] : outcome.failures) message += (message.empty() ? "" : "\n") + what;
    throw Error(message, "fix the source, or the compiler set in CXX; the command above "
                         "reproduces the failure (a unity batch #includes its sources in the order "
                         "listed: names in anonymous namespaces must be unique within a batch)");
  }
  result.compiled = compiled;

  for (std::size_t m = 0; m < config.modules.size(); ++m) {
    const BindingModule& mod = config.modules[m];
    std::vector<std::size_t> link_units = module_units[m];
    if (mod.links_runtime)
      for (std::size_t i = 0; i < runtime_units; ++i) link_units.push_back(i);
    std::vector<std::string> argv = compiler.command;
    argv.insert(argv.end(), result.link_flags.begin(), result.link_flags.end());
    std::string key_material = join0({"apexnpu-module-v1", compiler.version, join0(argv)});
    for (std::size_t i : link_units) key_material += units[i].object_key + '\0';
    const std::string link_key = sha256_hex(key_material);

    BuiltModule built;
    built.name = mod.name;
    built.relative_path = module_relative_path(mod.name, python.ext_suffix);
    built.file = options.output_dir / built.relative_path;
    std::optional<fs::path> cached = cache.lookup_module(link_key);
    if (!cached) {
      const fs::path out = cache.scratch_path(".so");
      argv.push_back("-o");
      argv.push_back(out.string());
      for (std::size_t i : link_units) argv.push_back(units[i].object.string());
      const ProcessResult r = run_process(argv);
      if (!r.started || r.exit_code != 0) {
        std::error_code ec;
        fs::remove(out, ec);
        throw Error(fmt::format("linking {} failed:\n{}\n  command: {}", mod.name,
                                r.started ? r.err : "cannot run the compiler: " + r.spawn_error,
                                quote_command(argv)),
                    "a symbol is probably missing from the runtime sources");
      }
      cached = cache.store_module(link_key, out);
      built.linked = true;
      ++result.linked;
    }
    std::error_code ec;
    fs::create_directories(built.file.parent_path(), ec);
    fs::copy_file(*cached, built.file, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error(fmt::format("cannot write {}: {}", built.file.string(), ec.message()));
    fs::permissions(built.file, fs::perms(0755), ec);
    result.modules.push_back(std::move(built));
  }
  return result;
}

}  // namespace apexnpu::compile
