#include "git/libgit2.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include "core/error.h"

namespace apexnpu::git {

namespace {

// The library open, its functions found and libgit2 initialised; shut down at exit, but left
// mapped (as every linked library is): what it still holds stays attributable to it, and leak
// checkers can name it.
class LoadedLibgit2 {
 public:
  LoadedLibgit2() : handle_(::dlopen(APEXNPU_LIBGIT2_SONAME, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr)
      throw Error(fmt::format("cannot load libgit2 ({}): {}", APEXNPU_LIBGIT2_SONAME, ::dlerror()),
                  "install the libgit2 runtime apexnpu was built with (Debian: libgit2-1.5)");
#define APEXNPU_LIBGIT2_FIND(name) find(functions_.name, #name);
    APEXNPU_LIBGIT2_FUNCTIONS(APEXNPU_LIBGIT2_FIND)
#undef APEXNPU_LIBGIT2_FIND
    functions_.git_libgit2_init();
  }
  ~LoadedLibgit2() { functions_.git_libgit2_shutdown(); }
  LoadedLibgit2(const LoadedLibgit2&) = delete;
  LoadedLibgit2& operator=(const LoadedLibgit2&) = delete;

  const Libgit2& functions() const { return functions_; }

 private:
  template <typename F>
  void find(F& slot, const char* name) {
    slot = reinterpret_cast<F>(::dlsym(handle_, name));
    if (slot == nullptr) {
      ::dlclose(handle_);
      throw Error(fmt::format("{} has no function {}", APEXNPU_LIBGIT2_SONAME, name),
                  "install the libgit2 runtime apexnpu was built with (Debian: libgit2-1.5)");
    }
  }

  void* handle_;
  Libgit2 functions_;
};

}  // namespace

const Libgit2& libgit2() {
  static const LoadedLibgit2 loaded;  // a failed load throws, and the next call tries again
  return loaded.functions();
}

int check(int rc, const std::string& what) {
  if (rc >= 0) return rc;
  const git_error* e = libgit2().git_error_last();
  throw Error(fmt::format("{}: {}", what,
                          e != nullptr && e->message != nullptr ? e->message : "unknown libgit2 error"));
}

}  // namespace apexnpu::git
