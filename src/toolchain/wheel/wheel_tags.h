#pragma once
// PEP 425 compressed tag sets: "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64" in a
// wheel's file name stands for every combination of its dotted parts, each a Tag line of WHEEL.
#include <string>
#include <vector>

namespace apexnpu::wheel {

// "py-abi-platform" with dotted alternatives in any part -> every "py-abi-platform" it stands
// for, in order; a tag without two dashes comes back alone.
std::vector<std::string> expand_tag(const std::string& tag);

}  // namespace apexnpu::wheel
