#include "compile/unit_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>

#include "compile/native_build.h"
#include "compile/unity_batches.h"

namespace apexnpu::compile {
namespace stdfs = std::filesystem;

std::uintmax_t source_weight(const stdfs::path& runtime_dir, const std::string& rel) {
  std::error_code ec;
  const auto size = stdfs::file_size(runtime_dir / rel, ec);
  return ec ? 0 : size;
}

namespace {

// Adds `group` to the plan as units, in `batches` unity batches (0: one unit per source).
void add_units(UnitPlan& plan, const stdfs::path& runtime_dir, const std::vector<std::string>& group,
               std::size_t batches, const std::string& label, const std::vector<std::string>& flags,
               const std::string& key_extra) {
  const auto split = split_into_batches(
      group, batches, [&](const std::string& rel) { return source_weight(runtime_dir, rel); });
  for (std::size_t b = 0; b < split.size(); ++b) {
    std::string name =
        split[b].size() == 1 ? split[b][0] : fmt::format("{} batch {}/{}", label, b + 1, split.size());
    plan.units.push_back({split[b], std::move(name), flags, key_extra});
  }
}

// The index of the oldest Python: "3.7.16" before "3.11.2".
std::size_t oldest(const std::vector<TargetPython>& pythons) {
  const auto key = [](const std::string& version) {
    std::vector<int> parts;
    for (std::size_t start = 0; start <= version.size();) {
      const std::size_t dot = std::min(version.find('.', start), version.size());
      parts.push_back(std::atoi(version.substr(start, dot - start).c_str()));
      start = dot + 1;
    }
    return parts;
  };
  std::size_t best = 0;
  for (std::size_t p = 1; p < pythons.size(); ++p)
    if (key(pythons[p].version) < key(pythons[best].version)) best = p;
  return best;
}

}  // namespace

UnitPlan plan_units(const stdfs::path& runtime_dir, const RuntimeBuildConfig& config,
                    const std::vector<TargetPython>& pythons) {
  const RuntimeSources sources = list_runtime_sources(runtime_dir, config);
  UnitPlan plan;
  add_units(plan, runtime_dir, sources.core, config.unity.core, "core", {}, {});
  for (const auto& level : config.isa_levels) {
    std::vector<std::string> flags = level.flags;
    flags.push_back(fmt::format("-DAPEXNPU_ISA_LEVEL={}", level.level));
    add_units(plan, runtime_dir, sources.kernels, config.unity.kernels, level.name + " kernels", flags, {});
  }
  plan.runtime_units = plan.units.size();
  // Binding sources: the only ones that see Python.h, so only they are keyed on the Python.
  // Written for the stable ABI, they are compiled once, with the oldest Python's headers.
  std::vector<std::size_t> compiled_for;
  if (config.stable_abi.empty()) {
    for (std::size_t p = 0; p < pythons.size(); ++p) compiled_for.push_back(p);
  } else if (!pythons.empty()) {
    compiled_for.push_back(oldest(pythons));
  }
  for (const std::size_t p : compiled_for) {
    const TargetPython& python = pythons[p];
    for (std::size_t m = 0; m < config.modules.size(); ++m) {
      const std::size_t first = plan.units.size();
      const std::string label = compiled_for.size() == 1
                                    ? config.modules[m].name
                                    : fmt::format("{} for Python {}", config.modules[m].name, python.version);
      std::vector<std::string> flags = {"-I" + python.include_dir.string()};
      flags.insert(flags.end(), python.include_flags.begin(), python.include_flags.end());
      if (!config.stable_abi.empty()) flags.push_back("-DPy_LIMITED_API=" + config.stable_abi);
      add_units(plan, runtime_dir, config.modules[m].sources, config.unity.binding, label, flags,
                "python " + python.version + " " + python.include_dir.string());
      ModuleUnits module{p, m, {}};
      for (std::size_t i = first; i < plan.units.size(); ++i) module.units.push_back(i);
      plan.modules.push_back(std::move(module));
    }
  }
  return plan;
}

std::vector<std::size_t> UnitPlan::link_units(const RuntimeBuildConfig& config,
                                              const ModuleUnits& module) const {
  std::vector<std::size_t> linked = module.units;
  if (config.modules[module.module].links_runtime)
    for (std::size_t i = 0; i < runtime_units; ++i) linked.push_back(i);
  return linked;
}

std::vector<std::size_t> longest_first(const stdfs::path& runtime_dir, const std::vector<Unit>& units) {
  // Measured on the runtime, a unit costs about a fixed 8 KiB's worth (the compiler starting
  // and parsing the standard headers) plus its source bytes, whatever the ISA flags.
  std::vector<std::size_t> order(units.size());
  std::vector<std::uintmax_t> cost(units.size(), 8192);
  for (std::size_t i = 0; i < units.size(); ++i) {
    order[i] = i;
    for (const auto& rel : units[i].sources) cost[i] += source_weight(runtime_dir, rel);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  return order;
}

}  // namespace apexnpu::compile
