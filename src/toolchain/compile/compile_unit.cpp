#include "compile/compile_unit.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <optional>

#include "compile/cache_keys.h"
#include "compile/unity_batches.h"
#include "core/error.h"
#include "core/subprocess.h"
#include "fs/file_io.h"

namespace apexnpu::compile {
namespace stdfs = std::filesystem;

namespace {

bool is_batch(const Unit& u) { return u.sources.size() > 1; }

void check_sources_exist(const stdfs::path& runtime_dir, const Unit& u) {
  for (const auto& rel : u.sources) {
    const stdfs::path source = runtime_dir / rel;
    if (!stdfs::is_regular_file(source))
      throw Error(fmt::format("runtime source {} is missing (named in {})", source.string(),
                              (runtime_dir / "build.json").string()));
  }
}

std::optional<CompiledUnit> cached_object(ObjectCache& cache, const std::string& source_key) {
  auto hit = cache.lookup_object(source_key);
  if (!hit) return std::nullopt;
  return CompiledUnit{ObjectCache::key_of(*hit), *hit, false};
}

// Writes a batch's generated file into `batch_dir` (a fresh folder in the cache) and has `argv`
// (ending in "-c") name it "unity/unity.cpp" in debug info, wherever the cache is.
stdfs::path write_batch_file(const UnitCompiler& setup, const std::string& text, TempDir& batch_dir,
                             std::vector<std::string>& argv) {
  batch_dir = TempDir(setup.cache.scratch_path(".unity"));
  stdfs::create_directories(batch_dir.path());
  const stdfs::path file = batch_dir.path() / "unity.cpp";
  write_file_atomic(file, text);
  argv.insert(argv.end() - 1, fmt::format("-ffile-prefix-map={}=unity", batch_dir.path().string()));
  return file;
}

// Runs the compiler. On failure removes its outputs, keeps the batch's generated file so that
// the command shown reproduces the failure, and throws.
void run_compiler(const UnitCompiler& setup, const Unit& u, const std::vector<std::string>& argv,
                  const std::vector<stdfs::path>& outputs, TempDir& batch_dir) {
  // Run in the runtime folder: with --debug, DW_AT_comp_dir is then mapped away by
  // -ffile-prefix-map like the sources, so objects do not depend on where apexnpu ran.
  const ProcessResult r = run_process(argv, setup.runtime_dir.string());
  if (r.started && r.exit_code == 0) return;
  std::error_code ec;
  for (const auto& out : outputs) stdfs::remove(out, ec);
  const std::string what = is_batch(u) ? fmt::format("{} ({})", u.name, fmt::join(u.sources, ", ")) : u.name;
  batch_dir.release();
  throw Error(
      fmt::format("compiling {} failed:\n{}\n  command: {}", what, failure_output(r), quote_command(argv)));
}

// A cache miss: compiles `text` with `argv` (up to "-c") and stores the object under source_key.
CompiledUnit compile_and_store(const UnitCompiler& setup, const Unit& u, std::vector<std::string> argv,
                               const std::string& text, const std::string& source_key) {
  TempDir batch_dir;
  const stdfs::path compiled_file =
      is_batch(u) ? write_batch_file(setup, text, batch_dir, argv) : setup.runtime_dir / u.sources[0];
  const stdfs::path object = setup.cache.scratch_path(".o");
  const stdfs::path depfile = setup.cache.scratch_path(".d");
  argv.insert(argv.end(), {compiled_file.string(), "-MMD", "-MF", depfile.string(), "-o", object.string()});
  run_compiler(setup, u, argv, {object, depfile}, batch_dir);
  const std::string deps = read_file(depfile);
  std::error_code ec;
  stdfs::remove(depfile, ec);
  // The generated file is in the key already, and is gone after this build.
  auto [key, stored] =
      setup.cache.store_object(source_key, object, deps, is_batch(u) ? compiled_file.string() : "");
  return {std::move(key), std::move(stored), true};
}

}  // namespace

std::vector<std::string> common_compile_flags(const std::vector<std::string>& base_flags,
                                              const stdfs::path& runtime_dir,
                                              const RuntimeBuildConfig& config) {
  std::vector<std::string> common = base_flags;
  // Debug info and __FILE__ name sources relative to the runtime, wherever it is installed.
  common.push_back(fmt::format("-ffile-prefix-map={}=.", runtime_dir.string()));
  for (const auto& inc : config.include_dirs)
    common.push_back("-I" + (runtime_dir / inc).lexically_normal().string());
  return common;
}

CompiledUnit compile_unit(const UnitCompiler& setup, const Unit& u) {
  check_sources_exist(setup.runtime_dir, u);
  // The bytes compiled: the source, or the batch's generated file.
  const std::string text =
      is_batch(u) ? unity_source_text(u.sources) : read_file(setup.runtime_dir / u.sources[0]);
  std::vector<std::string> argv = setup.compiler.command;
  argv.insert(argv.end(), setup.common_flags.begin(), setup.common_flags.end());
  argv.insert(argv.end(), u.flags.begin(), u.flags.end());
  argv.push_back("-c");
  // A batch is keyed on its name, not on where its generated file is written this time.
  const std::string source_key = object_source_key(
      setup.compiler, argv, is_batch(u) ? "unity:" + u.name : (setup.runtime_dir / u.sources[0]).string(),
      u.key_extra, text);
  if (auto hit = cached_object(setup.cache, source_key)) return *hit;
  const ObjectCache::KeyLock lock(setup.cache, source_key);
  // Another build may have compiled it while this one waited for the lock.
  if (auto hit = cached_object(setup.cache, source_key)) return *hit;
  return compile_and_store(setup, u, std::move(argv), text, source_key);
}

}  // namespace apexnpu::compile
