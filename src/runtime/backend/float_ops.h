#pragma once
// fp32 results of the emulated NPU in saturation mode (Ascend 910): an arithmetic result that
// overflows is stored as +-FLT_MAX, a NaN as +0, and the float status is raised.
//   has_nonfinite_float(x): whether x holds an inf or a NaN (a read-only pass; the usual
//                           answer is no, and then nothing is written).
//   saturate_float(x):      x in place with +-inf -> +-FLT_MAX and NaN -> +0; returns whether
//                           anything changed.
#include <cstddef>

namespace apexnpu::rt {

bool has_nonfinite_float(const float* x, std::size_t n);
bool saturate_float(float* x, std::size_t n);

}  // namespace apexnpu::rt
