// The fused optimizers as one Python type, apex._apexnpu.Optimizer(kind, options, ...), whose
// step() runs over raw buffers. Every kind, its options and its state buffers come from the
// registry (optim/registry.h); options are a dict over the kind's defaults.
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "optim/registry.h"
#include "python/convert.h"
#include "python/methods.h"

namespace apexnpu::py {
namespace {

using namespace rt::optim;

// One option value <-> Python, by the member's type.
bool read_value(PyObject* v, const char* name, double& out) { return as_double(v, name, out); }
bool read_value(PyObject* v, const char* name, bool& out) { return as_bool(v, name, out); }
bool read_value(PyObject* v, const char* name, WarmupSchedule& out) {
  const char* s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : nullptr;
  if (s == nullptr) {
    PyErr_Format(PyExc_TypeError, "%s must be a str (warmup_linear, warmup_cosine, "
                 "warmup_constant, none)", name);
    return false;
  }
  out = parse_warmup_schedule(s);  // ArgumentError -> ValueError via guarded()
  return true;
}
PyObject* to_python(double v) { return PyFloat_FromDouble(v); }
PyObject* to_python(bool v) { return PyBool_FromLong(v); }
PyObject* to_python(WarmupSchedule v) { return PyUnicode_FromString(to_string(v)); }

bool put(PyObject* d, const char* key, PyObject* v) {
  if (v == nullptr) return false;
  const int rc = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return rc == 0;
}

// 1: set, 0: not a field of these options, -1: error set.
template <typename Options>
int set_field(Options& o, std::string_view key, PyObject* v) {
  int rc = 0;
  std::apply([&](const auto&... field) {
    ((rc == 0 && key == field.name ? rc = read_value(v, field.name, o.*field.member) ? 1 : -1
                                   : 0),
     ...);
  }, Options::fields());
  return rc;
}

template <typename Options>
bool get_fields(const Options& o, PyObject* d) {
  return std::apply([&](const auto&... field) {
    return (put(d, field.name, to_python(o.*field.member)) && ...);
  }, Options::fields());
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
    const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
    if (name == nullptr) {
      PyErr_Format(PyExc_TypeError, "%s must be a dict with str keys", what);
      return false;
    }
    if (!fn(name, value)) return false;
  }
  return true;
}

// Applies a dict of options onto `o`; false with an exception set on an unknown key.
template <typename Options>
bool apply_options(Options& o, PyObject* dict, const char* kind) {
  return for_each_named(dict, "options", [&](const char* name, PyObject* value) {
    const int rc = set_field(o, name, value);
    if (rc == 0) PyErr_Format(PyExc_TypeError, "%s has no option '%s' (see options())", kind, name);
    return rc > 0;
  });
}

// Buffer name -> address, into the State's fields.
template <typename State>
bool parse_state(PyObject* dict, State& state, const char* kind) {
  return for_each_named(dict, "state (name -> address)", [&](const char* name, PyObject* value) {
    for (const auto& field : State::fields()) {
      if (std::string_view(name) != field.name) continue;
      std::uintptr_t address = 0;
      if (!to_address(value, &address)) return false;
      state.*field.member = ptr<float>(address);
      return true;
    }
    PyErr_Format(PyExc_ValueError, "%s has no state buffer '%s'", kind, name);
    return false;
  });
}

// std::variant over the registry's optimizer classes, each once (adam and adamw share one).
template <typename Variant, typename... Rest>
struct UniqueVariant {
  using type = Variant;
};
template <typename... Done, typename Next, typename... Rest>
struct UniqueVariant<std::variant<Done...>, Next, Rest...>
    : std::conditional_t<(std::is_same_v<Next, Done> || ...),
                         UniqueVariant<std::variant<Done...>, Rest...>,
                         UniqueVariant<std::variant<Done..., Next>, Rest...>> {};

template <typename Kinds>
struct VariantOfKinds;
template <typename... Kinds>
struct VariantOfKinds<std::tuple<Kinds...>> {
  using type = typename UniqueVariant<std::variant<>, typename Kinds::Optimizer...>::type;
};

using AnyOptimizer = VariantOfKinds<std::remove_const_t<decltype(kOptimizerKinds)>>::type;

struct OptimizerObject {
  PyObject_HEAD
  std::unique_ptr<AnyOptimizer> impl;
  std::unique_ptr<std::mutex> mutex;  // one step at a time per optimizer (the GIL is released)
  const char* kind;
};

// Filled in by add_optim_constants (designated initialisers of PyTypeObject differ by version).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
PyTypeObject OptimizerType = {PyVarObject_HEAD_INIT(nullptr, 0)};
#pragma GCC diagnostic pop

// What Optimizer(kind, ...) was given besides the kind.
struct ConstructorArgs {
  PyObject* options = nullptr;
  PyObject* segments = nullptr;
  PyObject* rows = nullptr;
};

// The kind's optimizer from its defaults, the options dict and what its constructor needs;
// null with an exception set on bad input.
template <typename Kind>
std::unique_ptr<AnyOptimizer> make_optimizer(const Kind& kind, const ConstructorArgs& args) {
  using Opt = typename Kind::Optimizer;
  std::vector<rt::Segment> segments;
  std::vector<std::size_t> rows;
  if constexpr (TakesSegments<Opt> || TakesSegmentsAndRows<Opt>) {
    if (args.segments == nullptr || args.segments == Py_None) {
      PyErr_Format(PyExc_ValueError, "Optimizer('%s') needs segments=[(offset, numel), ...]",
                   kind.name);
      return nullptr;
    }
    if (!parse_segments(args.segments, segments)) return nullptr;
  }
  if constexpr (TakesSegmentsAndRows<Opt>) {
    if (args.rows == nullptr || args.rows == Py_None) rows.assign(segments.size(), 0);
    else if (!parse_sizes(args.rows, "rows must be a sequence of ints", rows)) return nullptr;
  }
  typename Kind::Options options = kind.defaults;
  if (!apply_options(options, args.options, kind.name)) return nullptr;
  if constexpr (TakesSegmentsAndRows<Opt>)
    return std::make_unique<AnyOptimizer>(std::in_place_type<Opt>, options,
                                          rt::SegmentTable(segments), rows);
  else if constexpr (TakesSegments<Opt>)
    return std::make_unique<AnyOptimizer>(std::in_place_type<Opt>, options,
                                          rt::SegmentTable(segments));
  else
    return std::make_unique<AnyOptimizer>(std::in_place_type<Opt>, options);
}

std::string kind_names() {
  std::string names;
  for_each_optimizer_kind([&](const auto& kind) {
    names += names.empty() ? "" : ", ";
    names += kind.name;
  });
  return names;
}

PyObject* optimizer_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"kind", "options", "segments", "rows", nullptr};
  const char* kind_c = nullptr;
  ConstructorArgs given;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OOO:Optimizer", const_cast<char**>(names),
                                   &kind_c, &given.options, &given.segments, &given.rows))
    return nullptr;
  return guarded([&]() -> PyObject* {
    std::unique_ptr<AnyOptimizer> impl;
    const char* canonical = nullptr;
    for_each_optimizer_kind([&](const auto& kind) {
      if (canonical != nullptr || std::string_view(kind_c) != kind.name) return;
      canonical = kind.name;
      impl = make_optimizer(kind, given);
    });
    if (canonical == nullptr) {
      PyErr_Format(PyExc_ValueError, "unknown optimizer kind '%s' (%s)", kind_c,
                   kind_names().c_str());
      return nullptr;
    }
    if (impl == nullptr) return nullptr;
    auto* self = reinterpret_cast<OptimizerObject*>(type->tp_alloc(type, 0));
    if (self == nullptr) return nullptr;
    new (&self->impl) std::unique_ptr<AnyOptimizer>(std::move(impl));
    new (&self->mutex) std::unique_ptr<std::mutex>(std::make_unique<std::mutex>());
    self->kind = canonical;
    return reinterpret_cast<PyObject*>(self);
  });
}

