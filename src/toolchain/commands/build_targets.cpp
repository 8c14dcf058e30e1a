#include "commands/build_targets.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"
#include "python/multiarch.h"

namespace apexnpu::commands {
namespace stdfs = std::filesystem;

namespace {

constexpr int kFirstMinor = 7, kLastMinor = 13;

TargetPython host_python(const stdfs::path& executable) {
  TargetPython py;
  py.executable = executable;
  py.info = python::probe_python(executable);
  python::check_supported(py.info);
  py.include_dir = python::find_python_headers(py.info);
  py.tag = python::wheel_tag(py.info);
  return py;
}

// Every supported CPython on PATH or under pyenv; those without headers are skipped, said.
std::vector<TargetPython> all_host_pythons(const DetailFn& warn) {
  std::vector<TargetPython> found;
  const auto env = python::SearchEnv::from_environment();
  for (int minor = kFirstMinor; minor <= kLastMinor; ++minor) {
    const auto executable = python::locate_python(fmt::format("3.{}", minor), env);
    if (!executable) continue;  // not installed
    try {
      found.push_back(host_python(*executable));
    } catch (const Error& e) {  // installed but unusable: a warning, and the others are built
      if (warn) warn(fmt::format("--python=all: 3.{} left out: {}", minor, e.what()));
    }
  }
  if (found.empty())
    throw Error("--python=all found no CPython 3.7-3.13 with headers on PATH or under pyenv",
                "install one (apt install python3.11-dev), or pass --python=/path/to/python");
  return found;
}

std::vector<TargetPython> host_pythons(const std::string& request, const DetailFn& warn) {
  if (request == "all") return all_host_pythons(warn);
  std::vector<TargetPython> pythons;
  const auto env = python::SearchEnv::from_environment();
  for (const auto& item : request.empty() ? std::vector<std::string>{""} : split_list(request, "--python"))
    pythons.push_back(host_python(python::find_python(item, env)));
  return pythons;
}

std::vector<TargetPython> foreign_pythons(const std::string& request, const std::string& architecture) {
  const stdfs::path root = python::multiarch_include_root();
  if (request.empty())
    throw UsageError(fmt::format("--target {} needs --python=3.N[,3.M...] or --python=all", architecture),
                     "the host's python3 cannot tell which CPython of another architecture to "
                     "build for");
  std::vector<int> minors;
  if (request == "all") {
    minors = python::multiarch_minors(architecture, root);
    if (minors.empty())
      throw Error(
          fmt::format("--python=all found no CPython headers for {} under {}", architecture, root.string()),
          fmt::format("install them from Debian's multiarch packages, e.g. dpkg "
                      "--add-architecture {0} && apt-get update && apt-get install "
                      "libpython3.11-dev:{0}",
                      python::debian_architecture(architecture)));
  }
  for (const auto& item : request == "all" ? std::vector<std::string>{} : split_list(request, "--python")) {
    int minor = 0;
    if (std::sscanf(item.c_str(), "3.%d", &minor) != 1 || item != fmt::format("3.{}", minor))
      throw UsageError(fmt::format("--python={} with --target {}: give versions (3.N)", item, architecture),
                       "another architecture's CPython is found by its headers, not run");
    minors.push_back(minor);
  }
  std::vector<TargetPython> pythons;
  for (int minor : minors) {
    TargetPython py;
    py.info = python::multiarch_python(minor, architecture, root);
    python::check_supported(py.info);
    py.include_dir = py.info.include_dir;
    py.include_flags = python::multiarch_include_flags(root);
    py.tag = python::wheel_tag(py.info);
    pythons.push_back(std::move(py));
  }
  return pythons;
}

// Two Pythons with one wheel tag would write one wheel twice.
void refuse_duplicate_tags(const std::vector<TargetPython>& pythons) {
  for (std::size_t i = 0; i < pythons.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (pythons[i].tag.str() == pythons[j].tag.str())
        throw UsageError(
            fmt::format("--python names two interpreters with the tag {}: {} and {}", pythons[i].tag.str(),
                        pythons[j].executable.string(), pythons[i].executable.string()),
            "name each Python once");
}

}  // namespace

std::vector<std::string> split_list(std::string_view value, const char* option) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    std::string item(value.substr(start, comma - start));
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty())
      throw UsageError(fmt::format("{}={}: an empty item", option, value),
                       fmt::format("separate values with commas, e.g. {}=3.8,3.11", option));
    items.push_back(std::move(item));
    start = comma + 1;
  }
  return items;
}

std::vector<BuildTarget> resolve_targets(const std::string& targets, const std::string& pythons,
                                         const stdfs::path& runtime_dir, const DetailFn& warn,
                                         const DetailFn& detail) {
  const std::string host = compile::host_architecture();
  std::vector<std::string> architectures;
  for (const auto& item :
       targets.empty() ? std::vector<std::string>{host} : split_list(targets, "--target")) {
    const std::string arch = compile::normalize_architecture(item);
    if (std::find(architectures.begin(), architectures.end(), arch) == architectures.end())
      architectures.push_back(arch);
  }
  std::vector<BuildTarget> out;
  for (const auto& arch : architectures) {
    BuildTarget t;
    t.architecture = arch;
    t.cross = arch != host;
    t.config = compile::load_runtime_build_config(runtime_dir, arch);  // Error: unknown arch
    t.pythons = t.cross ? foreign_pythons(pythons, arch) : host_pythons(pythons, warn);
    refuse_duplicate_tags(t.pythons);
    t.compiler = compile::compiler_for(arch, host);
    if (detail)
      for (const auto& py : t.pythons)
        detail(fmt::format("python for {}: {} ({} {}, tag {})", arch,
                           py.executable.empty() ? py.include_dir.string() : py.executable.string(),
                           py.info.implementation, py.info.version, py.tag.str()));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace apexnpu::commands
