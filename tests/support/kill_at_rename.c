// Fault injection for the kill tests: preloaded (LD_PRELOAD) into the apexnpu binary under test,
// it lets the process make APEXNPU_KILL_AT_RENAME - 1 renames and kills it with SIGKILL at the
// next one, before that rename happens; so a test can stop a command between any two of its
// renames, deterministically, and then look at what it left. Every rename counts (rename,
// renameat, renameat2), from every thread. Unset: every rename goes through.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_long renames_made;
static long kill_at;  // 0: never

// Read once, then taken out of the environment: the processes this one starts (compilers, the
// Python probe) are neither counted nor killed.
__attribute__((constructor)) static void read_limit(void) {
  const char* limit = getenv("APEXNPU_KILL_AT_RENAME");
  kill_at = limit != NULL ? atol(limit) : 0;
  unsetenv("APEXNPU_KILL_AT_RENAME");
  unsetenv("LD_PRELOAD");
}

static void count_or_die(void) {
  if (kill_at <= 0) return;
  const long made = atomic_fetch_add(&renames_made, 1) + 1;
  if (made == kill_at) kill(getpid(), SIGKILL);
}

int rename(const char* from, const char* to) {
  count_or_die();
  int (*real)(const char*, const char*) = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
  return real(from, to);
}

int renameat(int from_dir, const char* from, int to_dir, const char* to) {
  count_or_die();
  int (*real)(int, const char*, int, const char*) =
      (int (*)(int, const char*, int, const char*))dlsym(RTLD_NEXT, "renameat");
  return real(from_dir, from, to_dir, to);
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned int flags) {
  count_or_die();
  int (*real)(int, const char*, int, const char*, unsigned int) =
      (int (*)(int, const char*, int, const char*, unsigned int))dlsym(RTLD_NEXT, "renameat2");
  return real(from_dir, from, to_dir, to, flags);
}
