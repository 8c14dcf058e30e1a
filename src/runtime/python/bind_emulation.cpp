// The emulated NPU's fp16 operations done in one runtime pass (backend/half_relu.h): the fast
// path of apex.npu's emulation calls them where they give the general path's bits.
#include "backend/device.h"
#include "backend/half_relu.h"
#include "python/methods.h"

namespace apexnpu::py {
namespace {

PyObject* relu_half(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&|i:relu_half", to_address, &src, to_address, &dst, to_size,
                        &n, &index))
    return nullptr;
  return guarded([&] {
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::relu_half(ptr<const rt::half_bits>(src), ptr<rt::half_bits>(dst), n);
    }
    if (bad) rt::device(index).float_status().raise();
    return PyBool_FromLong(bad);
  });
}

PyObject* relu_backward_half(PyObject*, PyObject* args) {
  std::uintptr_t grad = 0, self = 0, dst = 0;
  std::size_t n = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&O&|i:relu_backward_half", to_address, &grad, to_address,
                        &self, to_address, &dst, to_size, &n, &index))
    return nullptr;
  return guarded([&] {
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::relu_backward_half(ptr<const rt::half_bits>(grad), ptr<const rt::half_bits>(self),
                                   ptr<rt::half_bits>(dst), n);
    }
    if (bad) rt::device(index).float_status().raise();
    return PyBool_FromLong(bad);
  });
}

}  // namespace

PyMethodDef kEmulationMethods[] = {
    {"relu_half", relu_half, METH_VARARGS,
     "relu_half(src_fp16_addr, dst_fp16_addr, n, device=0) -> bool: torch's fp32 relu of the "
     "values, stored saturating; True (and the device float status raised) for NaN or +inf"},
    {"relu_backward_half", relu_backward_half, METH_VARARGS,
     "relu_backward_half(grad_fp16_addr, self_fp16_addr, dst_fp16_addr, n, device=0) -> bool: "
     "threshold_backward(grad, self, 0), stored saturating; True (and the status raised) for a "
     "passed NaN or inf"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace apexnpu::py
