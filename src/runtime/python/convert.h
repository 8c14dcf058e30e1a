#pragma once
// Python values -> runtime values for the binding: segment tables, dtypes, option dicts.
#include <functional>
#include <string>
#include <vector>

#include "backend/dtype.h"
#include "python/binding.h"
#include "tensor/segment_table.h"

namespace apexnpu::py {

// A sequence of (offset, numel) pairs (elements) -> SegmentTable. Returns false with a Python
// exception set on bad input; the runtime's own checks (overlap) throw ArgumentError.
bool parse_segments(PyObject* seq, std::vector<rt::Segment>& out);
// A dtype code (DTYPE_FLOAT32 / DTYPE_FLOAT16 ...) -> DType; false with ValueError otherwise.
bool parse_dtype(int code, rt::DType& out);
// A Python float/int/bool -> double / bool, false with TypeError naming `what`.
bool as_double(PyObject* v, const char* what, double& out);
bool as_bool(PyObject* v, const char* what, bool& out);
// fn(index, item) for each item of an iterable (a borrowed item); false with an exception set
// when `seq` is not iterable (TypeError `what`) or fn returns false.
bool for_each_item(PyObject* seq, const char* what, const std::function<bool(Py_ssize_t, PyObject*)>& fn);
// A new list of what to_item (returning a new reference, or null with an exception set) makes of
// each element of v.
template <typename Container, typename ToItem>
PyObject* to_list(const Container& v, ToItem to_item) {
  PyObject* l = PyList_New(static_cast<Py_ssize_t>(v.size()));
  if (l == nullptr) return nullptr;
  Py_ssize_t i = 0;
  for (const auto& element : v) {
    PyObject* item = to_item(element);
    if (item == nullptr || PyList_SetItem(l, i++, item) < 0) {  // SetItem steals the item
      Py_DECREF(l);
      return nullptr;
    }
  }
  return l;
}

// A sequence of non-negative ints -> sizes.
bool parse_sizes(PyObject* seq, const char* what, std::vector<std::size_t>& out);

}  // namespace apexnpu::py
