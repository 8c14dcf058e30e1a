// The fused optimizers as one Python type, apex._apexnpu.Optimizer(kind, options, ...), whose
// step() runs over raw buffers. Kinds, options and state buffers come from the runtime's
// registry through optim/any_optimizer.h, so this file (compiled once per Python) instantiates no
// optimizer template; options are a dict over the kind's defaults.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optim/any_optimizer.h"
#include "python/convert.h"
#include "python/methods.h"

namespace apexnpu::py {
namespace {

using namespace rt::optim;

bool put(PyObject* d, const char* key, PyObject* v) {
  if (v == nullptr) return false;
  const int rc = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return rc == 0;
}

// fn(name, value) -> bool for each entry of `dict` (None: none), whose keys must be str;
// false with an exception set when `dict` is not a dict or a key is not a str (TypeError
// `what` must be ...), or when fn returns false.
template <typename Fn>
bool for_each_named(PyObject* dict, const char* what, Fn&& fn) {
  if (dict == nullptr || dict == Py_None) return true;
  if (!PyDict_Check(dict)) {
    PyErr_Format(PyExc_TypeError, "%s must be a dict with str keys", what);
    return false;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    std::string name;
    if (!PyUnicode_Check(key) || !utf8(key, name)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "%s must be a dict with str keys", what);
      return false;
    }
    if (!fn(name.c_str(), value)) return false;
  }
  return true;
}

// A Python value -> the option's value, by the option's type; false with TypeError.
bool to_option(PyObject* v, const OptionInfo& option, OptionValue& out) {
  switch (option.type) {
    case OptionType::number: {
      double d = 0;
      if (!as_double(v, option.name, d)) return false;
      out = d;
      return true;
    }
    case OptionType::flag: {
      bool b = false;
      if (!as_bool(v, option.name, b)) return false;
      out = b;
      return true;
    }
    case OptionType::schedule: {
      std::string name;
      if (!PyUnicode_Check(v) || !utf8(v, name)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "%s must be a str (warmup_linear, warmup_cosine, "
                     "warmup_constant, none)",
                     option.name);
        return false;
      }
      out = std::move(name);  // an unknown name: ArgumentError -> ValueError via guarded()
      return true;
    }
  }
  return false;
}

PyObject* to_python(const OptionValue& value) {
  if (const auto* d = std::get_if<double>(&value)) return PyFloat_FromDouble(*d);
  if (const auto* b = std::get_if<bool>(&value)) return PyBool_FromLong(*b);
  return PyUnicode_FromString(std::get<std::string>(value).c_str());
}

// A dict of options -> changes; false with an exception set on an unknown key or a bad value.
bool parse_options(PyObject* dict, const KindInfo& kind, OptionChanges& changes) {
  return for_each_named(dict, "options", [&](const char* name, PyObject* value) {
    const int index = kind.option_index(name);
    if (index < 0) {
      PyErr_Format(PyExc_TypeError, "%s has no option '%s' (see options())", kind.name, name);
      return false;
    }
    OptionValue v;
    if (!to_option(value, kind.options[static_cast<std::size_t>(index)], v)) return false;
    changes.emplace_back(static_cast<std::size_t>(index), std::move(v));
    return true;
  });
}

// A dict of state buffer name -> address into one pointer per kind.state entry.
bool parse_state(PyObject* dict, const KindInfo& kind, std::vector<float*>& state) {
  state.assign(kind.state.size(), nullptr);
  return for_each_named(dict, "state (name -> address)", [&](const char* name, PyObject* value) {
    const int index = kind.state_index(name);
    if (index < 0) {
      PyErr_Format(PyExc_ValueError, "%s has no state buffer '%s'", kind.name, name);
      return false;
    }
    std::uintptr_t address = 0;
    if (!to_address(value, &address)) return false;
    state[static_cast<std::size_t>(index)] = ptr<float>(address);
    return true;
  });
}

