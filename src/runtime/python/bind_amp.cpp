// Loss scaling: fused unscale with overflow detection, gradient norms and clipping over
// segment tables, and the loss scaler's update rule as a small type.
#include <memory>
#include <vector>

#include "amp/grad_norm.h"
#include "amp/loss_scaler.h"
#include "amp/unscale.h"
#include "python/convert.h"
#include "python/methods.h"

namespace apexnpu::py {
namespace {

PyObject* unscale(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"grads", "dtype", "numel", "inv_scale", "out", "device", nullptr};
  std::uintptr_t grads = 0;
  int dtype_code = 0, device_index = 0;
  std::size_t n = 0;
  double inv_scale = 0;
  PyObject* out_obj = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&iO&d|Oi:unscale", const_cast<char**>(names), to_address,
                                   &grads, &dtype_code, to_size, &n, &inv_scale, &out_obj, &device_index))
    return nullptr;
  rt::DType dtype;
  if (!parse_dtype(dtype_code, dtype)) return nullptr;
  std::uintptr_t out = 0;
  if (out_obj != nullptr && out_obj != Py_None && !(PyLong_Check(out_obj) && PyLong_AsLong(out_obj) == 0) &&
      !to_address(out_obj, &out))
    return nullptr;
  return guarded([&] {
    rt::Device& dev = rt::device(device_index);
    bool overflow = false;
    {
      GilRelease unlocked;
      overflow = rt::unscale(ptr<void>(grads), dtype, n, static_cast<float>(inv_scale),
                             out ? ptr<float>(out) : nullptr, dev);
    }
    return PyBool_FromLong(overflow);
  });
}

// One (address, dtype, segments) buffer description.
struct ParsedBuffer {
  std::uintptr_t address = 0;
  rt::DType dtype = rt::DType::float32;
  std::unique_ptr<rt::SegmentTable> table;
};

bool parse_buffer(PyObject* item, ParsedBuffer& out) {
  PyObject* segs = nullptr;
  int code = 0;
  if (!PyArg_ParseTuple(item, "O&iO:buffer (address, dtype, segments)", to_address, &out.address, &code,
                        &segs))
    return false;
  if (!parse_dtype(code, out.dtype)) return false;
  std::vector<rt::Segment> v;
  if (!parse_segments(segs, v)) return false;
  out.table = std::make_unique<rt::SegmentTable>(std::move(v));  // may throw ArgumentError
  return true;
}

PyObject* grad_norm(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"data", "dtype", "segments", "norm_type", "per_segment", "device", nullptr};
  std::uintptr_t data = 0;
  int code = 0, per_segment = 0, device_index = 0;
  PyObject* segs = nullptr;
  double norm_type = 2.0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&iO|dpi:grad_norm", const_cast<char**>(names), to_address,
                                   &data, &code, &segs, &norm_type, &per_segment, &device_index))
    return nullptr;
  rt::DType dtype;
  std::vector<rt::Segment> v;
  if (!parse_dtype(code, dtype) || !parse_segments(segs, v)) return nullptr;
  return guarded([&]() -> PyObject* {
    const rt::SegmentTable table(std::move(v));
    const rt::NormType type = rt::parse_norm_type(norm_type);
    std::vector<double> parts(per_segment ? table.size() : 0);
    rt::Device& dev = rt::device(device_index);
    double total = 0;
    {
      GilRelease unlocked;
      total = rt::grad_norm(rt::GradBuffer{ptr<void>(data), dtype, &table}, type,
                            per_segment ? parts.data() : nullptr, dev);
    }
    if (!per_segment) return PyFloat_FromDouble(total);
    PyObject* list = to_list(parts, [](double part) { return PyFloat_FromDouble(part); });
    if (list == nullptr) return nullptr;
    return Py_BuildValue("(dN)", total, list);
  });
}

PyObject* clip_grad_norm(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"buffers", "max_norm", "norm_type", "device", nullptr};
  PyObject* list = nullptr;
  double max_norm = 0, norm_type = 2.0;
  int device_index = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Od|di:clip_grad_norm", const_cast<char**>(names), &list,
                                   &max_norm, &norm_type, &device_index))
    return nullptr;
  return guarded([&]() -> PyObject* {
    std::vector<ParsedBuffer> parsed;
    if (!for_each_item(list, "buffers must be a list of (address, dtype, segments)",
                       [&](Py_ssize_t, PyObject* item) {
                         parsed.emplace_back();
                         return parse_buffer(item, parsed.back());
                       }))
      return nullptr;
    std::vector<rt::GradBuffer> buffers;
    for (const auto& p : parsed) buffers.push_back({ptr<void>(p.address), p.dtype, p.table.get()});
    rt::Device& dev = rt::device(device_index);
    double total = 0;
    {
      GilRelease unlocked;
      total = rt::clip_grad_norm(buffers, max_norm, norm_type, dev);
    }
    return PyFloat_FromDouble(total);
  });
}

PyObject* scale_segments(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"data", "dtype", "segments", "factor", "device", nullptr};
  std::uintptr_t data = 0;
  int code = 0, device_index = 0;
  PyObject* segs = nullptr;
  double factor = 1.0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&iOd|i:scale_segments", const_cast<char**>(names),
                                   to_address, &data, &code, &segs, &factor, &device_index))
    return nullptr;
  rt::DType dtype;
  std::vector<rt::Segment> v;
  if (!parse_dtype(code, dtype) || !parse_segments(segs, v)) return nullptr;
  return guarded([&] {
    const rt::SegmentTable table(std::move(v));
    rt::Device& dev = rt::device(device_index);
    bool bad = false;
    {
      GilRelease unlocked;
      bad = rt::scale_segments({ptr<void>(data), dtype, &table}, static_cast<float>(factor), dev);
    }
    return PyBool_FromLong(bad);
  });
}

