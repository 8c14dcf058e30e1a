// Loss scaling: fused unscale with overflow detection, gradient norms and clipping.
#include "python/methods.h"

namespace apexnpu::py {

PyMethodDef kAmpMethods[] = {{nullptr, nullptr, 0, nullptr}};

}  // namespace apexnpu::py
