// The extension modules load on glibc as old as the manylinux_2_17 baseline (CentOS 7, glibc
// 2.17), though they are built on a newer one. libstdc++ is linked statically (build.json's
// link flags), so what it and the runtime ask of glibc is all that ties a module to a glibc
// version; the linker redirects each newer-than-baseline reference here (--wrap=NAME in
// build.json binds NAME to __wrap_NAME, one entry per definition below):
//  - functions that glibc has had since its baseline but moved or re-versioned later
//    (pthread_* into libc at 2.34, a new pow at 2.29) call the baseline version, which every
//    glibc keeps;
//  - what the baseline lacks gets a definition of its own: __libc_single_threaded (2.32) is a
//    constant "not single-threaded", so libstdc++ always uses atomic reference counts;
//    getentropy (2.25) and arc4random (2.36), which only std::random_device reaches, read the
//    getrandom system call (Linux 3.17).
// build.json also links libpthread.so.0, where glibc before 2.34 defines the pthread functions.
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#if defined(__x86_64__)
#define APEXNPU_GLIBC_BASELINE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define APEXNPU_GLIBC_BASELINE "GLIBC_2.17"
#else
#error "glibc_floor.cpp knows the baseline glibc version of x86_64 and aarch64 only"
#endif

// __wrap_NAME calls NAME at the baseline's version (types as the ABI passes them: the C
// headers' own declarations would clash with these in a unity batch).
#define APEXNPU_AT_BASELINE(ret, name, params, args)                                \
  extern "C" ret apexnpu_baseline_##name params;                                    \
  __asm__(".symver apexnpu_baseline_" #name ", " #name "@" APEXNPU_GLIBC_BASELINE); \
  extern "C" [[gnu::visibility("hidden")]] ret __wrap_##name params { return apexnpu_baseline_##name args; }

APEXNPU_AT_BASELINE(int, pthread_create, (void* thread, const void* attr, void* (*start)(void*), void* arg),
                    (thread, attr, start, arg))
APEXNPU_AT_BASELINE(int, pthread_join, (unsigned long thread, void** result), (thread, result))
APEXNPU_AT_BASELINE(int, pthread_detach, (unsigned long thread), (thread))
APEXNPU_AT_BASELINE(int, pthread_once, (int* once, void (*init)()), (once, init))
APEXNPU_AT_BASELINE(int, pthread_key_create, (unsigned* key, void (*destroy)(void*)), (key, destroy))
APEXNPU_AT_BASELINE(int, __pthread_key_create, (unsigned* key, void (*destroy)(void*)), (key, destroy))
APEXNPU_AT_BASELINE(int, pthread_key_delete, (unsigned key), (key))
APEXNPU_AT_BASELINE(void*, pthread_getspecific, (unsigned key), (key))
APEXNPU_AT_BASELINE(int, pthread_setspecific, (unsigned key, const void* value), (key, value))
APEXNPU_AT_BASELINE(double, pow, (double x, double y), (x, y))

extern "C" {

[[gnu::visibility("hidden")]] char __wrap___libc_single_threaded = 0;

[[gnu::visibility("hidden")]] int __wrap_getentropy(void* buffer, std::size_t length) {
  if (length > 256) {  // getentropy's limit
    errno = EIO;
    return -1;
  }
  auto* at = static_cast<unsigned char*>(buffer);
  while (length > 0) {
    const long got = syscall(SYS_getrandom, at, length, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    at += got;
    length -= static_cast<std::size_t>(got);
  }
  return 0;
}

[[gnu::visibility("hidden")]] unsigned __wrap_arc4random() {
  unsigned value = 0;
  while (__wrap_getentropy(&value, sizeof value) != 0) {
  }
  return value;
}

}  // extern "C"
