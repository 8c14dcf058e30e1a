#pragma once
// The registry (registry.h) described as JSON text, built at compile time and placed in the
// section kRegistrySection of whatever links the runtime, so tools read the list of optimizers
// from a built module without running it (a cross-compiled one included):
//   {"schema": 1, "optimizers": [{"kind": "sgd", "class": "NpuFusedSGD",
//                                 "options": ["lr", ...], "state": ["momentum_buffer"]}, ...]}
#include <string_view>

namespace apexnpu::rt::optim {

inline constexpr std::string_view kRegistrySection = ".apexnpu_registry";

// The same text as the section holds (without its terminating NUL).
std::string_view registry_description() noexcept;

}  // namespace apexnpu::rt::optim
