#pragma once
// Whether a wheel's extension modules can carry the platform tags it claims, as auditwheel
// checks: the right architecture, and for manylinux tags the libraries and symbol versions the
// claimed policy allows (manylinux.h).
#include <string>
#include <vector>

#include "wheel/manylinux.h"
#include "wheel/record.h"

namespace apexnpu::wheel {

// One message per problem (empty: every claim holds). `tags` are WHEEL's "py-abi-platform" tags.
std::vector<std::string> platform_tag_violations(const WheelFiles& files,
                                                 const std::vector<std::string>& tags,
                                                 const ManylinuxPolicies& policies);

// The glibc minor a platform tag names: manylinux_2_N, or a legacy alias (manylinux1: 5,
// manylinux2010: 12, manylinux2014: 17); none for linux_ and other tags.
std::optional<int> manylinux_glibc_minor(const std::string& platform, const std::string& arch);

}  // namespace apexnpu::wheel
