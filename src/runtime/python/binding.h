#pragma once
// Helpers shared by the CPython modules: argument converters for raw addresses, runtime
// exceptions -> Python exceptions, releasing the GIL around kernels, and the types and strings
// of the stable ABI. Plain C API only (no pybind11, no torch headers), so one binary serves
// every torch version; and only the limited API (Py_LIMITED_API, which build.json's
// binding.stable_abi defines), so one compiled binding serves every CPython from 3.7 on.
#ifndef Py_LIMITED_API
#error "the binding is compiled for the stable ABI: build.json's binding.stable_abi defines Py_LIMITED_API"
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>

#include "exec/error.h"

// PyMODINIT_FUNC does not say "visible" before Python 3.9; we build with -fvisibility=hidden.
#define APEXNPU_PYINIT extern "C" __attribute__((visibility("default"))) PyObject*

namespace apexnpu::py {

// "O&" converter: a Python int -> a non-null address (uintptr_t). 0 and negatives are refused.
int to_address(PyObject* obj, void* out);
// "O&" converter: a Python int -> a non-negative size (std::size_t).
int to_size(PyObject* obj, void* out);

// Creates the type of `spec` and adds it to `module` as `name`; -1 with an exception set on
// failure.
int add_type(PyObject* module, const char* name, PyType_Spec* spec);
// A new instance of a type made by add_type (its fields zeroed), or null with MemoryError.
PyObject* new_instance(PyTypeObject* type);
// The tp_dealloc end of such an instance, once its fields are destroyed.
void free_instance(PyObject* self);

// The name of obj's type, for messages.
std::string type_name(PyObject* obj);
// A str's UTF-8 text; false with an exception set when obj is not a str.
bool utf8(PyObject* obj, std::string& out);
// Adds `value` (a new reference, stolen; null passes an earlier failure on) as `name`; -1 with
// an exception set on failure.
int add_object(PyObject* module, const char* name, PyObject* value);

// Releases the GIL for its lifetime (kernels never touch Python objects).
class GilRelease {
 public:
  GilRelease() : state_(PyEval_SaveThread()) {}
  ~GilRelease() { PyEval_RestoreThread(state_); }
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* state_;
};

// Runs `body` (which returns a new reference or nullptr with an exception set) and maps C++
// exceptions: ArgumentError -> ValueError, bad_alloc -> MemoryError, others -> RuntimeError.
template <typename Body>
PyObject* guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const rt::ArgumentError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception in apex._apexnpu");
  }
  return nullptr;
}

template <typename T>
T* ptr(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

}  // namespace apexnpu::py