struct OptimizerObject {
  PyObject_HEAD std::unique_ptr<AnyOptimizer> impl;
  std::unique_ptr<std::mutex> mutex;  // one step at a time per optimizer (the GIL is released)
  const char* kind;
};

std::string kind_names() {
  std::string names;
  for (const KindInfo& kind : optimizer_kinds()) {
    names += names.empty() ? "" : ", ";
    names += kind.name;
  }
  return names;
}

PyObject* optimizer_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"kind", "options", "segments", "rows", nullptr};
  const char* kind_c = nullptr;
  PyObject *options = nullptr, *segments = nullptr, *rows = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OOO:Optimizer", const_cast<char**>(names), &kind_c,
                                   &options, &segments, &rows))
    return nullptr;
  const KindInfo* kind = find_optimizer_kind(kind_c);
  if (kind == nullptr) {
    PyErr_Format(PyExc_ValueError, "unknown optimizer kind '%s' (%s)", kind_c, kind_names().c_str());
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    std::vector<rt::Segment> segs;
    std::vector<std::size_t> row_sizes;
    if (kind->inputs != KindInputs::options) {
      if (segments == nullptr || segments == Py_None) {
        PyErr_Format(PyExc_ValueError, "Optimizer('%s') needs segments=[(offset, numel), ...]", kind->name);
        return nullptr;
      }
      if (!parse_segments(segments, segs)) return nullptr;
    }
    if (kind->inputs == KindInputs::segments_and_rows && rows != nullptr && rows != Py_None &&
        !parse_sizes(rows, "rows must be a sequence of ints", row_sizes))
      return nullptr;
    OptionChanges changes;
    if (!parse_options(options, *kind, changes)) return nullptr;
    std::unique_ptr<AnyOptimizer> impl =
        make_optimizer(*kind, changes, std::move(segs), std::move(row_sizes));
    auto* self = reinterpret_cast<OptimizerObject*>(new_instance(type));
    if (self == nullptr) return nullptr;
    new (&self->impl) std::unique_ptr<AnyOptimizer>(std::move(impl));
    new (&self->mutex) std::unique_ptr<std::mutex>(std::make_unique<std::mutex>());
    self->kind = kind->name;
    return reinterpret_cast<PyObject*>(self);
  });
}

void optimizer_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  self->impl.~unique_ptr();
  self->mutex.~unique_ptr();
  free_instance(obj);
}

PyObject* optimizer_step(PyObject* obj, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  static const char* names[] = {"params",           "grads", "numel", "state", "half_params", "device",
                                "global_grad_norm", nullptr};
  std::uintptr_t params = 0, grads = 0;
  std::size_t numel = 0;
  PyObject* state = nullptr;
  PyObject* half = nullptr;
  int device_index = 0;
  double global_norm = -1.0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O&O&|OOid:step", const_cast<char**>(names), to_address,
                                   &params, to_address, &grads, to_size, &numel, &state, &half, &device_index,
                                   &global_norm))
    return nullptr;
  std::uintptr_t half_params = 0;
  if (half != nullptr && half != Py_None && !(PyLong_Check(half) && PyLong_AsLong(half) == 0) &&
      !to_address(half, &half_params))
    return nullptr;
  return guarded([&]() -> PyObject* {
    FusedBuffers buffers;
    buffers.params = ptr<float>(params);
    buffers.grads = ptr<const float>(grads);
    buffers.half_params = half_params ? ptr<rt::half_bits>(half_params) : nullptr;
    buffers.numel = numel;
    buffers.device = &rt::device(device_index);
    std::vector<float*> st;
    if (!parse_state(state, self->impl->kind(), st)) return nullptr;
    bool flagged = false;
    {
      GilRelease unlocked;
      std::lock_guard lock(*self->mutex);
      flagged = self->impl->step(buffers, st, global_norm);
    }
    return PyBool_FromLong(flagged);
  });
}

