// The CPU probes of the aarch64 ISA levels (exec/cpu_probe.h). The baseline includes NEON, so
// only levels beyond it (SVE, ...) will need a probe: getauxval(AT_HWCAP / AT_HWCAP2) bits,
// which the kernel sets only for features it supports.
#if defined(__aarch64__)
#include "exec/cpu_probe.h"

namespace apexnpu::rt::cpu {

bool runs_scalar() noexcept { return true; }

}  // namespace apexnpu::rt::cpu
#endif
