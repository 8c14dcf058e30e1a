#pragma once
// A CPython of another architecture, known from Debian's multiarch development headers
// (libpython3.N-dev:<arch>) without running it: its version from patchlevel.h, its ABI, extension
// suffix and platform from the architecture's GNU triplet, as that interpreter's sysconfig
// reports them.
#include <filesystem>
#include <string>
#include <vector>

#include "python/interpreter.h"

namespace apexnpu::python {

// "aarch64" -> "aarch64-linux-gnu", "x86_64" -> "x86_64-linux-gnu".
std::string gnu_triplet(const std::string& architecture);
// The Debian architecture name: "aarch64" -> "arm64", "x86_64" -> "amd64".
std::string debian_architecture(const std::string& architecture);

// Where Debian puts the headers (/usr/include, or $APEXNPU_MULTIARCH_INCLUDE for tests).
std::filesystem::path multiarch_include_root();

// CPython 3.<minor> for `architecture` from the headers under `root`: root/python3.N holds
// Python.h and patchlevel.h, root/<triplet>/python3.N its pyconfig.h. Throws Error naming the
// missing file and the package that provides it.
PythonInfo multiarch_python(int minor, const std::string& architecture, const std::filesystem::path& root);

// The minors 7..13 whose multiarch headers for `architecture` are installed under `root`.
std::vector<int> multiarch_minors(const std::string& architecture, const std::filesystem::path& root);

// The extra compiler flags a cross compiler needs for those headers: Debian's pyconfig.h
// includes <triplet/python3.N/pyconfig.h>, found through the root searched after the cross
// compiler's own system headers.
std::vector<std::string> multiarch_include_flags(const std::filesystem::path& root);

}  // namespace apexnpu::python
