#include "core/child_group.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include "core/error.h"

namespace apexnpu {

namespace {

std::atomic<ChildGroup*> active{nullptr};

// The watchdog, in the forked child: only async-signal-safe calls from here on. It waits for a
// word from its parent; end of file means the parent died, and the group dies with it.
[[noreturn]] void watch(int read_end) {
  ::setpgid(0, 0);
  if (read_end > 3) ::close_range(3, static_cast<unsigned>(read_end) - 1, 0);
  ::close_range(static_cast<unsigned>(read_end) + 1, UINT_MAX, 0);
  // Keep the terminal's signals (Ctrl-C reaches the parent's group, not this one) from ending
  // the watch before the parent's death does.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  char word = 0;
  ssize_t n;
  while ((n = ::read(read_end, &word, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && word == 'q') ::_exit(0);
  ::kill(0, SIGKILL);  // the whole group, this process last
  ::_exit(0);
}

}  // namespace

ChildGroup::ChildGroup() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(fmt::format("cannot start the compilers' watchdog: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(fmt::format("cannot start the compilers' watchdog: {}", std::strerror(error)));
  }
  if (pid == 0) watch(fds[0]);
  ::close(fds[0]);
  ::setpgid(pid, pid);  // also here: the group must exist before the first child joins it
  leader_ = pid;
  alive_pipe_ = fds[1];
  outer_ = active.exchange(this);
}

ChildGroup::~ChildGroup() {
  active.store(outer_);
  const char quit = 'q';
  while (::write(alive_pipe_, &quit, 1) < 0 && errno == EINTR) {
  }
  ::close(alive_pipe_);
  while (::waitpid(leader_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

pid_t active_child_group() {
  const ChildGroup* group = active.load();
  return group != nullptr ? group->id() : 0;
}

}  // namespace apexnpu
