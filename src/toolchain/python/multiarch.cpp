#include "python/multiarch.h"

#include <fmt/core.h>

#include <cstdlib>
#include <regex>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::python {
namespace stdfs = std::filesystem;

std::string gnu_triplet(const std::string& architecture) { return architecture + "-linux-gnu"; }

std::string debian_architecture(const std::string& architecture) {
  if (architecture == "aarch64") return "arm64";
  if (architecture == "x86_64") return "amd64";
  return architecture;
}

stdfs::path multiarch_include_root() {
  const char* root = std::getenv("APEXNPU_MULTIARCH_INCLUDE");
  return root != nullptr && *root != '\0' ? stdfs::path(root) : stdfs::path("/usr/include");
}

PythonInfo multiarch_python(int minor, const std::string& architecture, const stdfs::path& root) {
  const std::string name = fmt::format("python3.{}", minor);
  const std::string package = fmt::format("libpython3.{}-dev:{}", minor, debian_architecture(architecture));
  const std::string install =
      fmt::format("dpkg --add-architecture {0} && apt-get update && apt-get install {1}",
                  debian_architecture(architecture), package);
  const stdfs::path pyconfig = root / gnu_triplet(architecture) / name / "pyconfig.h";
  const stdfs::path headers = root / name;
  for (const stdfs::path& needed : {pyconfig, headers / "Python.h", headers / "patchlevel.h"}) {
    std::error_code ec;
    if (!stdfs::is_regular_file(needed, ec))
      throw Error(
          fmt::format("no CPython 3.{} headers for {}: {} is missing", minor, architecture, needed.string()),
          fmt::format("{} provides them: {}", package, install));
  }
  static const std::regex version_re(R"(#define\s+PY_VERSION\s+"(3\.(\d+)\.\d+)[^"]*")");
  const std::string patchlevel = read_file(headers / "patchlevel.h");
  std::smatch m;
  if (!std::regex_search(patchlevel, m, version_re) || std::stoi(m[2].str()) != minor)
    throw Error(
        fmt::format("{} does not define PY_VERSION 3.{}.x", (headers / "patchlevel.h").string(), minor));
  PythonInfo info;
  info.executable = stdfs::path();  // none: the interpreter is not run
  info.version = m[1].str();
  info.major = 3;
  info.minor = minor;
  info.implementation = "cpython";
  // CPython 3.7 still marks its ABI with "m" (pymalloc).
  const std::string abi = fmt::format("3{}{}", minor, minor == 7 ? "m" : "");
  info.soabi = fmt::format("cpython-{}-{}", abi, gnu_triplet(architecture));
  info.ext_suffix = "." + info.soabi + ".so";
  info.include_dir = headers;
  info.include_py = headers;
  info.platform = "linux-" + architecture;
  info.pointer_bits = 64;
  return info;
}

std::vector<int> multiarch_minors(const std::string& architecture, const stdfs::path& root) {
  std::vector<int> minors;
  for (int minor = 7; minor <= 13; ++minor) {
    std::error_code ec;
    const std::string name = fmt::format("python3.{}", minor);
    if (stdfs::is_regular_file(root / gnu_triplet(architecture) / name / "pyconfig.h", ec) &&
        stdfs::is_regular_file(root / name / "Python.h", ec))
      minors.push_back(minor);
  }
  return minors;
}

std::vector<std::string> multiarch_include_flags(const stdfs::path& root) {
  return {"-idirafter", root.string()};
}

}  // namespace apexnpu::python
