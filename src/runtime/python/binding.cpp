#include "python/binding.h"

namespace apexnpu::py {

int to_address(PyObject* obj, void* out) {
  if (!PyLong_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "expected an address (int, e.g. tensor.data_ptr()), got %s",
                 Py_TYPE(obj)->tp_name);
    return 0;
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(obj);
  if (PyErr_Occurred()) {
    PyErr_SetString(PyExc_ValueError, "an address must be a non-negative int that fits in 64 bits");
    return 0;
  }
  if (v == 0) {
    PyErr_SetString(PyExc_ValueError, "null address (0) passed where a buffer was expected");
    return 0;
  }
  *static_cast<std::uintptr_t*>(out) = static_cast<std::uintptr_t>(v);
  return 1;
}

int to_size(PyObject* obj, void* out) {
  if (!PyLong_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "expected a size (int), got %s", Py_TYPE(obj)->tp_name);
    return 0;
  }
  const Py_ssize_t v = PyLong_AsSsize_t(obj);
  if (PyErr_Occurred()) return 0;
  if (v < 0) {
    PyErr_Format(PyExc_ValueError, "a size must be >= 0, got %zd", v);
    return 0;
  }
  *static_cast<std::size_t*>(out) = static_cast<std::size_t>(v);
  return 1;
}

int add_type(PyObject* module, const char* name, PyTypeObject* type) {
  if (PyType_Ready(type) < 0) return -1;
  Py_INCREF(type);
  return add_object(module, name, reinterpret_cast<PyObject*>(type));
}

int add_object(PyObject* module, const char* name, PyObject* value) {
  if (value == nullptr) return -1;
  if (PyModule_AddObject(module, name, value) < 0) {  // steals only on success
    Py_DECREF(value);
    return -1;
  }
  return 0;
}

}  // namespace apexnpu::py
