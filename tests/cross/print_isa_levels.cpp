// Prints the runtime's ISA levels for the architecture it was compiled for, and whether this CPU
// runs each. Linking it checks that every level of exec/isa_levels.h has its CPU probe.
#include <cstdio>

#include "exec/isa.h"

int main() {
  using namespace apexnpu::rt;
  std::printf("%.*s:", static_cast<int>(kIsaArchitecture.size()), kIsaArchitecture.data());
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const auto level = static_cast<IsaLevel>(i);
    std::printf(" %s%s", isa_name(level), isa_supported(level) ? "" : " (unsupported)");
  }
  std::printf("; active %s\n", isa_name(active_isa()));
}
