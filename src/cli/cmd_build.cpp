// apexnpu build: compile the runtime + binding for each target and Python, lay out (and zip)
// the wheels.
#include <memory>

#include "cli/commands.h"
#include "cli/non_empty.h"
#include "cli/upstream_options.h"
#include "commands/build.h"
#include "core/error.h"

namespace apexnpu::cli {

namespace {

// --cache-dir named the object cache on build and the clone cache on gen and make-patch; build
// now has both caches, so the old spelling is refused rather than guessed.
constexpr const char* kCacheDirRefused =
    "--cache-dir is ambiguous on build: it named the object cache here but names the clone "
    "cache on gen and make-patch";
constexpr const char* kCacheDirHint =
    "pass --object-cache DIR for the compiled objects (what build's --cache-dir was), or "
    "--clone-cache DIR for the clone of upstream that gen reads without --tree";

void print_build_result(Console& console, const commands::BuildResult& result) {
  console.info("built apex {}: {} wheel{} ({} of {} files compiled, {} from the cache)", result.version,
               result.wheels.size(), result.wheels.size() == 1 ? "" : "s", result.compiled, result.total,
               result.cached);
  for (const auto& w : result.wheels) {
    console.info("  {} (Python {}, {})", w.tag, w.python.version, w.architecture);
    console.info("    layout:   {}", w.layout.string());
    if (w.wheel) console.info("    wheel:    {}", w.wheel->string());
    console.info("    manifest: {}", w.manifest.string());
  }
  if (const auto& emulator = result.emulator) {
    console.info("built the torch_npu emulator ({})", emulator->name);
    console.info("  layout:   {}", emulator->layout.string());
    if (emulator->wheel) console.info("  wheel:    {}", emulator->wheel->string());
  }
}

// What the command line gives build, kept alive by the callbacks.
struct BuildArgs {
  commands::BuildOptions options;
  std::string tree;
  std::string object_cache;
  bool no_emulator = false;
  std::string refused_cache_dir;
  CLI::Option* cache_dir = nullptr;  // the refused --cache-dir
};

nlohmann::json run_build_command(Console& console, BuildArgs& args) {
  if (args.cache_dir->count() > 0) throw UsageError(kCacheDirRefused, kCacheDirHint);
  commands::BuildOptions& opts = args.options;
  if (!args.tree.empty()) opts.tree = args.tree;
  opts.emulator = !args.no_emulator;
  finish_upstream_request(opts.upstream, console);
  if (!args.object_cache.empty()) opts.object_cache = args.object_cache;
  opts.source_date_epoch = commands::epoch_from_env();
  commands::BuildCallbacks cb;
  cb.progress = [&console](std::size_t done, std::size_t total) {
    console.progress("compiling", done, total);
  };
  cb.warn = [&console](const std::string& s) { console.warn("{}", s); };
  cb.detail = console.detail_sink();
  const auto result = commands::run_build(opts, cb);
  console.end_progress();
  print_build_result(console, result);
  return result.to_json();
}

}  // namespace

void add_build_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto args = std::make_shared<BuildArgs>();
  commands::BuildOptions& opts = args->options;
  auto* cmd = app.add_subcommand(
      "build", "Compile the runtime and binding for each target and Python and lay out the wheels");
  cmd->add_option("--python", opts.python,
                  "Target interpreters, comma-separated: 3.N (python3.N on PATH, then pyenv) or a "
                  "path; `all` for every CPython 3.7-3.13 found; default python3")
      ->check(non_empty())
      ->type_name("LIST");
  cmd->add_option("--target", opts.target,
                  "Target architectures, comma-separated: x86_64, aarch64 (default: this "
                  "machine's); another architecture is cross-compiled (g++-<arch>-linux-gnu) for "
                  "the CPythons whose headers Debian's multiarch packages installed")
      ->check(non_empty())
      ->type_name("LIST");
  cmd->add_option("--tree", args->tree, "An Apex tree written by `apexnpu gen` (default: run gen first)")
      ->check(non_empty());
  cmd->add_flag("--allow-foreign-tree", opts.allow_foreign_tree,
                "Build a --tree that `apexnpu gen` did not make (its manifest then records no "
                "upstream, patch or overlay)");
  add_upstream_options(*cmd, opts.upstream, UpstreamUse::build_gen_step);
  cmd->add_option("-o,--output", opts.output, "Output directory (default: dist)")->check(non_empty());
  cmd->add_flag("--wheel", opts.wheel, "Also write the .whl files");
  cmd->add_flag("--no-emulator", args->no_emulator,
                "Leave out the torch_npu emulator's wheel (for machines with Huawei's torch_npu)");
  cmd->add_option("--version-label", opts.version_label,
                  "Local version label: the wheel is 0.1+LABEL (default: ascend)")
      ->check(non_empty());
  cmd->add_option("-j,--jobs", opts.jobs, "Parallel compilations (default: number of cores)");
  cmd->add_flag("--native", opts.native, "Compile with -march=native (not portable)");
  cmd->add_flag("--debug", opts.debug, "Keep symbols and debug info (-g, not stripped)");
  cmd->add_option("--object-cache", args->object_cache,
                  "Compiled objects and linked modules, shared by builds (default: "
                  "$XDG_CACHE_HOME/apexnpu/objects)")
      ->check(non_empty())
      ->type_name("DIR");
  args->cache_dir = cmd->add_option("--cache-dir", args->refused_cache_dir,
                                    "Refused as ambiguous: name the cache, --object-cache or "
                                    "--clone-cache")
                        ->type_name("DIR");
  cmd->callback([&selected, &console, args] {
    selected.name = "build";
    selected.run = [&console, args] { return run_build_command(console, *args); };
  });
}

}  // namespace apexnpu::cli
