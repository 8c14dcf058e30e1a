#pragma once
// Runs a program (posix_spawnp, no shell) and captures what it prints. Used for the compiler,
// the linker and the Python probe; stdin is /dev/null so nothing ever waits for input. While a
// ChildGroup lives (core/child_group.h), the program runs in its process group and dies with
// this process.
#include <string>
#include <vector>

namespace apexnpu {

struct ProcessResult {
  int exit_code = -1;       // the exit status, or 128 + signal number when killed by a signal
  std::string out;          // stdout
  std::string err;          // stderr
  bool started = false;     // false when the program could not be run at all (see spawn_error)
  std::string spawn_error;  // why it could not be run
};

// `cwd` empty: the current directory.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd = {});

// The command as one line a user can paste into a shell.
std::string quote_command(const std::vector<std::string>& argv);

}  // namespace apexnpu
