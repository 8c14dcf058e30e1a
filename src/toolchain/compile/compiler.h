#pragma once
// The system C++ compiler: $CXX (may carry a launcher, e.g. "ccache g++"), else `c++`.
#include <string>
#include <vector>

#include "core/subprocess.h"

namespace apexnpu::compile {

struct Compiler {
  std::vector<std::string> command;  // argv prefix, e.g. {"c++"} or {"ccache", "g++"}
  std::string version;               // first line of `--version`, read once
};

// Reads $CXX and runs `<cxx> --version` once. Throws Error when it cannot be run.
Compiler detect_compiler();
Compiler detect_compiler(const std::string& cxx);
// The compiler for `architecture` on this host: the host's (as above) for the host's own, else
// $APEXNPU_CXX_<ARCH> (e.g. APEXNPU_CXX_AARCH64), else Debian's cross compiler
// <arch>-linux-gnu-g++; Error naming the package that provides it when it cannot be run.
Compiler compiler_for(const std::string& architecture, const std::string& host_architecture);

// What a compiler or linker run that failed said, or why it could not be run.
std::string failure_output(const ProcessResult& run);

}  // namespace apexnpu::compile
