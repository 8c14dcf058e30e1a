// The emulated NPU's fp16 operations done in one runtime pass (backend/half_ops.h), and a 910B's
// bf16 conversions and operations (exec/convert_bf16.h, backend/bf16_ops.h): the fast path of
// apex.npu's emulation calls them where they give the general path's bits. Each raises the
// device's float status when something was saturated, as float_to_half does.
#include <cmath>
#include <limits>
#include <vector>

#include "backend/bf16_ops.h"
#include "backend/device.h"
#include "backend/float_ops.h"
#include "backend/half_broadcast.h"
#include "backend/half_max_pool.h"
#include "backend/half_ops.h"
#include "exec/convert_bf16.h"
#include "exec/error.h"
#include "python/convert.h"
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
  if (!PyArg_ParseTuple(args, "O&O&O&|i", to_address, &src, to_address, &dst, to_size, &n, &index))
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
  if (!PyArg_ParseTuple(args, "O&O&O&O&|i", to_address, &a, to_address, &b, to_address, &dst, to_size, &n,
                        &index))
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

using WithScalar = bool (*)(const rt::half_bits*, rt::half_bits*, std::size_t, float);

// The scalar arrives as a Python float (a double); only values a float holds, or the nearest
// float to them, are taken, as torch converts its double scalars for fp32 kernels.
template <WithScalar op>
PyObject* with_scalar(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  double scalar = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&d|i", to_address, &src, to_address, &dst, to_size, &n, &scalar, &index))
    return nullptr;
  return guarded([&] {
    if (std::isfinite(scalar) && std::fabs(scalar) > std::numeric_limits<float>::max())
      throw rt::ArgumentError(rt::concat("the scalar ", scalar, " is beyond the float range"));
    bool bad = false;
    {
      GilRelease unlocked;
      bad = op(ptr<const rt::half_bits>(src), ptr<rt::half_bits>(dst), n, static_cast<float>(scalar));
    }
    return reported(index, bad);
  });
}

PyObject* masked_fill_half(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, mask = 0, dst = 0;
  std::size_t n = 0, period = 0;
  unsigned long fill = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&k|i:masked_fill_half", to_address, &src, to_address, &mask,
                        to_address, &dst, to_size, &n, to_size, &period, &fill, &index))
    return nullptr;
  return guarded([&] {
    if (period == 0 || n % period != 0)
      throw rt::ArgumentError(rt::concat("masked_fill_half: n (", n,
                                         ") must be a positive multiple of the mask's ", "period (", period,
                                         ")"));
    if (fill > 0xFFFFu)
      throw rt::ArgumentError(rt::concat("masked_fill_half: fill ", fill, " is not a 16-bit pattern"));
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::masked_fill_half(ptr<const rt::half_bits>(src), ptr<const std::uint8_t>(mask), period,
                                 ptr<rt::half_bits>(dst), n, static_cast<rt::half_bits>(fill));
    }
    return reported(index, bad);
  });
}

// a OP b with b read through (sizes, strides): backend/half_broadcast.h.
template <rt::HalfBinaryOp op>
PyObject* binary_broadcast(PyObject*, PyObject* args) {
  std::uintptr_t a = 0, b = 0, dst = 0;
  std::size_t n = 0;
  PyObject* sizes_arg = nullptr;
  PyObject* strides_arg = nullptr;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&O&OO|i", to_address, &a, to_address, &b, to_address, &dst, to_size, &n,
                        &sizes_arg, &strides_arg, &index))
    return nullptr;
  std::vector<std::size_t> sizes, strides;
  if (!parse_sizes(sizes_arg, "sizes must be a sequence of non-negative ints", sizes) ||
      !parse_sizes(strides_arg, "strides must be a sequence of non-negative ints", strides))
    return nullptr;
  return guarded([&] {
    if (sizes.size() != strides.size())
      throw rt::ArgumentError(rt::concat("a broadcast layout has one stride per size: ", sizes.size(),
                                         " sizes, ", strides.size(), " strides"));
    std::vector<rt::BroadcastDim> dims(sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) dims[k] = {sizes[k], strides[k]};
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::binary_half_broadcast(op, ptr<const rt::half_bits>(a), ptr<const rt::half_bits>(b), dims,
                                      ptr<rt::half_bits>(dst), n);
    }
    return reported(index, bad);
  });
}

