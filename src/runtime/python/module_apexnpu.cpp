// _apexnpu (apex._apexnpu, and torch_npu._apexnpu in the emulator's wheel): the bundled runtime
// for Python, over raw addresses (tensor.data_ptr()), element counts and dtype codes. The Python
// API is documented in API.md beside this file.
#include <vector>

#include "python/methods.h"

namespace {

std::vector<PyMethodDef>& all_methods() {
  static std::vector<PyMethodDef> methods = [] {
    std::vector<PyMethodDef> v;
    for (PyMethodDef* table : {apexnpu::py::kCoreMethods, apexnpu::py::kAmpMethods,
                               apexnpu::py::kOptimMethods, apexnpu::py::kEmulationMethods})
      for (PyMethodDef* m = table; m->ml_name != nullptr; ++m) v.push_back(*m);
    v.push_back({nullptr, nullptr, 0, nullptr});
    return v;
  }();
  return methods;
}

PyModuleDef module_def = {
    // The last component only: the import system then names it after the package it is in.
    PyModuleDef_HEAD_INIT,
    "_apexnpu",
    "The apexnpu runtime: emulated NPU float status, fp16 conversion, loss scaling, gradient "
    "norms and fused optimizers over raw buffer addresses. See API.md.",
    -1,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr};

}  // namespace

APEXNPU_PYINIT PyInit__apexnpu() {
  module_def.m_methods = all_methods().data();
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  if (apexnpu::py::add_core_constants(m) < 0 || apexnpu::py::add_optim_constants(m) < 0 ||
      apexnpu::py::add_amp_types(m) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
