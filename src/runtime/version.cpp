#include "version.h"

namespace apexnpu::rt {

const char* runtime_version() noexcept { return APEXNPU_RUNTIME_VERSION; }

}  // namespace apexnpu::rt
