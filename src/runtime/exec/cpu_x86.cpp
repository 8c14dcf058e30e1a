// The CPU probes of the x86-64 ISA levels (exec/cpu_probe.h).
#if defined(__x86_64__)
#include "exec/cpu_probe.h"

namespace apexnpu::rt::cpu {

bool runs_scalar() noexcept { return true; }

// libgcc's cpu model checks XCR0 (xgetbv) too, so these are false if the OS does not save
// the AVX / AVX-512 state.
bool runs_avx2() noexcept {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

bool runs_avx512() noexcept {
  return runs_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

}  // namespace apexnpu::rt::cpu
#endif
