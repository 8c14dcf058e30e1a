#include "compile/link_module.h"

#include <fmt/core.h>

#include <algorithm>

#include "compile/cache_keys.h"
#include "core/error.h"
#include "core/subprocess.h"

namespace apexnpu::compile {
namespace stdfs = std::filesystem;

namespace {

// Runs the link of a module the cache lacks and stores the result; returns its cached path.
stdfs::path link_and_store(const ModuleLinker& linker, const BindingModule& module,
                           std::vector<std::string> argv, const std::vector<CompiledUnit>& objects,
                           const std::string& link_key) {
  const stdfs::path out = linker.cache.scratch_path(".so");
  argv.push_back("-o");
  argv.push_back(out.string());
  for (const auto& o : objects) argv.push_back(o.object.string());
  const ProcessResult r = run_process(argv);
  if (!r.started || r.exit_code != 0) {
    std::error_code ec;
    stdfs::remove(out, ec);
    throw Error(fmt::format("linking {} failed:\n{}\n  command: {}", module.name, failure_output(r),
                            quote_command(argv)),
                "a symbol is probably missing from the runtime sources");
  }
  return linker.cache.store_module(link_key, out);
}

void install_module(const stdfs::path& cached, const stdfs::path& file) {
  std::error_code ec;
  stdfs::create_directories(file.parent_path(), ec);
  stdfs::copy_file(cached, file, stdfs::copy_options::overwrite_existing, ec);
  if (ec) throw Error(fmt::format("cannot write {}: {}", file.string(), ec.message()));
  stdfs::permissions(file, stdfs::perms(0755), ec);
}

}  // namespace

std::string module_relative_path(const std::string& module, const std::string& ext_suffix) {
  std::string path = module;
  std::replace(path.begin(), path.end(), '.', '/');
  return path + ext_suffix;
}

BuiltModule link_module(const ModuleLinker& linker, const BindingModule& module,
                        const std::vector<CompiledUnit>& objects) {
  std::vector<std::string> argv = linker.compiler.command;
  argv.insert(argv.end(), linker.link_flags.begin(), linker.link_flags.end());
  std::vector<std::string> object_keys;
  for (const auto& o : objects) object_keys.push_back(o.object_key);
  const std::string link_key = module_link_key(linker.compiler, argv, object_keys);

  BuiltModule built;
  built.name = module.name;
  built.relative_path = module_relative_path(module.name, linker.ext_suffix);
  built.file = linker.output_dir / built.relative_path;
  std::optional<stdfs::path> cached = linker.cache.lookup_module(link_key);
  if (!cached) {
    cached = link_and_store(linker, module, std::move(argv), objects, link_key);
    built.linked = true;
  }
  install_module(*cached, built.file);
  return built;
}

}  // namespace apexnpu::compile