PyObject* max_pool2d_half(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0, indices = 0;
  long long planes = 0;
  long long v[12] = {};
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&LLLLLLLLLLLLL|i:max_pool2d_half", to_address, &src, to_address, &dst,
                        to_address, &indices, &planes, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
                        &v[8], &v[9], &v[10], &v[11], &index))
    return nullptr;
  return guarded([&] {
    const rt::PoolGeometry g{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]};
    if (planes < 0 || g.in_h < 1 || g.in_w < 1 || g.out_h < 1 || g.out_w < 1 || g.kernel_h < 1 ||
        g.kernel_w < 1 || g.stride_h < 1 || g.stride_w < 1 || g.pad_h < 0 || g.pad_w < 0 ||
        g.dilation_h < 1 || g.dilation_w < 1)
      throw rt::ArgumentError(
          "max_pool2d_half: sizes, kernel, stride and dilation must be "
          "positive, padding non-negative");
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::max_pool2d_half(ptr<const rt::half_bits>(src), ptr<rt::half_bits>(dst),
                                ptr<std::int64_t>(indices), planes, g);
    }
    return reported(index, bad);
  });
}

PyObject* has_nonfinite_float(PyObject*, PyObject* args) {
  std::uintptr_t src = 0;
  std::size_t n = 0;
  if (!PyArg_ParseTuple(args, "O&O&:has_nonfinite_float", to_address, &src, to_size, &n)) return nullptr;
  return guarded([&] {
    bool found = false;
    {
      GilRelease unlocked;
      found = rt::has_nonfinite_float(ptr<const float>(src), n);
    }
    return PyBool_FromLong(found);
  });
}

PyObject* saturate_float(PyObject*, PyObject* args) {
  std::uintptr_t dst = 0;
  std::size_t n = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&|i:saturate_float", to_address, &dst, to_size, &n, &index)) return nullptr;
  return guarded([&] {
    bool changed = false;
    {
      GilRelease unlocked;
      changed = rt::saturate_float(ptr<float>(dst), n);
    }
    return reported(index, changed);
  });
}

// The chip's bf16 store from Python's `saturate` flag (0: INF/NAN mode, 1: saturation mode).
rt::Bf16Mode bf16_mode(int saturate) { return saturate ? rt::Bf16Mode::saturation : rt::Bf16Mode::inf_nan; }

PyObject* bf16_to_float(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&:bf16_to_float", to_address, &src, to_address, &dst, to_size, &n))
    return nullptr;
  return guarded([&] {
    {
      GilRelease unlocked;
      rt::convert_bf16_to_float(ptr<const rt::bf16_bits>(src), ptr<float>(dst), n);
    }
    Py_RETURN_NONE;
  });
}

PyObject* float_to_bf16(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  int saturate = 0, index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&p|i:float_to_bf16", to_address, &src, to_address, &dst, to_size, &n,
                        &saturate, &index))
    return nullptr;
  return guarded([&] {
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::convert_float_to_bf16(ptr<const float>(src), ptr<rt::bf16_bits>(dst), n, bf16_mode(saturate));
    }
    return reported(index, bad);
  });
}

PyObject* copy_bf16(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  int saturate = 0, index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&p|i:copy_bf16", to_address, &src, to_address, &dst, to_size, &n,
                        &saturate, &index))
    return nullptr;
  return guarded([&] {
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::copy_bf16(ptr<const rt::bf16_bits>(src), ptr<rt::bf16_bits>(dst), n, bf16_mode(saturate));
    }
    return reported(index, bad);
  });
}

