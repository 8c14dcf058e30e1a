// change_data_ptr: the original Ascend Apex extension module of that name, for compatibility.
// change_data_ptr(dst, src, offset) re-points torch tensor `dst` into `src`'s storage, `offset`
// elements past src's first element, keeping dst's sizes and strides. It works through the
// tensors' own methods (set_, storage_offset, numel, dtype), so it needs no torch headers and
// serves every torch version; and because dst then shares src's storage object, the combined
// buffer stays alive as long as any re-pointed tensor does (the original kept a raw pointer).
#ifndef Py_LIMITED_API
#error \
    "change_data_ptr is compiled for the stable ABI: build.json's binding.stable_abi defines Py_LIMITED_API"
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>

#define APEXNPU_PYINIT extern "C" __attribute__((visibility("default"))) PyObject*

namespace {

PyObject* g_error = nullptr;  // change_data_ptr.ChangeDataPtrError(RuntimeError, ValueError)

// A new reference to obj.name(*args), or nullptr with the exception set.
PyObject* call(PyObject* obj, const char* name) { return PyObject_CallMethod(obj, name, nullptr); }

bool call_ssize(PyObject* obj, const char* name, Py_ssize_t& out) {
  PyObject* r = call(obj, name);
  if (r == nullptr) return false;
  out = PyLong_AsSsize_t(r);
  Py_DECREF(r);
  return !(out == -1 && PyErr_Occurred());
}

// "torch.float16" etc.; empty with an exception set on failure.
std::string dtype_of(PyObject* tensor) {
  PyObject* dtype = PyObject_GetAttrString(tensor, "dtype");
  if (dtype == nullptr) return {};
  PyObject* s = PyObject_Str(dtype);
  Py_DECREF(dtype);
  if (s == nullptr) return {};
  PyObject* bytes = PyUnicode_AsUTF8String(s);
  Py_DECREF(s);
  if (bytes == nullptr) return {};
  std::string out(PyBytes_AsString(bytes), static_cast<std::size_t>(PyBytes_Size(bytes)));
  Py_DECREF(bytes);
  return out;
}

PyObject* change_data_ptr(PyObject*, PyObject* args) {
  PyObject *dst = nullptr, *src = nullptr;
  Py_ssize_t offset = 0;
  if (!PyArg_ParseTuple(args, "OOn:change_data_ptr", &dst, &src, &offset)) return nullptr;
  if (offset < 0) {
    PyErr_Format(g_error, "change_data_ptr: offset must be >= 0, got %zd", offset);
    return nullptr;
  }
  const std::string dst_dtype = dtype_of(dst);
  if (dst_dtype.empty()) return nullptr;
  const std::string src_dtype = dtype_of(src);
  if (src_dtype.empty()) return nullptr;
  if (dst_dtype != src_dtype) {
    PyErr_Format(g_error, "change_data_ptr: dst is %s but src is %s; both must have the same dtype",
                 dst_dtype.c_str(), src_dtype.c_str());
    return nullptr;
  }
  if (dst_dtype != "torch.float16" && dst_dtype != "torch.float32") {
    PyErr_Format(g_error,
                 "change_data_ptr: dtype %s is not supported (only torch.float16 and "
                 "torch.float32)",
                 dst_dtype.c_str());
    return nullptr;
  }
  Py_ssize_t src_numel = 0, dst_numel = 0, src_offset = 0, src_ptr = 0;
  if (!call_ssize(src, "numel", src_numel) || !call_ssize(dst, "numel", dst_numel) ||
      !call_ssize(src, "storage_offset", src_offset) || !call_ssize(src, "data_ptr", src_ptr))
    return nullptr;
  if (src_ptr == 0) {
    PyErr_SetString(g_error, "change_data_ptr: src has no storage (null data pointer)");
    return nullptr;
  }
  if (offset > src_numel || dst_numel > src_numel - offset) {
    PyErr_Format(g_error,
                 "change_data_ptr: dst (%zd elements) at offset %zd would extend past "
                 "the end of src (%zd elements)",
                 dst_numel, offset, src_numel);
    return nullptr;
  }
  // torch >= 2.0 has untyped_storage(); 1.x's storage() is accepted by set_ there.
  const char* storage_method = PyObject_HasAttrString(src, "untyped_storage") ? "untyped_storage" : "storage";
  PyObject* storage = call(src, storage_method);
  if (storage == nullptr) return nullptr;
  PyObject* size = call(dst, "size");
  PyObject* stride = size != nullptr ? call(dst, "stride") : nullptr;
  PyObject* result = nullptr;
  if (stride != nullptr)
    result = PyObject_CallMethod(dst, "set_", "OnOO", storage, src_offset + offset, size, stride);
  Py_DECREF(storage);
  Py_XDECREF(size);
  Py_XDECREF(stride);
  if (result == nullptr) return nullptr;
  Py_DECREF(result);
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"change_data_ptr", change_data_ptr, METH_VARARGS,
     "change_data_ptr(dst, src, offset): re-point tensor dst into src's storage at element "
     "`offset` (same fp16/fp32 dtype; dst must fit inside src). Raises ChangeDataPtrError "
     "(a RuntimeError and ValueError)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                          "change_data_ptr",
                          "Re-point a tensor into another tensor's storage (Ascend Apex "
                          "compatibility module).",
                          -1,
                          methods,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr};

}  // namespace

APEXNPU_PYINIT PyInit_change_data_ptr() {
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  PyObject* bases = PyTuple_Pack(2, PyExc_RuntimeError, PyExc_ValueError);
  if (bases == nullptr) {
    Py_DECREF(m);
    return nullptr;
  }
  g_error = PyErr_NewException("change_data_ptr.ChangeDataPtrError", bases, nullptr);
  Py_DECREF(bases);
  if (g_error == nullptr) {
    Py_DECREF(m);
    return nullptr;
  }
  Py_INCREF(g_error);
  if (PyModule_AddObject(m, "ChangeDataPtrError", g_error) < 0) {
    Py_DECREF(g_error);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
