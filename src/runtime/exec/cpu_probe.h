#pragma once
// Whether this CPU, and the OS (which must save the registers a level uses), can run each ISA
// level of exec/isa_levels.h: cpu::runs_<level name>(). Each architecture defines its probes in
// its own file (exec/cpu_x86.cpp, exec/cpu_arm.cpp), so a level listed without a probe fails to
// link.
#include "exec/isa_levels.h"

namespace apexnpu::rt::cpu {

#define APEXNPU_CPU_PROBE(level, ...) bool runs_##level() noexcept;
APEXNPU_ISA_LEVELS(APEXNPU_CPU_PROBE)
#undef APEXNPU_CPU_PROBE

}  // namespace apexnpu::rt::cpu
