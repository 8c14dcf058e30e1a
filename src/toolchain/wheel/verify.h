#pragma once
// Checks a wheel (.whl) or wheel layout directory against the binary distribution format:
// every RECORD row (sha256, urlsafe base64 without padding, size), every file listed, no
// compiled bytecode, METADATA valid as an index reads it (core_metadata.h), METADATA and WHEEL
// present and agreeing with the .dist-info name and the wheel's file name, extension
// module suffixes agreeing with the tag, and the modules' architecture, libraries and symbol
// versions agreeing with the platform tags. pip checks none of this, so apexnpu checks its own
// output with it, and `apexnpu verify` offers it for any wheel.
#include <string>
#include <vector>

#include "wheel/load_wheel.h"
#include "wheel/manylinux.h"
#include "wheel/wheel_under_check.h"

namespace apexnpu::wheel {

struct VerifyReport {
  std::vector<std::string> violations;  // empty: the wheel is valid
  std::string dist_info;                // "apex-0.1+ascend.dist-info" when found
  std::vector<std::string> tags;        // from WHEEL
  std::size_t files = 0;
  bool ok() const { return violations.empty(); }
};

// Also checks each extension module against the platform tags claimed (platform_check.h).
VerifyReport verify_wheel(const WheelUnderCheck& wheel, const ManylinuxPolicies& policies);
// The same with the bundled policies (templates/manylinux_policy.json).
VerifyReport verify_wheel(const WheelUnderCheck& wheel);

// "cpython-311-x86_64-linux-gnu" for abi "cp311" on "linux_x86_64" (empty if not derivable).
std::string expected_soabi(const std::string& abi_tag, const std::string& platform_tag);

}  // namespace apexnpu::wheel
