#include "python/convert.h"

namespace apexnpu::py {

bool parse_segments(PyObject* seq, std::vector<rt::Segment>& out) {
  PyObject* fast = PySequence_Fast(seq, "segments must be a sequence of (offset, numel) pairs");
  if (fast == nullptr) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out.clear();
  out.reserve(static_cast<std::size_t>(n));
  bool ok = true;
  for (Py_ssize_t i = 0; i < n && ok; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    std::size_t offset = 0, numel = 0;
    if (!PyTuple_Check(item) && !PyList_Check(item)) {
      PyErr_Format(PyExc_TypeError, "segments[%zd] must be an (offset, numel) pair", i);
      ok = false;
    } else if (PySequence_Size(item) != 2) {
      PyErr_Format(PyExc_ValueError, "segments[%zd] must have 2 items (offset, numel)", i);
      ok = false;
    } else {
      PyObject* o = PySequence_GetItem(item, 0);
      PyObject* c = PySequence_GetItem(item, 1);
      ok = o != nullptr && c != nullptr && to_size(o, &offset) && to_size(c, &numel);
      Py_XDECREF(o);
      Py_XDECREF(c);
      if (ok) out.push_back({offset, numel});
    }
  }
  Py_DECREF(fast);
  return ok;
}

bool parse_sizes(PyObject* seq, const char* what, std::vector<std::size_t>& out) {
  PyObject* fast = PySequence_Fast(seq, what);
  if (fast == nullptr) return false;
  out.clear();
  bool ok = true;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && ok; ++i) {
    std::size_t v = 0;
    ok = to_size(PySequence_Fast_GET_ITEM(fast, i), &v);
    if (ok) out.push_back(v);
  }
  Py_DECREF(fast);
  return ok;
}

bool parse_dtype(int code, rt::DType& out) {
  if (code < 0 || code > static_cast<int>(rt::DType::bool8)) {
    PyErr_Format(PyExc_ValueError, "unknown dtype code %d (use DTYPE_FLOAT32 or DTYPE_FLOAT16)", code);
    return false;
  }
  out = static_cast<rt::DType>(code);
  return true;
}

bool as_double(PyObject* v, const char* what, double& out) {
  const double d = PyFloat_AsDouble(v);
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be a number, got %s", what, Py_TYPE(v)->tp_name);
    return false;
  }
  out = d;
  return true;
}

bool as_bool(PyObject* v, const char* what, bool& out) {
  const int b = PyObject_IsTrue(v);
  if (b < 0) {
    PyErr_Format(PyExc_TypeError, "%s must be a bool", what);
    return false;
  }
  out = b != 0;
  return true;
}

}  // namespace apexnpu::py