void optimizer_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  self->impl.~unique_ptr();
  self->mutex.~unique_ptr();
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* optimizer_step(PyObject* obj, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  static const char* names[] = {"params", "grads", "numel", "state", "half_params", "device",
                                "global_grad_norm", nullptr};
  std::uintptr_t params = 0, grads = 0;
  std::size_t numel = 0;
  PyObject* state = nullptr;
  PyObject* half = nullptr;
  int device_index = 0;
  double global_norm = -1.0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O&O&|OOid:step", const_cast<char**>(names),
                                   to_address, &params, to_address, &grads, to_size, &numel,
                                   &state, &half, &device_index, &global_norm))
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
    bool flagged = false;
    const bool ok = std::visit(
        [&]<typename Opt>(Opt& opt) -> bool {
          typename Opt::State st;
          if (!parse_state(state, st, self->kind)) return false;
          GilRelease unlocked;
          std::lock_guard lock(*self->mutex);
          if constexpr (TakesGlobalGradNorm<Opt>) flagged = opt.step(buffers, st, global_norm);
          else flagged = opt.step(buffers, st);
          return true;
        },
        *self->impl);
    if (!ok) return nullptr;
    return PyBool_FromLong(flagged);
  });
}

PyObject* optimizer_options(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  PyObject* d = PyDict_New();
  if (d == nullptr) return nullptr;
  const bool ok = std::visit([&](const auto& opt) { return get_fields(opt.options(), d); }, *self->impl);
  if (!ok) {
    Py_DECREF(d);
    return nullptr;
  }
  return d;
}

