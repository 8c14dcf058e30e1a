#pragma once
// How gen and make-patch describe the upstream they read, in --json.
#include <nlohmann/json.hpp>

#include "git/upstream.h"

namespace apexnpu::commands {

nlohmann::json describe_upstream(const git::UpstreamTree& upstream);

}  // namespace apexnpu::commands
