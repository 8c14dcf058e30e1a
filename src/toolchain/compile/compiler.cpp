#include "compile/compiler.h"

#include <fmt/core.h>

#include <cstdlib>
#include <sstream>

#include "core/subprocess.h"
#include "core/error.h"

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

std::string failure_output(const ProcessResult& run) {
  return run.started ? run.err : "cannot run the compiler: " + run.spawn_error;
}

}  // namespace apexnpu::compile