// ---- LossScaler ----

struct ScalerObject {
  PyObject_HEAD std::unique_ptr<rt::LossScaler> impl;
};

PyObject* scaler_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"dynamic", "init_scale", "growth_factor", "backoff_factor",
                                "window",  "min_scale",  "max_scale",     nullptr};
  rt::LossScalerOptions o;
  int dynamic = 1;
  long long window = o.window;
  PyObject* min_scale = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|pdddLOd:LossScaler", const_cast<char**>(names), &dynamic,
                                   &o.init_scale, &o.growth_factor, &o.backoff_factor, &window, &min_scale,
                                   &o.max_scale))
    return nullptr;
  o.dynamic = dynamic != 0;
  o.window = window;
  if (min_scale != Py_None) {
    double m = 0;
    if (!as_double(min_scale, "min_scale", m)) return nullptr;
    o.min_scale = m;
  }
  return guarded([&]() -> PyObject* {
    auto impl = std::make_unique<rt::LossScaler>(o);
    auto* self = reinterpret_cast<ScalerObject*>(new_instance(type));
    if (self == nullptr) return nullptr;
    new (&self->impl) std::unique_ptr<rt::LossScaler>(std::move(impl));
    return reinterpret_cast<PyObject*>(self);
  });
}

void scaler_dealloc(PyObject* obj) {
  reinterpret_cast<ScalerObject*>(obj)->impl.~unique_ptr();
  free_instance(obj);
}

rt::LossScaler& scaler(PyObject* obj) { return *reinterpret_cast<ScalerObject*>(obj)->impl; }

PyObject* scaler_update(PyObject* obj, PyObject* args) {
  int overflow = 0;
  if (!PyArg_ParseTuple(args, "p:update", &overflow)) return nullptr;
  return PyBool_FromLong(scaler(obj).update(overflow != 0));
}

PyObject* scaler_state(PyObject* obj, PyObject*) {
  const auto s = scaler(obj).state();
  return Py_BuildValue("{s:d,s:L}", "loss_scale", s.loss_scale, "unskipped",
                       static_cast<long long>(s.unskipped));
}

PyObject* scaler_load_state(PyObject* obj, PyObject* args) {
  rt::LossScalerState s;
  long long unskipped = 0;
  if (!PyArg_ParseTuple(args, "dL:load_state", &s.loss_scale, &unskipped)) return nullptr;
  s.unskipped = unskipped;
  return guarded([&] {
    scaler(obj).load_state(s);
    Py_RETURN_NONE;
  });
}

PyObject* scaler_get_scale(PyObject* obj, void*) { return PyFloat_FromDouble(scaler(obj).scale()); }
PyObject* scaler_get_dynamic(PyObject* obj, void*) { return PyBool_FromLong(scaler(obj).dynamic()); }

PyMethodDef scaler_methods[] = {
    {"update", scaler_update, METH_VARARGS,
     "update(overflow) -> bool: True when this step must be skipped (overflow); backs off on "
     "overflow, grows after `window` clean steps"},
    {"state", scaler_state, METH_NOARGS, "state() -> {'loss_scale': float, 'unskipped': int}"},
    {"load_state", scaler_load_state, METH_VARARGS, "load_state(loss_scale, unskipped)"},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef scaler_getset[] = {
    {"scale", scaler_get_scale, nullptr, "the current loss scale", nullptr},
    {"dynamic", scaler_get_dynamic, nullptr, "whether the scale is dynamic", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot scaler_slots[] = {
    {Py_tp_doc, const_cast<char*>("LossScaler(dynamic=True, init_scale=65536.0, growth_factor=2.0, "
                                  "backoff_factor=0.5, window=2000, min_scale=None, max_scale=16777216.0); "
                                  "static: dynamic=False, init_scale=S")},
    {Py_tp_new, reinterpret_cast<void*>(scaler_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(scaler_dealloc)},
    {Py_tp_methods, scaler_methods},
    {Py_tp_getset, scaler_getset},
    {0, nullptr}};

PyType_Spec scaler_spec = {"apex._apexnpu.LossScaler", sizeof(ScalerObject), 0, Py_TPFLAGS_DEFAULT,
                           scaler_slots};

template <typename Fn>
PyCFunction kw(Fn fn) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn));
}

}  // namespace

PyMethodDef kAmpMethods[] = {
    {"unscale", kw(unscale), METH_VARARGS | METH_KEYWORDS,
     "unscale(grads, dtype, numel, inv_scale, out=None, device=0) -> bool overflow"},
    {"grad_norm", kw(grad_norm), METH_VARARGS | METH_KEYWORDS,
     "grad_norm(data, dtype, segments, norm_type=2.0, per_segment=False, device=0) -> float, "
     "or (float, [per-segment norms]) with per_segment=True"},
    {"clip_grad_norm", kw(clip_grad_norm), METH_VARARGS | METH_KEYWORDS,
     "clip_grad_norm(buffers=[(data, dtype, segments), ...], max_norm, norm_type=2.0, device=0) "
     "-> total norm (torch.nn.utils.clip_grad_norm_)"},
    {"scale_segments", kw(scale_segments), METH_VARARGS | METH_KEYWORDS,
     "scale_segments(data, dtype, segments, factor, device=0) -> bool non-finite/saturated"},
    {nullptr, nullptr, 0, nullptr}};

int add_amp_types(PyObject* m) { return add_type(m, "LossScaler", &scaler_spec); }

}  // namespace apexnpu::py
