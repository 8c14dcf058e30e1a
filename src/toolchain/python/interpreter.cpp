#include "python/interpreter.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/error.h"
#include "core/subprocess.h"

namespace apexnpu::python {
namespace stdfs = std::filesystem;

namespace {

bool is_executable_file(const stdfs::path& p) {
  std::error_code ec;
  return stdfs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> dirs;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    dirs.push_back(end == start ? "." : path.substr(start, end - start));
    start = end + 1;
  }
  return dirs;
}

bool is_pyenv_shim_dir(const stdfs::path& dir, const stdfs::path& pyenv_root) {
  const stdfs::path d = dir.lexically_normal();
  return d.filename() == "shims" && (d.parent_path() == pyenv_root.lexically_normal() ||
                                     d.parent_path().parent_path().filename() == "plugins");
}

// "3.11.7" sorts after "3.11.10"? No: compare the numeric components.
std::vector<int> version_key(const std::string& name) {
  std::vector<int> key;
  std::size_t i = 0;
  while (i < name.size()) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      std::size_t j = i;
      while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
      key.push_back(std::stoi(name.substr(i, j - i)));
      i = j;
    } else {
      ++i;
    }
  }
  return key;
}

}  // namespace

SearchEnv SearchEnv::from_environment() {
  SearchEnv env;
  if (const char* p = std::getenv("PATH")) env.path = p;
  if (const char* r = std::getenv("PYENV_ROOT"); r && *r) {
    env.pyenv_root = r;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    env.pyenv_root = stdfs::path(home) / ".pyenv";
  }
  return env;
}

Expected<stdfs::path> locate_python(std::string_view version, const SearchEnv& env) {
  const bool versioned = !version.empty();
  const std::string name = "python3" + std::string(versioned ? version.substr(1) : "");  // python3.11
  std::vector<std::string> searched;
  for (const auto& dir : split_path(env.path)) {
    if (versioned && is_pyenv_shim_dir(dir, env.pyenv_root)) continue;
    const stdfs::path candidate = stdfs::path(dir) / name;
    if (is_executable_file(candidate)) return candidate;
  }
  searched.push_back(fmt::format("{} on PATH", name));
  if (versioned && !env.pyenv_root.empty()) {
    const stdfs::path versions = env.pyenv_root / "versions";
    std::vector<std::pair<std::vector<int>, stdfs::path>> found;
    std::error_code ec;
    const std::string prefix(version);
    for (stdfs::directory_iterator it(versions, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string dir = it->path().filename().string();
      // "3.11" must match 3.11.7 but not 3.1 / 3.110.
      if (dir.rfind(prefix, 0) != 0) continue;
      if (dir.size() > prefix.size() && std::isdigit(static_cast<unsigned char>(dir[prefix.size()])))
        continue;
      const stdfs::path candidate = it->path() / "bin" / name;
      if (is_executable_file(candidate)) found.emplace_back(version_key(dir), candidate);
    }
    if (!found.empty()) return std::max_element(found.begin(), found.end())->second;
    searched.push_back(fmt::format("{}/{}*/bin/{}", versions.string(), version, name));
  }
  return Unexpected{
      fmt::format("no Python {} found (searched {})", versioned ? version : "3", fmt::join(searched, ", "))};
}

stdfs::path find_python(std::string_view request, const SearchEnv& env) {
  if (request.find('/') != std::string_view::npos) {
    const stdfs::path p(request);
    if (!is_executable_file(p))
      throw Error(fmt::format("--python={}: no such executable file", request),
                  "give a path to a python executable, or a version like --python=3.11");
    return p;
  }
  if (!request.empty()) {
    // A version of another major Python (2.7, 4.0): say that, not how versions are written.
    static const std::regex version_re(R"(3\.(\d+))");
    static const std::regex other_major_re(R"((?!3(\.|$))\d+(\.\d+)*)");
    if (!std::regex_match(std::string(request), version_re) &&
        std::regex_match(std::string(request), other_major_re))
      throw UsageError(fmt::format("--python={}: Python {} is not supported", request, request),
                       "apexnpu builds for CPython 3.7 to 3.13: pass --python=3.N or a path");
    if (!std::regex_match(std::string(request), version_re))
      throw UsageError(fmt::format("--python={}: expected a version like 3.11 or a path", request),
                       "supported: --python=3.7 ... --python=3.13, or --python=/path/to/python");
  }
  Expected<stdfs::path> found = locate_python(request, env);
  if (!found)
    throw Error(found.error(), "install it (apt install python" +
                                   std::string(request.empty() ? "3" : request) + ", or pyenv install " +
                                   std::string(request) + "), or pass --python=/path/to/python");
  return std::move(*found);
}

std::string_view probe_script() {
  // Python 2 and 3 syntax; no f-strings, no print statement.
  return R"PY(
import sys, json, struct, platform
try:
    import sysconfig
except ImportError:
    sysconfig = None
v = sys.version_info
impl = getattr(sys, 'implementation', None)
name = impl.name if impl is not None else platform.python_implementation().lower()
cv = sysconfig.get_config_var if sysconfig else (lambda k: None)
paths = sysconfig.get_paths() if sysconfig else {}
print(json.dumps({
    'version': '%d.%d.%d' % (v[0], v[1], v[2]),
    'major': v[0], 'minor': v[1],
    'implementation': name,
    'soabi': cv('SOABI'),
    'ext_suffix': cv('EXT_SUFFIX'),
    'include': paths.get('include'),
    'includepy': cv('INCLUDEPY'),
    'platform': sysconfig.get_platform() if sysconfig else None,
    'pointer_bits': struct.calcsize('P') * 8,
}))
)PY";
}