PyObject* add_bf16(PyObject*, PyObject* args) {
  std::uintptr_t a = 0, b = 0, dst = 0;
  std::size_t n = 0;
  int saturate = 0, index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&O&p|i:add_bf16", to_address, &a, to_address, &b, to_address, &dst,
                        to_size, &n, &saturate, &index))
    return nullptr;
  return guarded([&] {
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::add_bf16(ptr<const rt::bf16_bits>(a), ptr<const rt::bf16_bits>(b), ptr<rt::bf16_bits>(dst), n,
                         bf16_mode(saturate));
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
    {"multiply_half", with_scalar<rt::multiply_half>, METH_VARARGS,
     "multiply_half(src_fp16_addr, dst_fp16_addr, n, factor, device=0) -> bool: the fp32 "
     "product x * factor (factor rounded to float), stored saturating; True (and the status "
     "raised) for NaN or overflow"},
    {"divide_half", with_scalar<rt::divide_half>, METH_VARARGS,
     "divide_half(src_fp16_addr, dst_fp16_addr, n, divisor, device=0) -> bool: the fp32 "
     "quotient x / divisor (divisor rounded to float), stored saturating; True (and the status "
     "raised) for NaN or overflow"},
    {"relu_half", unary<rt::relu_half>, METH_VARARGS,
     "relu_half(src_fp16_addr, dst_fp16_addr, n, device=0) -> bool: torch's fp32 relu of the "
     "values, stored saturating; True (and the status raised) for NaN or +inf"},
    {"relu_backward_half", binary<rt::relu_backward_half>, METH_VARARGS,
     "relu_backward_half(grad_fp16_addr, self_fp16_addr, dst_fp16_addr, n, device=0) -> bool: "
     "threshold_backward(grad, self, 0), stored saturating; True (and the status raised) for a "
     "passed NaN or inf"},
    {"masked_fill_half", masked_fill_half, METH_VARARGS,
     "masked_fill_half(src_fp16_addr, mask_bool_addr, dst_fp16_addr, n, period, fill_bits, "
     "device=0) -> bool: fill_bits where mask[i % period] is set, else the value stored "
     "saturating; True (and the status raised) for an unselected NaN or inf"},
    {"add_half_broadcast", binary_broadcast<rt::HalfBinaryOp::add>, METH_VARARGS,
     "add_half_broadcast(a_fp16_addr, b_fp16_addr, dst_fp16_addr, n, sizes, b_strides, device=0) "
     "-> bool: the fp32 sum a + b, stored saturating, with a read as n elements in a row and b "
     "through the dimensions (sizes, b_strides in elements, 0 where b is broadcast; the sizes "
     "multiply to n); True (and the status raised) for NaN or overflow"},
    {"multiply_half_broadcast", binary_broadcast<rt::HalfBinaryOp::multiply>, METH_VARARGS,
     "multiply_half_broadcast(a_fp16_addr, b_fp16_addr, dst_fp16_addr, n, sizes, b_strides, "
     "device=0) -> bool: the fp32 product a * b, stored saturating, a and b read as "
     "add_half_broadcast reads them; True (and the status raised) for NaN or overflow"},
    {"max_pool2d_half", max_pool2d_half, METH_VARARGS,
     "max_pool2d_half(src_fp16_addr, dst_fp16_addr, indices_int64_addr, planes, in_h, in_w, "
     "out_h, out_w, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, "
     "dilation_w, device=0) -> bool: torch's contiguous max_pool2d_with_indices on the exact "
     "values, stored saturating; True (and the status raised) for a stored NaN or inf"},
    {"has_nonfinite_float", has_nonfinite_float, METH_VARARGS,
     "has_nonfinite_float(src_fp32_addr, n) -> bool: whether the values hold an inf or a NaN "
     "(nothing is written)"},
    {"saturate_float", saturate_float, METH_VARARGS,
     "saturate_float(dst_fp32_addr, n, device=0) -> bool: in place, inf stored as +-FLT_MAX and "
     "NaN as +0; True (and the device float status raised) if there were any"},
    {"bf16_to_float", bf16_to_float, METH_VARARGS,
     "bf16_to_float(src_bf16_addr, dst_fp32_addr, n): the exact fp32 values"},
    {"float_to_bf16", float_to_bf16, METH_VARARGS,
     "float_to_bf16(src_fp32_addr, dst_bf16_addr, n, saturate, device=0) -> bool: rounded to "
     "nearest even; saturate false (INF/NAN mode): overflow gives inf, every NaN is stored as "
     "0x7FC0; saturate true: NaN stored as +0 and beyond the range as "
     "+-0x7F7F, True (and the device float status raised) if there were any"},
    {"copy_bf16", copy_bf16, METH_VARARGS,
     "copy_bf16(src_bf16_addr, dst_bf16_addr, n, saturate, device=0) -> bool: the values "
     "widened and stored again as float_to_bf16 stores them"},
    {"add_bf16", add_bf16, METH_VARARGS,
     "add_bf16(a_bf16_addr, b_bf16_addr, dst_bf16_addr, n, saturate, device=0) -> bool: the "
     "fp32 sum, stored as float_to_bf16 stores it"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace apexnpu::py
