// Runtime identity, ISA dispatch, the float status and fp16 <-> fp32 conversion.
#include "backend/device.h"
#include "backend/dtype.h"
#include "exec/convert.h"
#include "exec/isa.h"
#include "python/methods.h"
#include "version.h"

namespace apexnpu::py {
namespace {

PyObject* runtime_version(PyObject*, PyObject*) { return PyUnicode_FromString(rt::runtime_version()); }

PyObject* isa_levels(PyObject*, PyObject*) {
  PyObject* t = PyTuple_New(rt::kIsaLevelCount);
  if (t == nullptr) return nullptr;
  for (int i = 0; i < rt::kIsaLevelCount; ++i) {
    PyObject* name = PyUnicode_FromString(rt::isa_name(static_cast<rt::IsaLevel>(i)));
    if (name == nullptr || PyTuple_SetItem(t, i, name) < 0) {  // SetItem steals the name
      Py_DECREF(t);
      return nullptr;
    }
  }
  return t;
}

PyObject* supported_isa_levels(PyObject*, PyObject*) {
  PyObject* l = PyList_New(0);
  if (l == nullptr) return nullptr;
  for (int i = 0; i < rt::kIsaLevelCount; ++i) {
    const auto level = static_cast<rt::IsaLevel>(i);
    if (!rt::isa_supported(level)) continue;
    PyObject* s = PyUnicode_FromString(rt::isa_name(level));
    if (s == nullptr || PyList_Append(l, s) < 0) {
      Py_XDECREF(s);
      Py_DECREF(l);
      return nullptr;
    }
    Py_DECREF(s);
  }
  return l;
}

PyObject* active_isa(PyObject*, PyObject*) {
  return guarded([] { return PyUnicode_FromString(rt::isa_name(rt::active_isa())); });
}

PyObject* set_isa(PyObject*, PyObject* args) {
  const char* name = nullptr;
  if (!PyArg_ParseTuple(args, "s:set_isa", &name)) return nullptr;
  return guarded([&] {
    rt::set_isa_level(rt::parse_isa(name));
    Py_RETURN_NONE;
  });
}

PyObject* reset_isa(PyObject*, PyObject*) {
  return guarded([] {
    rt::reset_isa_level();
    Py_RETURN_NONE;
  });
}

PyObject* device_count(PyObject*, PyObject*) { return PyLong_FromLong(rt::device_count()); }

PyObject* get_float_status(PyObject*, PyObject* args) {
  int index = 0;
  if (!PyArg_ParseTuple(args, "|i:get_float_status", &index)) return nullptr;
  return guarded([&] { return PyBool_FromLong(rt::device(index).float_status().get()); });
}

PyObject* clear_float_status(PyObject*, PyObject* args) {
  int index = 0;
  if (!PyArg_ParseTuple(args, "|i:clear_float_status", &index)) return nullptr;
  return guarded([&] { return PyBool_FromLong(rt::device(index).float_status().clear()); });
}

PyObject* raise_float_status(PyObject*, PyObject* args) {
  int index = 0;
  if (!PyArg_ParseTuple(args, "|i:raise_float_status", &index)) return nullptr;
  return guarded([&] {
    rt::device(index).float_status().raise();
    Py_RETURN_NONE;
  });
}

PyObject* half_to_float(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&:half_to_float", to_address, &src, to_address, &dst, to_size, &n))
    return nullptr;
  return guarded([&] {
    {
      GilRelease unlocked;
      rt::convert_half_to_float(ptr<const rt::half_bits>(src), ptr<float>(dst), n);
    }
    Py_RETURN_NONE;
  });
}

PyObject* float_to_half(PyObject*, PyObject* args) {
  std::uintptr_t src = 0, dst = 0;
  std::size_t n = 0;
  int index = 0;
  if (!PyArg_ParseTuple(args, "O&O&O&|i:float_to_half", to_address, &src, to_address, &dst, to_size, &n,
                        &index))
    return nullptr;
  return guarded([&] {
    bool overflow = false;
    {
      GilRelease unlocked;
      overflow = rt::convert_float_to_half(ptr<const float>(src), ptr<rt::half_bits>(dst), n);
    }
    if (overflow) rt::device(index).float_status().raise();
    return PyBool_FromLong(overflow);
  });
}

}  // namespace

PyMethodDef kCoreMethods[] = {
    {"runtime_version", runtime_version, METH_NOARGS, "runtime_version() -> str"},
    {"isa_levels", isa_levels, METH_NOARGS, "isa_levels() -> tuple of the ISA levels compiled in"},
    {"supported_isa_levels", supported_isa_levels, METH_NOARGS,
     "supported_isa_levels() -> list of the levels this CPU can run"},
    {"active_isa", active_isa, METH_NOARGS, "active_isa() -> str: the level kernels dispatch to"},
    {"set_isa", set_isa, METH_VARARGS, "set_isa(name): force 'scalar', 'avx2' or 'avx512'"},
    {"reset_isa", reset_isa, METH_NOARGS, "reset_isa(): back to $APEXNPU_ISA or the best level"},
    {"device_count", device_count, METH_NOARGS, "device_count() -> int"},
    {"get_float_status", get_float_status, METH_VARARGS,
     "get_float_status(device=0) -> bool: the overflow flag"},
    {"clear_float_status", clear_float_status, METH_VARARGS,
     "clear_float_status(device=0) -> bool: clears the flag, returns whether it was raised"},
    {"raise_float_status", raise_float_status, METH_VARARGS, "raise_float_status(device=0)"},
    {"half_to_float", half_to_float, METH_VARARGS, "half_to_float(src_fp16_addr, dst_fp32_addr, n)"},
    {"float_to_half", float_to_half, METH_VARARGS,
     "float_to_half(src_fp32_addr, dst_fp16_addr, n, device=0) -> bool: saturates to +-65504; "
     "returns True (and raises the device float status) when a value saturated or was NaN"},
    {nullptr, nullptr, 0, nullptr}};

int add_core_constants(PyObject* m) {
  struct Code {
    const char* name;
    rt::DType dtype;
  };
  const Code codes[] = {{"DTYPE_FLOAT32", rt::DType::float32},
                        {"DTYPE_FLOAT16", rt::DType::float16},
                        {"DTYPE_BFLOAT16", rt::DType::bfloat16},
                        {"DTYPE_FLOAT64", rt::DType::float64}};
  for (const auto& c : codes)
    if (PyModule_AddIntConstant(m, c.name, static_cast<long>(c.dtype)) < 0) return -1;
  return PyModule_AddStringConstant(m, "RUNTIME_VERSION", rt::runtime_version());
}

}  // namespace apexnpu::py
