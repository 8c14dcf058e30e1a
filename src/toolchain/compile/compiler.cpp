#include "compile/compiler.h"

#include <fmt/core.h>

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "core/error.h"
#include "core/subprocess.h"

namespace apexnpu::compile {

Compiler detect_compiler() {
  const char* cxx = std::getenv("CXX");
  return detect_compiler(cxx != nullptr && *cxx != '\0' ? cxx : "c++");
}

Compiler detect_compiler(const std::string& cxx) {
  Compiler c;
  std::istringstream words(cxx);
  for (std::string w; words >> w;) c.command.push_back(w);
  if (c.command.empty()) throw UsageError("CXX is blank", "unset CXX or set it to a C++ compiler");
  auto argv = c.command;
  argv.push_back("--version");
  const ProcessResult r = run_process(argv);
  if (!r.started || r.exit_code != 0)
    throw Error(fmt::format("cannot run the C++ compiler `{}`: {}", quote_command(argv),
                            r.started ? r.err : r.spawn_error),
                "install g++ (apt install g++) or point CXX at a C++20 compiler");
  c.version = r.out.substr(0, r.out.find('\n'));
  return c;
}

Compiler compiler_for(const std::string& architecture, const std::string& host_architecture) {
  if (architecture == host_architecture) return detect_compiler();
  std::string variable = "APEXNPU_CXX_" + architecture;
  for (char& c : variable) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const char* set = std::getenv(variable.c_str());
  const std::string cross = set != nullptr && *set != '\0' ? set : architecture + "-linux-gnu-g++";
  try {
    return detect_compiler(cross);
  } catch (const Error&) {  // said again for a cross build: which variable picks the compiler
    throw Error(fmt::format("no C++ compiler for {}: `{}` cannot be run", architecture, cross),
                fmt::format("install Debian's cross compiler (apt-get install g++-{}-linux-gnu), "
                            "or set {} to one",
                            architecture, variable));
  }
}

std::string failure_output(const ProcessResult& run) {
  return run.started ? run.err : "cannot run the compiler: " + run.spawn_error;
}

}  // namespace apexnpu::compile
