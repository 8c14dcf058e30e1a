#include "compile/native_build.h"

#include <fmt/core.h>

#include <algorithm>

#include "compile/compile_unit.h"
#include "compile/link_module.h"
#include "compile/object_cache.h"
#include "compile/unit_plan.h"
#include "core/error.h"
#include "core/job_pool.h"

namespace apexnpu::compile {
namespace stdfs = std::filesystem;

namespace {

// Compiles every unit of the plan on `jobs` threads (0: the job pool's rule), longest first.
// Throws Error listing the failures in unit order when any unit fails: the first is the job
// pool's reported one, the lowest-numbered unit that failed.
std::vector<CompiledUnit> compile_units(const UnitCompiler& setup, const std::vector<Unit>& units, int jobs,
                                        const ProgressFn& progress) {
  std::vector<CompiledUnit> objects(units.size());
  const core::PoolOutcome outcome =
      core::run_pool(units.size(), core::thread_count(core::WorkKind::compile, jobs),
                     [&](std::size_t i, std::size_t) { objects[i] = compile_unit(setup, units[i]); },
                     {.order = longest_first(setup.runtime_dir, units), .on_done = progress});
  if (!outcome.failures.empty()) {
    std::string message;
    for (const auto& failure : outcome.failures) message += (message.empty() ? "" : "\n") + failure.what;
    throw Error(message,
                "fix the source, or the compiler set in CXX; the command above "
                "reproduces the failure (a unity batch #includes its sources in the order "
                "listed: names in anonymous namespaces must be unique within a batch)");
  }
  return objects;
}

// A stable-ABI module, linked once, serves every Python: each gets a copy named with its own
// EXT_SUFFIX, in its own folder.
void share_stable_abi_modules(const NativeBuildOptions& options, const std::vector<TargetPython>& pythons,
                              std::vector<BuiltModule>& modules) {
  const std::vector<BuiltModule> linked = modules;
  for (std::size_t p = 0; p < pythons.size(); ++p) {
    for (const BuiltModule& m : linked) {
      if (m.python == p) continue;
      BuiltModule copy = m;
      copy.python = p;
      copy.linked = false;
      copy.relative_path = module_relative_path(m.name, pythons[p].ext_suffix);
      copy.file = options.output_dir / std::to_string(p) / copy.relative_path;
      std::error_code ec;
      stdfs::create_directories(copy.file.parent_path(), ec);
      stdfs::copy_file(m.file, copy.file, stdfs::copy_options::overwrite_existing, ec);
      if (ec) throw Error(fmt::format("cannot write {}: {}", copy.file.string(), ec.message()));
      stdfs::permissions(copy.file, stdfs::perms(0755), ec);
      modules.push_back(std::move(copy));
    }
  }
}

}  // namespace

std::vector<std::string> base_compile_flags(const RuntimeBuildConfig& config, bool native, bool debug) {
  std::vector<std::string> f = {
      "-std=" + config.std, "-O3", "-fPIC", "-fvisibility=hidden", "-fstack-protector-strong",
      "-D_FORTIFY_SOURCE=2"};
  if (native) f.push_back("-march=native");
  if (debug)
    f.push_back("-g");
  else
    f.push_back("-DNDEBUG");
  f.push_back(fmt::format("-DAPEXNPU_RUNTIME_VERSION=\"{}\"", config.runtime_version));
  f.insert(f.end(), config.compile_flags.begin(), config.compile_flags.end());
  return f;
}

std::vector<std::string> base_link_flags(bool native, bool debug) {
  std::vector<std::string> f = {"-shared", "-Wl,-z,relro,-z,now", "-Wl,-z,noexecstack", "-pthread"};
  if (native) f.push_back("-march=native");
  f.push_back(debug ? "-g" : "-s");
  return f;
}

NativeBuildResult build_native(const NativeBuildOptions& options, const RuntimeBuildConfig& config,
                               const Compiler& compiler, const std::vector<TargetPython>& pythons,
                               const ProgressFn& progress) {
  const stdfs::path runtime_dir = stdfs::absolute(options.runtime_dir).lexically_normal();
  ObjectCache cache(options.cache_dir);
  NativeBuildResult result;
  result.compile_flags = base_compile_flags(config, options.native, options.debug);
  result.link_flags = base_link_flags(options.native, options.debug);
  result.link_flags.insert(result.link_flags.end(), config.module_link_flags.begin(),
                           config.module_link_flags.end());
  for (const auto& l : config.isa_levels) result.isa_levels.push_back(l.name);

  const UnitPlan plan = plan_units(runtime_dir, config, pythons);
  const UnitCompiler setup{runtime_dir, compiler,
                           common_compile_flags(result.compile_flags, runtime_dir, config), cache};
  const std::vector<CompiledUnit> objects = compile_units(setup, plan.units, options.jobs, progress);
  result.total = objects.size();
  result.compiled =
      std::count_if(objects.begin(), objects.end(), [](const CompiledUnit& o) { return o.compiled; });

  for (const ModuleUnits& module : plan.modules) {
    // Each Python's modules in a folder of their own: two Pythons may share an EXT_SUFFIX.
    const ModuleLinker linker{compiler, result.link_flags, cache,
                              options.output_dir / std::to_string(module.python),
                              pythons[module.python].ext_suffix};
    std::vector<CompiledUnit> linked;
    for (std::size_t i : plan.link_units(config, module)) linked.push_back(objects[i]);
    result.modules.push_back(link_module(linker, config.modules[module.module], linked));
    result.modules.back().python = module.python;
    result.linked += result.modules.back().linked ? 1 : 0;
  }
  if (!config.stable_abi.empty()) share_stable_abi_modules(options, pythons, result.modules);
  std::stable_sort(result.modules.begin(), result.modules.end(),
                   [](const BuiltModule& a, const BuiltModule& b) { return a.python < b.python; });
  return result;
}

}  // namespace apexnpu::compile
