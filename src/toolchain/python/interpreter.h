#pragma once
// The target Python: where it is (discovery) and what it is (one probe run of the interpreter).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/expected.h"

namespace apexnpu::python {

// What one run of the interpreter reports (see probe_script()).
struct PythonInfo {
  std::filesystem::path executable;  // as found (not resolved through symlinks)
  std::string version;               // "3.11.7"
  int major = 0, minor = 0;
  std::string implementation;         // "cpython", "pypy", ...
  std::string soabi;                  // "cpython-311-x86_64-linux-gnu"
  std::string ext_suffix;             // ".cpython-311-x86_64-linux-gnu.so"
  std::filesystem::path include_dir;  // sysconfig.get_paths()['include']
  std::filesystem::path include_py;   // sysconfig INCLUDEPY (usually the same)
  std::string platform;               // sysconfig.get_platform(): "linux-x86_64"
  int pointer_bits = 0;
};

// The three parts of a wheel's compatibility tag.
struct WheelTag {
  std::string python;    // "cp311"
  std::string abi;       // "cp311", "cp37m" (from SOABI, never guessed)
  std::string platform;  // "linux_x86_64"
  std::string str() const { return python + "-" + abi + "-" + platform; }
};

// Where discovery looks. Defaults come from the environment; tests give their own.
struct SearchEnv {
  std::string path;                  // $PATH
  std::filesystem::path pyenv_root;  // $PYENV_ROOT, else ~/.pyenv
  static SearchEnv from_environment();
};

// `request` empty: python3 on PATH. "3.N": python3.N on PATH (pyenv shims skipped: they fail
// unless that version is active, and pyenv is searched directly next), then
// <pyenv_root>/versions/3.N*/bin/python3.N (highest patch). Anything with a '/' is a path.
// Throws Error naming every place searched.
std::filesystem::path find_python(std::string_view request, const SearchEnv& env);
// find_python's search for `version` ("" or "3.N"): the executable, or a failure naming every
// place searched (--python=all passes over a version that is not installed).
Expected<std::filesystem::path> locate_python(std::string_view version, const SearchEnv& env);

// The probe, valid in Python 2 and 3 so a Python 2 can be told apart and refused clearly.
std::string_view probe_script();
// Parses the probe's JSON output (throws Error on garbage).
PythonInfo parse_probe_output(const std::filesystem::path& executable, std::string_view json);
// Runs the interpreter once with the probe.
PythonInfo probe_python(const std::filesystem::path& executable);

// CPython 3.7..3.13 on a 64-bit platform; throws Error otherwise.
void check_supported(const PythonInfo& info);
// The directory holding Python.h; throws Error naming python3.N-dev and the directories searched.
std::filesystem::path find_python_headers(const PythonInfo& info);

WheelTag wheel_tag(const PythonInfo& info);

}  // namespace apexnpu::python
