// The emulated NPU's fp16 operations done in one runtime pass (backend/half_ops.h): the fast
// path of apex.npu's emulation calls them where they give the general path's bits. Each raises
// the device's float status when something was saturated, as float_to_half does.
#include "backend/device.h"
#include "backend/half_ops.h"
#include "python/methods.h"

namespace apexnpu::py {
namespace {

using Unary = bool (*)(const rt::half_bits*, rt::half_bits*, std::size_t);
using Binary = bool (*)(const rt::half_bits*, const rt::half_bits*, rt::half_bits*, std::size_t);

PyObject* reported(int index, bool bad) {
  if (bad) rt::device(index).float_status().raise();
  return PyBool_FromLong(bad);
}

template <Unary op>
PyObject* unary(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&|i", to_address, &src, to_address, &dst, to_size, &n,
                        &index))
    return nullptr;
  return guarded([&] {
    bool bad = false;
    {
      GilRelease unlocked;
      bad = op(ptr<const rt::half_bits>(src), ptr<rt::half_bits>(dst), n);
    }
    return reported(index, bad);
  });
}

template <Binary op>
PyObject* binary(PyObject*, PyObject* args) {
  std::uintptr_t a = 0, b = 0, dst = 0;
  std::size_t n = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&O&|i", to_address, &a, to_address, &b, to_address, &dst,
                        to_size, &n, &index))
    return nullptr;
  return guarded([&] {
    bool bad = false;
    {
      GilRelease unlocked;
      bad = op(ptr<const rt::half_bits>(a), ptr<const rt::half_bits>(b), ptr<rt::half_bits>(dst), n);
    }
    return reported(index, bad);
  });
}

}  // namespace

PyMethodDef kEmulationMethods[] = {
    {"saturate_half", unary<rt::saturate_half>, METH_VARARGS,
     "saturate_half(src_fp16_addr, dst_fp16_addr, n, device=0) -> bool: a copy with NaN stored "
     "as +0 and inf as +-65504; True (and the device float status raised) if there were any"},
    {"add_half", binary<rt::add_half>, METH_VARARGS,
     "add_half(a_fp16_addr, b_fp16_addr, dst_fp16_addr, n, device=0) -> bool: the fp32 sum, "
     "stored saturating; True (and the status raised) for NaN or overflow"},
    {"relu_half", unary<rt::relu_half>, METH_VARARGS,
     "relu_half(src_fp16_addr, dst_fp16_addr, n, device=0) -> bool: torch's fp32 relu of the "
     "values, stored saturating; True (and the status raised) for NaN or +inf"},
    {"relu_backward_half", binary<rt::relu_backward_half>, METH_VARARGS,
     "relu_backward_half(grad_fp16_addr, self_fp16_addr, dst_fp16_addr, n, device=0) -> bool: "
     "threshold_backward(grad, self, 0), stored saturating; True (and the status raised) for a "
     "passed NaN or inf"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace apexnpu::py
