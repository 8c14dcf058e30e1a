#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/child_group.h"

extern char** environ;

namespace apexnpu {
namespace {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

bool make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read = Fd(fds[0]);
  p.write = Fd(fds[1]);
  return true;
}

class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&a_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&a_); }
  posix_spawn_file_actions_t* get() { return &a_; }

 private:
  posix_spawn_file_actions_t a_;
};

// The child joins the active ChildGroup (whose watchdog kills it if this process dies), if any.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&a_);
    if (const pid_t group = active_child_group(); group > 0) {
      posix_spawnattr_setpgroup(&a_, group);
      posix_spawnattr_setflags(&a_, POSIX_SPAWN_SETPGROUP);
    }
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&a_); }
  posix_spawnattr_t* get() { return &a_; }

 private:
  posix_spawnattr_t a_;
};

// Reads both pipes until both are closed, so neither can fill up and block the child.
void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
  std::array<pollfd, 2> fds{{{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}}};
  std::array<std::string*, 2> sinks{&out, &err};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd) {
  ProcessResult result;
  if (argv.empty()) {
    result.spawn_error = "empty command";
    return result;
  }
  Pipe out, err;
  if (!make_pipe(out) || !make_pipe(err)) {
    result.spawn_error = std::strerror(errno);
    return result;
  }
  SpawnActions actions;
  posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), out.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(actions.get(), err.write.get(), STDERR_FILENO);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(actions.get(), cwd.c_str());

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  SpawnAttributes attributes;
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], actions.get(), attributes.get(), args.data(), environ);
  out.write.reset();
  err.write.reset();
  if (rc != 0) {
    result.spawn_error = std::strerror(rc);
    return result;
  }
  result.started = true;
  drain(out.read.get(), err.read.get(), result.out, result.err);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_code = 128 + WTERMSIG(status);
  return result;
}

std::string quote_command(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    const bool plain =
        !a.empty() &&
        a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+./,:@%") ==
            std::string::npos;
    if (plain) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a) {
      if (c == '\'')
        line += "'\\''";
      else
        line += c;
    }
    line += '\'';
  }
  return line;
}

}  // namespace apexnpu
