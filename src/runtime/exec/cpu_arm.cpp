// The CPU probes of the aarch64 ISA levels (exec/cpu_probe.h): getauxval(AT_HWCAP) bits, which
// the kernel sets only for features it supports (and saves the registers of).
#if defined(__aarch64__)
#include <sys/auxv.h>

#include "exec/cpu_probe.h"

namespace apexnpu::rt::cpu {

bool runs_scalar() noexcept { return true; }

// An ARMv8-A core may omit FP and Advanced SIMD (the kernel then reports neither).
bool runs_neon() noexcept {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  return (hwcap & HWCAP_FP) != 0 && (hwcap & HWCAP_ASIMD) != 0;
}

}  // namespace apexnpu::rt::cpu
#endif
