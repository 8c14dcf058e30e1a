#pragma once
// The process group a command's children run in (the compilers, and what each starts: cc1plus,
// as, ld), watched by a small process that kills the whole group as soon as this process dies,
// however it dies: a SIGKILL leaves no compiler running. While a ChildGroup lives, run_process
// starts every child in it.
#include <sys/types.h>

namespace apexnpu {

class ChildGroup {
 public:
  // Forks the watchdog, which leads the group; throws Error when it cannot.
  ChildGroup();
  // Tells the watchdog that this process ended its children itself, and reaps it.
  ~ChildGroup();
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  pid_t id() const { return leader_; }

 private:
  pid_t leader_ = -1;
  int alive_pipe_ = -1;  // its write end: closed by the kernel when this process dies
  ChildGroup* outer_ = nullptr;
};

// The group run_process starts children in: the innermost live ChildGroup's, or 0 (this
// process's own group) when there is none.
pid_t active_child_group();

}  // namespace apexnpu