PyObject* optimizer_set_options(PyObject* obj, PyObject* args) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  PyObject* dict = nullptr;
  if (!PyArg_ParseTuple(args, "O!:set_options", &PyDict_Type, &dict)) return nullptr;
  return guarded([&]() -> PyObject* {
    const bool ok = std::visit(
        [&](auto& opt) {
          auto o = opt.options();
          if (!apply_options(o, dict, self->kind)) return false;
          std::lock_guard lock(*self->mutex);
          opt.set_options(o);
          return true;
        },
        *self->impl);
    if (!ok) return nullptr;
    Py_RETURN_NONE;
  });
}

PyObject* optimizer_get_step(PyObject* obj, void*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  return PyLong_FromLongLong(std::visit([](const auto& o) { return o.step_count(); }, *self->impl));
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
    std::visit([&](auto& o) { o.set_step_count(steps); }, *self->impl);
    Py_RETURN_NONE;
  });
  if (r == nullptr) return -1;
  Py_DECREF(r);
  return 0;
}

PyObject* optimizer_get_kind(PyObject* obj, void*) {
  return PyUnicode_FromString(reinterpret_cast<OptimizerObject*>(obj)->kind);
}

PyObject* floats_to_list(std::span<const float> v) {
  PyObject* l = PyList_New(static_cast<Py_ssize_t>(v.size()));
  if (l == nullptr) return nullptr;
  for (std::size_t i = 0; i < v.size(); ++i)
    PyList_SET_ITEM(l, static_cast<Py_ssize_t>(i), PyFloat_FromDouble(v[i]));
  return l;
}

PyObject* optimizer_trust_ratios(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  if (auto* lamb = std::get_if<FusedLamb>(self->impl.get())) return floats_to_list(lamb->trust_ratios());
  PyErr_SetString(PyExc_TypeError, "trust_ratios() is only for lamb");
  return nullptr;
}

