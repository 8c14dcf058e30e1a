#include "manifest/wheel_manifest.h"

#include <fmt/core.h>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::manifest {
namespace stdfs = std::filesystem;

namespace {

constexpr const char* kHint =
    "give the <wheel>.manifest.json that `apexnpu build` writes beside the wheels in its output "
    "directory";

std::optional<std::string> nullable(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<std::string>();
}

nlohmann::json parse_json(const stdfs::path& file) {
  std::error_code ec;
  if (!stdfs::is_regular_file(file, ec))
    throw Error(fmt::format("{}: no such manifest file", file.string()), kHint);
  try {
    return nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not JSON: {}", file.string(), e.what()), kHint);
  }
}

WheelManifest from_json(const nlohmann::json& doc, const stdfs::path& file) {
  WheelManifest w;
  w.schema_version = doc.at("schema_version").get<int>();
  w.apexnpu_version = doc.at("apexnpu_version").get<std::string>();
  const auto& wheel = doc.at("wheel");
  w.wheel_name = wheel.at("name").get<std::string>();
  w.wheel_version = wheel.at("version").get<std::string>();
  w.wheel_file = wheel.at("file").get<std::string>();
  const auto& python = doc.at("python");
  w.python_version = python.at("version").get<std::string>();
  w.python_tag = python.at("python_tag").get<std::string>();
  w.abi_tag = python.at("abi_tag").get<std::string>();
  w.platform_tag = python.at("platform_tag").get<std::string>();
  w.architecture = doc.at("runtime").at("architecture").get<std::string>();
  const auto& source = doc.value("source", nlohmann::json::object());
  w.upstream_url = nullable(source, "upstream_url");
  w.upstream_commit = nullable(source, "upstream_commit");
  const auto& emulator = doc.value("emulator", nlohmann::json());
  if (emulator.is_object()) w.emulator_file = emulator.at("file").get<std::string>();
  w.tested_with = doc.value("tested_with", nlohmann::json::array());
  w.matrix = compat_matrix_from_json(doc.at("compatibility"), file.string() + ": compatibility");
  return w;
}

}  // namespace

std::string python_line(const std::string& python_version) {
  const auto first = python_version.find('.');
  const auto second = python_version.find('.', first == std::string::npos ? first : first + 1);
  return python_version.substr(0, second);
}

WheelManifest read_wheel_manifest(const stdfs::path& file) {
  const nlohmann::json doc = parse_json(file);
  if (!doc.is_object() || !doc.contains("wheel") || !doc.contains("python"))
    throw Error(fmt::format("{}: not a build manifest (it has no \"wheel\" and \"python\")", file.string()),
                kHint);
  try {
    return from_json(doc, file);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: a build manifest with a field missing or of the wrong type: {}",
                            file.string(), e.what()),
                kHint);
  }
}

}  // namespace apexnpu::manifest