PythonInfo parse_probe_output(const stdfs::path& executable, std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw Error(fmt::format("{} is not a Python interpreter apexnpu can use: its probe printed "
                            "no JSON ({:.200})",
                            executable.string(), text),
                "pass --python=3.N or the path of a CPython 3.7-3.13 executable");
  }
  auto str = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  PythonInfo info;
  info.executable = executable;
  info.version = str("version");
  info.major = j.value("major", 0);
  info.minor = j.value("minor", 0);
  info.implementation = str("implementation");
  info.soabi = str("soabi");
  info.ext_suffix = str("ext_suffix");
  info.include_dir = str("include");
  info.include_py = str("includepy");
  info.platform = str("platform");
  info.pointer_bits = j.value("pointer_bits", 0);
  return info;
}

PythonInfo probe_python(const stdfs::path& executable) {
  // -E: ignore PYTHON* variables, -s: no user site; both exist in Python 2 too.
  const std::vector<std::string> argv = {executable.string(), "-E", "-s", "-c", std::string(probe_script())};
  const ProcessResult r = run_process(argv);
  if (!r.started)
    throw Error(fmt::format("cannot run {}: {}", executable.string(), r.spawn_error),
                "pass --python=3.N or the path of a CPython 3.7-3.13 executable");
  if (r.exit_code != 0) {
    // A Python too old for the probe (or not a Python at all) fails here; say which.
    const auto version = run_process({executable.string(), "--version"});
    const std::string said = version.out + version.err;
    if (said.rfind("Python 2.", 0) == 0 || said.rfind("Python 3.", 0) == 0) {
      std::string v = said.substr(7);
      v.erase(v.find_last_not_of(" \n\r") + 1);
      throw Error(fmt::format("{} is Python {}, which is not supported", executable.string(), v),
                  "apexnpu builds for CPython 3.7 to 3.13");
    }
    throw Error(fmt::format("{} is not a working Python interpreter (probe exited with {}): {:.300}",
                            executable.string(), r.exit_code, r.err),
                "pass --python=3.N or the path of a CPython 3.7-3.13 executable");
  }
  return parse_probe_output(executable, r.out);
}

void check_supported(const PythonInfo& info) {
  const std::string what = fmt::format("{} ({} {})", info.executable.string(),
                                       info.implementation.empty() ? "unknown" : info.implementation,
                                       info.version.empty() ? "?" : info.version);
  if (info.major == 2)
    throw Error(fmt::format("Python {} is not supported: {}", info.version.substr(0, 3), what),
                "apexnpu builds for CPython 3.7 to 3.13; pass --python=3.N");
  if (info.implementation != "cpython")
    throw Error(fmt::format("only CPython is supported, not {}", what),
                "pass --python=3.N for a CPython 3.7-3.13");
  if (info.major != 3 || info.minor < 7 || info.minor > 13)
    throw Error(fmt::format("Python {}.{} is not supported: {}", info.major, info.minor, what),
                "apexnpu builds for CPython 3.7 to 3.13; pass --python=3.N");
  if (info.soabi.empty() || info.ext_suffix.empty() || info.platform.empty())
    throw Error(fmt::format("{} reports no SOABI/EXT_SUFFIX/platform in sysconfig", what),
                "use a CPython built with its standard sysconfig");
  if (info.pointer_bits != 64)
    throw Error(fmt::format("{} is a {}-bit interpreter; only 64-bit is supported", what, info.pointer_bits));
}

stdfs::path find_python_headers(const PythonInfo& info) {
  std::vector<stdfs::path> dirs;
  if (!info.include_dir.empty()) dirs.push_back(info.include_dir);
  if (!info.include_py.empty() && info.include_py != info.include_dir) dirs.push_back(info.include_py);
  std::vector<std::string> searched;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (stdfs::is_regular_file(d / "Python.h", ec)) return d;
    searched.push_back(d.string());
  }
  throw Error(fmt::format("Python.h not found for {} (searched {})", info.executable.string(),
                          searched.empty() ? std::string("no include directory reported")
                                           : fmt::format("{}", fmt::join(searched, ", "))),
              fmt::format("install the headers: apt install python{}.{}-dev (or your system's "
                          "python3-devel)",
                          info.major, info.minor));
}

WheelTag wheel_tag(const PythonInfo& info) {
  // SOABI "cpython-37m-x86_64-linux-gnu" -> "cp37m"; "cpython-311-..." -> "cp311".
  static const std::regex soabi_re(R"(cpython-(\d+[a-z]*)(-.*)?)");
  std::smatch m;
  if (!std::regex_match(info.soabi, m, soabi_re))
    throw Error(
        fmt::format("{}: cannot derive the ABI tag from SOABI '{}'", info.executable.string(), info.soabi));
  WheelTag tag;
  tag.python = fmt::format("cp{}{}", info.major, info.minor);
  tag.abi = "cp" + m[1].str();
  tag.platform = info.platform;
  std::replace(tag.platform.begin(), tag.platform.end(), '-', '_');
  std::replace(tag.platform.begin(), tag.platform.end(), '.', '_');
  return tag;
}

}  // namespace apexnpu::python