PyObject* optimizer_options(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  const KindInfo& kind = self->impl->kind();
  return guarded([&]() -> PyObject* {
    const std::vector<OptionValue> values = self->impl->options();
    PyObject* d = PyDict_New();
    if (d == nullptr) return nullptr;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!put(d, kind.options[i].name, to_python(values[i]))) {
        Py_DECREF(d);
        return nullptr;
      }
    }
    return d;
  });
}

PyObject* optimizer_set_options(PyObject* obj, PyObject* args) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  PyObject* dict = nullptr;
  if (!PyArg_ParseTuple(args, "O!:set_options", &PyDict_Type, &dict)) return nullptr;
  return guarded([&]() -> PyObject* {
    OptionChanges changes;
    if (!parse_options(dict, self->impl->kind(), changes)) return nullptr;
    std::lock_guard lock(*self->mutex);
    self->impl->set_options(changes);
    Py_RETURN_NONE;
  });
}

PyObject* optimizer_get_step(PyObject* obj, void*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  return PyLong_FromLongLong(self->impl->step_count());
}

int optimizer_set_step(PyObject* obj, PyObject* value, void*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  if (value == nullptr) {
    PyErr_SetString(PyExc_AttributeError, "step_count cannot be deleted");
    return -1;
  }
  const long long steps = PyLong_AsLongLong(value);
  if (steps == -1 && PyErr_Occurred()) return -1;
  PyObject* r = guarded([&]() -> PyObject* {
    self->impl->set_step_count(steps);
    Py_RETURN_NONE;
  });
  if (r == nullptr) return -1;
  Py_DECREF(r);
  return 0;
}

PyObject* optimizer_get_kind(PyObject* obj, void*) {
  return PyUnicode_FromString(reinterpret_cast<OptimizerObject*>(obj)->kind);
}

PyObject* only_for(const char* call, const char* kind) {
  PyErr_Format(PyExc_TypeError, "%s() is only for %s", call, kind);
  return nullptr;
}

PyObject* optimizer_trust_ratios(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  const auto ratios = lamb_trust_ratios(*self->impl);
  if (!ratios) return only_for("trust_ratios", "lamb");
  return to_list(*ratios, [](float r) { return PyFloat_FromDouble(r); });
}

PyObject* optimizer_grad_sum_squares(PyObject* obj, PyObject* args) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  std::uintptr_t grads = 0;
  if (!PyArg_ParseTuple(args, "O&:grad_sum_squares", to_address, &grads)) return nullptr;
  return guarded([&]() -> PyObject* {
    std::optional<double> sum;
    {
      GilRelease unlocked;
      std::lock_guard lock(*self->mutex);
      sum = lamb_grad_sum_squares(*self->impl, ptr<const float>(grads));
    }
    if (!sum) return only_for("grad_sum_squares", "lamb");
    return PyFloat_FromDouble(*sum);
  });
}

PyObject* optimizer_scheduled_lr(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  return guarded([&]() -> PyObject* {
    const auto lr = bert_adam_scheduled_lr(*self->impl);
    if (!lr) return only_for("scheduled_lr", "bert_adam");
    return PyFloat_FromDouble(*lr);
  });
}

PyObject* optimizer_projections(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  const auto projections = adamp_projections(*self->impl);
  if (!projections) return only_for("projections", "adamp");
  return to_list(*projections, [](const char* name) { return PyUnicode_FromString(name); });
}

