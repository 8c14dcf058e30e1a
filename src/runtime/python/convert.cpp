#include "python/convert.h"

#include <functional>

namespace apexnpu::py {

bool for_each_item(PyObject* seq, const char* what, const std::function<bool(Py_ssize_t, PyObject*)>& fn) {
  PyObject* list = PySequence_List(seq);  // any iterable, as PySequence_Fast took
  if (list == nullptr) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, what);
    return false;
  }
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PyList_Size(list); ++i) ok = fn(i, PyList_GetItem(list, i));
  Py_DECREF(list);
  return ok;
}

bool parse_segments(PyObject* seq, std::vector<rt::Segment>& out) {
  out.clear();
  return for_each_item(
      seq, "segments must be a sequence of (offset, numel) pairs", [&](Py_ssize_t i, PyObject* item) {
        std::size_t offset = 0, numel = 0;
        if (!PyTuple_Check(item) && !PyList_Check(item)) {
          PyErr_Format(PyExc_TypeError, "segments[%zd] must be an (offset, numel) pair", i);
          return false;
        }
        if (PySequence_Size(item) != 2) {
          PyErr_Format(PyExc_ValueError, "segments[%zd] must have 2 items (offset, numel)", i);
          return false;
        }
        PyObject* o = PySequence_GetItem(item, 0);
        PyObject* c = PySequence_GetItem(item, 1);
        const bool ok = o != nullptr && c != nullptr && to_size(o, &offset) && to_size(c, &numel);
        Py_XDECREF(o);
        Py_XDECREF(c);
        if (ok) out.push_back({offset, numel});
        return ok;
      });
}

bool parse_sizes(PyObject* seq, const char* what, std::vector<std::size_t>& out) {
  out.clear();
  return for_each_item(seq, what, [&](Py_ssize_t, PyObject* item) {
    std::size_t v = 0;
    if (!to_size(item, &v)) return false;
    out.push_back(v);
    return true;
  });
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
    PyErr_Format(PyExc_TypeError, "%s must be a number, got %s", what, type_name(v).c_str());
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
