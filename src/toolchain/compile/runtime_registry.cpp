#include "compile/runtime_registry.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "elf/elf_file.h"

namespace apexnpu::compile {
namespace {

constexpr int kSchema = 1;

std::vector<std::string> names(const nlohmann::json& entry, const char* key) {
  std::vector<std::string> out;
  for (const auto& name : entry.at(key)) out.push_back(name.get<std::string>());
  return out;
}

}  // namespace

std::vector<RuntimeOptimizer> parse_runtime_registry(std::string_view text, const std::string& source) {
  // The section ends with the string's NUL (and perhaps alignment padding).
  text = text.substr(0, text.find('\0'));
  try {
    const nlohmann::json doc = nlohmann::json::parse(text);
    if (doc.at("schema").get<int>() != kSchema)
      throw Error(fmt::format("{}: optimizer registry schema {}, this apexnpu reads {}", source,
                              doc.at("schema").dump(), kSchema),
                  "build with the apexnpu that ships this runtime");
    std::vector<RuntimeOptimizer> out;
    for (const auto& entry : doc.at("optimizers")) {
      out.push_back({entry.at("kind").get<std::string>(), entry.at("class").get<std::string>(),
                     names(entry, "options"), names(entry, "state")});
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: the optimizer registry in section {} is malformed: {}", source,
                            kRuntimeRegistrySection, e.what()),
                "this is a bug in the runtime's registry_description.cpp; please report it");
  }
}

std::optional<std::vector<RuntimeOptimizer>> read_runtime_registry(const std::filesystem::path& module) {
  const elf::ElfFile file = elf::read_elf_file(module);
  const auto section = file.find_section(kRuntimeRegistrySection);
  if (!section) return std::nullopt;
  return parse_runtime_registry(file.contents(*section),
                                fmt::format("{} (section {})", module.string(), section->name));
}

}  // namespace apexnpu::compile
