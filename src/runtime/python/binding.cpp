#include "python/binding.h"

namespace apexnpu::py {

int to_address(PyObject* obj, void* out) {
  if (!PyLong_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "expected an address (int, e.g. tensor.data_ptr()), got %s",
                 type_name(obj).c_str());
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
    PyErr_Format(PyExc_TypeError, "expected a size (int), got %s", type_name(obj).c_str());
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

int add_type(PyObject* module, const char* name, PyType_Spec* spec) {
  return add_object(module, name, PyType_FromSpec(spec));
}

PyObject* new_instance(PyTypeObject* type) {
  // GenericAlloc zeroes the object and, for a heap type, takes a reference to the type (every
  // CPython), which free_instance gives back.
  return PyType_GenericAlloc(type, 0);
}

void free_instance(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* free_memory = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free_memory(self);
  Py_DECREF(type);
}

std::string type_name(PyObject* obj) {
  std::string name = "?";
  PyObject* type_name_str = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__name__");
  if (type_name_str == nullptr || !utf8(type_name_str, name)) PyErr_Clear();
  Py_XDECREF(type_name_str);
  return name;
}

bool utf8(PyObject* obj, std::string& out) {
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "expected a str, got %s", type_name(obj).c_str());
    return false;
  }
  PyObject* bytes = PyUnicode_AsUTF8String(obj);
  if (bytes == nullptr) return false;
  out.assign(PyBytes_AsString(bytes), static_cast<std::size_t>(PyBytes_Size(bytes)));
  Py_DECREF(bytes);
  return true;
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