PyObject* optimizer_grad_sum_squares(PyObject* obj, PyObject* args) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  std::uintptr_t grads = 0;
  if (!PyArg_ParseTuple(args, "O&:grad_sum_squares", to_address, &grads)) return nullptr;
  auto* lamb = std::get_if<FusedLamb>(self->impl.get());
  if (lamb == nullptr) {
    PyErr_SetString(PyExc_TypeError, "grad_sum_squares() is only for lamb");
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    double s = 0;
    {
      GilRelease unlocked;
      std::lock_guard lock(*self->mutex);
      s = lamb->grad_sum_squares(ptr<const float>(grads));
    }
    return PyFloat_FromDouble(s);
  });
}

PyObject* optimizer_scheduled_lr(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  auto* bert = std::get_if<FusedBertAdam>(self->impl.get());
  if (bert == nullptr) {
    PyErr_SetString(PyExc_TypeError, "scheduled_lr() is only for bert_adam");
    return nullptr;
  }
  return guarded([&] { return PyFloat_FromDouble(bert->scheduled_lr()); });
}

PyObject* optimizer_projections(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<OptimizerObject*>(obj);
  auto* adamp = std::get_if<FusedAdamP>(self->impl.get());
  if (adamp == nullptr) {
    PyErr_SetString(PyExc_TypeError, "projections() is only for adamp");
    return nullptr;
  }
  const auto p = adamp->projections();
  PyObject* l = PyList_New(static_cast<Py_ssize_t>(p.size()));
  if (l == nullptr) return nullptr;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char* name = p[i] == FusedAdamP::Projection::channel ? "channel"
                       : p[i] == FusedAdamP::Projection::layer ? "layer" : "none";
    PyList_SET_ITEM(l, static_cast<Py_ssize_t>(i), PyUnicode_FromString(name));
  }
  return l;
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

// The registry's kinds, in its order, as a tuple of str.
PyObject* optimizer_kinds() {
  PyObject* kinds = PyTuple_New(static_cast<Py_ssize_t>(kOptimizerKindCount));
  if (kinds == nullptr) return nullptr;
  Py_ssize_t i = 0;
  bool ok = true;
  for_each_optimizer_kind([&](const auto& kind) {
    PyObject* name = PyUnicode_FromString(kind.name);
    ok = ok && name != nullptr;
    if (name != nullptr) PyTuple_SET_ITEM(kinds, i++, name);
  });
  if (ok) return kinds;
  Py_DECREF(kinds);
  return nullptr;
}

// kind -> the apex.optimizers class that runs it.
PyObject* optimizer_classes() {
  PyObject* classes = PyDict_New();
  if (classes == nullptr) return nullptr;
  bool ok = true;
  for_each_optimizer_kind([&](const auto& kind) {
    ok = ok && put(classes, kind.name, PyUnicode_FromString(kind.python_class));
  });
  if (ok) return classes;
  Py_DECREF(classes);
  return nullptr;
}

}  // namespace

PyMethodDef kOptimMethods[] = {{nullptr, nullptr, 0, nullptr}};

int add_optim_constants(PyObject* m) {
  OptimizerType.tp_name = "apex._apexnpu.Optimizer";
  OptimizerType.tp_basicsize = sizeof(OptimizerObject);
  OptimizerType.tp_flags = Py_TPFLAGS_DEFAULT;
  OptimizerType.tp_doc =
      "Optimizer(kind, options=None, segments=None, rows=None): a fused optimizer (see API.md)";
  OptimizerType.tp_new = optimizer_new;
  OptimizerType.tp_dealloc = optimizer_dealloc;
  OptimizerType.tp_methods = optimizer_methods;
  OptimizerType.tp_getset = optimizer_getset;
  if (add_type(m, "Optimizer", &OptimizerType) < 0) return -1;
  if (add_object(m, "OPTIMIZERS", optimizer_kinds()) < 0) return -1;
  return add_object(m, "OPTIMIZER_CLASSES", optimizer_classes());
}

}  // namespace apexnpu::py