PyMethodDef optimizer_methods[] = {
    {"step", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(optimizer_step)),
     METH_VARARGS | METH_KEYWORDS,
     "step(params, grads, numel, state=None, half_params=None, device=0, global_grad_norm=-1.0)"
     " -> bool: one fused step; True when the float status was raised"},
    {"options", optimizer_options, METH_NOARGS, "options() -> dict of the hyper-parameters"},
    {"set_options", optimizer_set_options, METH_VARARGS, "set_options(dict): change some"},
    {"trust_ratios", optimizer_trust_ratios, METH_NOARGS, "lamb: the last step's trust ratios"},
    {"grad_sum_squares", optimizer_grad_sum_squares, METH_VARARGS,
     "lamb: grad_sum_squares(grads_addr) -> float"},
    {"scheduled_lr", optimizer_scheduled_lr, METH_NOARGS, "bert_adam: the next step's lr"},
    {"projections", optimizer_projections, METH_NOARGS, "adamp: the last step's projections"},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef optimizer_getset[] = {
    {"step_count", optimizer_get_step, optimizer_set_step, "steps taken (torch's state['step'])", nullptr},
    {"kind", optimizer_get_kind, nullptr, "the optimizer's kind", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// A tuple of str: name(element) for each element of v.
template <typename Container, typename Name>
PyObject* str_tuple(const Container& v, Name name) {
  PyObject* list = to_list(v, [&](const auto& element) { return PyUnicode_FromString(name(element)); });
  if (list == nullptr) return nullptr;
  PyObject* tuple = PyList_AsTuple(list);
  Py_DECREF(list);
  return tuple;
}

// The registry's kinds, in its order.
PyObject* optimizer_kind_names() {
  return str_tuple(optimizer_kinds(), [](const KindInfo& kind) { return kind.name; });
}

// kind -> the apex.optimizers class that runs it.
PyObject* optimizer_classes() {
  PyObject* classes = PyDict_New();
  if (classes == nullptr) return nullptr;
  for (const KindInfo& kind : optimizer_kinds()) {
    if (!put(classes, kind.name, PyUnicode_FromString(kind.python_class))) {
      Py_DECREF(classes);
      return nullptr;
    }
  }
  return classes;
}

const char* inputs_name(KindInputs inputs) {
  switch (inputs) {
    case KindInputs::segments:
      return "segments";
    case KindInputs::segments_and_rows:
      return "segments_and_rows";
    case KindInputs::options:
      break;
  }
  return "options";
}

// kind -> {"class", "state": tuple of its state buffers, "inputs": what its constructor takes
// besides options ("options", "segments", "segments_and_rows")}: the facts tests and tools
// would otherwise type again per kind.
PyObject* optimizer_kind_facts() {
  PyObject* kinds = PyDict_New();
  if (kinds == nullptr) return nullptr;
  for (const KindInfo& kind : optimizer_kinds()) {
    PyObject* facts = PyDict_New();
    if (facts == nullptr) {
      Py_DECREF(kinds);
      return nullptr;
    }
    const bool ok = put(facts, "class", PyUnicode_FromString(kind.python_class)) &&
                    put(facts, "state", str_tuple(kind.state, [](const char* name) { return name; })) &&
                    put(facts, "inputs", PyUnicode_FromString(inputs_name(kind.inputs)));
    if (!ok) Py_DECREF(facts);
    if (!ok || !put(kinds, kind.name, facts)) {  // put takes facts' reference
      Py_DECREF(kinds);
      return nullptr;
    }
  }
  return kinds;
}

PyType_Slot optimizer_slots[] = {
    {Py_tp_doc,
     const_cast<char*>("Optimizer(kind, options=None, segments=None, rows=None): a fused optimizer "
                       "(see API.md)")},
    {Py_tp_new, reinterpret_cast<void*>(optimizer_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(optimizer_dealloc)},
    {Py_tp_methods, optimizer_methods},
    {Py_tp_getset, optimizer_getset},
    {0, nullptr}};

PyType_Spec optimizer_spec = {"apex._apexnpu.Optimizer", sizeof(OptimizerObject), 0, Py_TPFLAGS_DEFAULT,
                              optimizer_slots};

}  // namespace

PyMethodDef kOptimMethods[] = {{nullptr, nullptr, 0, nullptr}};

int add_optim_constants(PyObject* m) {
  if (add_type(m, "Optimizer", &optimizer_spec) < 0) return -1;
  if (add_object(m, "OPTIMIZERS", optimizer_kind_names()) < 0) return -1;
  if (add_object(m, "OPTIMIZER_CLASSES", optimizer_classes()) < 0) return -1;
  return add_object(m, "OPTIMIZER_KINDS", optimizer_kind_facts());
}

}  // namespace apexnpu::py
