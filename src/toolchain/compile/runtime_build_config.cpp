#include "compile/runtime_build_config.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::compile {
namespace stdfs = std::filesystem;

namespace {

// build.json's "isa_levels": {"<architecture>": [levels...], ...}; the levels of one.
std::vector<IsaLevel> isa_levels_for(const nlohmann::json& by_arch, const std::string& arch,
                                     const std::string& source) {
  if (!by_arch.is_object())
    throw Error(fmt::format("{}: isa_levels must map each architecture to its levels", source),
                R"(e.g. "isa_levels": {"x86_64": [{"name": "scalar", "level": 0}, ...]})");
  const auto levels = by_arch.find(arch);
  if (levels == by_arch.end() || !levels->is_array()) {
    std::vector<std::string> known;
    for (const auto& [key, value] : by_arch.items())
      if (value.is_array()) known.push_back(key);
    throw Error(fmt::format("{}: isa_levels has no levels for architecture '{}' (it has: {})", source, arch,
                            fmt::join(known, ", ")),
                "add the architecture's list to build.json and its levels to the runtime's "
                "exec/isa_levels.h");
  }
  std::vector<IsaLevel> result;
  for (const auto& l : *levels)
    result.push_back({l.at("name").get<std::string>(), l.at("level").get<int>(),
                      l.value("flags", std::vector<std::string>{})});
  if (result.empty()) throw Error(fmt::format("{}: isa_levels.{} is empty", source, arch));
  return result;
}

}  // namespace

std::string normalize_architecture(std::string_view name) {
  if (name == "amd64") return "x86_64";
  if (name == "arm64") return "aarch64";
  return std::string(name);
}

std::string host_architecture() {
  utsname u{};
  if (uname(&u) != 0) throw Error("cannot tell this machine's architecture: uname failed");
  return normalize_architecture(u.machine);
}

RuntimeBuildConfig parse_runtime_build_config(const std::string& text, const std::string& source,
                                              const std::string& architecture) {
  RuntimeBuildConfig c;
  c.architecture = normalize_architecture(architecture);
  try {
    const auto j = nlohmann::json::parse(text);
    c.runtime_version = j.at("runtime_version").get<std::string>();
    c.std = j.value("std", c.std);
    c.compile_flags = j.value("compile_flags", std::vector<std::string>{});
    c.include_dirs = j.value("include_dirs", std::vector<std::string>{"."});
    c.kernel_suffix = j.value("kernel_suffix", c.kernel_suffix);
    c.excluded_dirs = j.value("excluded_dirs", std::vector<std::string>{});
    c.isa_levels = isa_levels_for(j.at("isa_levels"), c.architecture, source);
    c.module_link_flags = j.at("binding").value("link_flags", std::vector<std::string>{});
    c.stable_abi = j.at("binding").value("stable_abi", std::string());
    for (const auto& m : j.at("binding").at("modules")) {
      c.modules.push_back({m.at("name").get<std::string>(), m.at("sources").get<std::vector<std::string>>(),
                           m.value("links_runtime", true)});
    }
    if (const auto u = j.find("unity"); u != j.end()) {
      const auto count = [&](const char* key) -> std::size_t {
        const auto v = u->find(key);
        if (v == u->end()) return 0;
        if (!v->is_number_unsigned() || v->get<std::uint64_t>() > 4096)
          throw Error(fmt::format("{}: unity.{} must be a whole number from 0 to 4096, not {}", source, key,
                                  v->dump()));
        return v->get<std::size_t>();
      };
      c.unity.core = count("core_batches");
      c.unity.kernels = count("kernel_batches");
      c.unity.binding = count("binding_batches");
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: {}", source, e.what()),
                "build.json must have runtime_version, isa_levels and binding.modules");
  }
  return c;
}

RuntimeBuildConfig load_runtime_build_config(const stdfs::path& runtime_dir,
                                             const std::string& architecture) {
  const stdfs::path file = runtime_dir / "build.json";
  return parse_runtime_build_config(read_file(file), file.string(), architecture);
}

RuntimeSources list_runtime_sources(const stdfs::path& runtime_dir, const RuntimeBuildConfig& config) {
  RuntimeSources s;
  std::error_code ec;
  for (stdfs::recursive_directory_iterator it(runtime_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(runtime_dir).generic_string();
    if (it->is_directory()) {
      if (std::find(config.excluded_dirs.begin(), config.excluded_dirs.end(), rel) !=
          config.excluded_dirs.end())
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->path().extension() != ".cpp") continue;
    const bool kernel = rel.size() > config.kernel_suffix.size() && rel.ends_with(config.kernel_suffix);
    (kernel ? s.kernels : s.core).push_back(rel);
  }
  if (ec) throw Error(fmt::format("cannot list {}: {}", runtime_dir.string(), ec.message()));
  std::sort(s.core.begin(), s.core.end());
  std::sort(s.kernels.begin(), s.kernels.end());
  return s;
}

}  // namespace apexnpu::compile
