// The runtime tests run on the architecture they were built for: the runtime's own level list
// (kIsaArchitecture, from the compiler's target) and the machine executing them (uname, which
// qemu-user answers as the emulated machine) must both be the build system's target
// (APEXNPU_TARGET_ARCHITECTURE), so a native x86-64 run cannot pass for the aarch64 run under
// qemu (tests/cross), nor the other way round.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <string>

#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

TEST(Architecture, RuntimeAndMachineAreTheBuildTarget) {
  EXPECT_EQ(std::string(kIsaArchitecture), APEXNPU_TARGET_ARCHITECTURE);
  utsname machine{};
  ASSERT_EQ(uname(&machine), 0);
  EXPECT_STREQ(machine.machine, APEXNPU_TARGET_ARCHITECTURE);
}

}  // namespace
}  // namespace apexnpu::rt
