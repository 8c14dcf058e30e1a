#pragma once
// git's delta encoding (packed OFS_DELTA and REF_DELTA objects): the base's size, the result's
// size, then instructions that copy a range of the base or insert literal bytes.
#include <string>
#include <string_view>

namespace apexnpu::git {

// The object the delta makes of `base`; throws Error (naming `what`) when the delta does not fit
// the base or is cut short.
std::string apply_delta(std::string_view base, std::string_view delta, const std::string& what);

}  // namespace apexnpu::git
