#pragma once
// The runtime's own version, set from build.json by whoever compiles it.
#ifndef APEXNPU_RUNTIME_VERSION
#error "APEXNPU_RUNTIME_VERSION must be defined by the build (see build.json)"
#endif

namespace apexnpu::rt {

const char* runtime_version() noexcept;

}  // namespace apexnpu::rt
