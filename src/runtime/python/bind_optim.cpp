// The fused optimizers as one Python type, apex._apexnpu.Optimizer(kind, options, ...), whose
// step() runs over raw buffers. Options are a dict of the hyper-parameters in options.h.
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <variant>

#include "optim/adadelta.h"
#include "optim/adam.h"
#include "optim/adamp.h"
#include "optim/bert_adam.h"
#include "optim/lamb.h"
#include "optim/rmsprop.h"
#include "optim/rmsprop_tf.h"
#include "optim/sgd.h"
#include "python/convert.h"
#include "python/methods.h"

namespace apexnpu::py {
namespace {

using namespace rt::optim;

// Field lists: D(name) for doubles, B(name) for bools (the member names are the option names).
#define SGD_FIELDS(D, B) D(lr) D(momentum) D(dampening) D(weight_decay) B(nesterov)
#define ADAM_FIELDS(D, B) \
  D(lr) D(beta1) D(beta2) D(eps) D(weight_decay) B(amsgrad) B(decoupled_weight_decay)
#define ADAMP_FIELDS(D, B) \
  D(lr) D(beta1) D(beta2) D(eps) D(weight_decay) D(delta) D(wd_ratio) B(nesterov)
#define BERT_FIELDS(D, B) D(lr) D(warmup) D(t_total) D(b1) D(b2) D(e) D(weight_decay) D(max_grad_norm)
#define ADADELTA_FIELDS(D, B) D(lr) D(rho) D(eps) D(weight_decay)
#define LAMB_FIELDS(D, B) \
  D(lr) D(beta1) D(beta2) D(eps) D(weight_decay) B(adam) B(use_global_grad_norm)
#define RMSPROP_FIELDS(D, B) D(lr) D(alpha) D(eps) D(weight_decay) D(momentum) B(centered)
#define RMSPROPTF_FIELDS(D, B) \
  D(lr) D(alpha) D(eps) D(weight_decay) D(momentum) B(centered) B(decoupled_decay) B(lr_in_momentum)

// 1: set, 0: not a field of this struct, -1: error set.
#define SET_D(n) if (key == #n) return as_double(v, #n, o.n) ? 1 : -1;
#define SET_B(n) if (key == #n) return as_bool(v, #n, o.n) ? 1 : -1;
#define PUT_D(n) if (!put(d, #n, PyFloat_FromDouble(o.n))) return false;
#define PUT_B(n) if (!put(d, #n, PyBool_FromLong(o.n))) return false;

bool put(PyObject* d, const char* key, PyObject* v) {
  if (v == nullptr) return false;
  const int rc = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return rc == 0;
}

#define DEFINE_FIELDS(Options, FIELDS)                                  \
  int set_field(Options& o, std::string_view key, PyObject* v) {        \
    FIELDS(SET_D, SET_B)                                                \
    return 0;                                                           \
  }                                                                     \
  bool get_fields(const Options& o, PyObject* d) {                      \
    FIELDS(PUT_D, PUT_B)                                                \
    return true;                                                        \
  }

DEFINE_FIELDS(SgdOptions, SGD_FIELDS)
DEFINE_FIELDS(AdamOptions, ADAM_FIELDS)
DEFINE_FIELDS(AdamPOptions, ADAMP_FIELDS)
DEFINE_FIELDS(AdadeltaOptions, ADADELTA_FIELDS)
DEFINE_FIELDS(LambOptions, LAMB_FIELDS)
DEFINE_FIELDS(RmspropOptions, RMSPROP_FIELDS)
DEFINE_FIELDS(RmspropTfOptions, RMSPROPTF_FIELDS)

// BertAdam also has the schedule, a string.
int set_field(BertAdamOptions& o, std::string_view key, PyObject* v) {
  if (key == "schedule") {
    const char* s = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : nullptr;
    if (s == nullptr) {
      PyErr_SetString(PyExc_TypeError, "schedule must be a str (warmup_linear, warmup_cosine, "
                                       "warmup_constant, none)");
      return -1;
    }
    o.schedule = parse_warmup_schedule(s);  // ArgumentError -> ValueError via guarded()
    return 1;
  }
  BERT_FIELDS(SET_D, SET_B)
  return 0;
}
bool get_fields(const BertAdamOptions& o, PyObject* d) {
  BERT_FIELDS(PUT_D, PUT_B)
  return put(d, "schedule", PyUnicode_FromString(to_string(o.schedule)));
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

using AnyOptimizer = std::variant<FusedSgd, FusedAdam, FusedAdamP, FusedBertAdam, FusedAdadelta,
                                  FusedLamb, FusedRmsprop, FusedRmspropTf>;

struct OptimizerObject {
  PyObject_HEAD
  std::unique_ptr<AnyOptimizer> impl;
  std::unique_ptr<std::mutex> mutex;  // one step at a time per optimizer (the GIL is released)
  const char* kind;
};

// State buffers by name: the fields of each optimizer's State struct.
template <typename State>
using StateField = std::pair<const char*, float* State::*>;

// Keyed by the State type, so optimizers that share one (RMSprop and RMSpropTF) share its list.
template <typename State> struct StateFields;
#define STATE_FIELDS(S, ...) \
  template <> struct StateFields<S> { static constexpr StateField<S> fields[] = {__VA_ARGS__}; };
STATE_FIELDS(FusedSgd::State, {"momentum_buffer", &FusedSgd::State::momentum_buffer})
STATE_FIELDS(FusedAdam::State, {"exp_avg", &FusedAdam::State::exp_avg},
             {"exp_avg_sq", &FusedAdam::State::exp_avg_sq},
             {"max_exp_avg_sq", &FusedAdam::State::max_exp_avg_sq})
STATE_FIELDS(FusedAdamP::State, {"exp_avg", &FusedAdamP::State::exp_avg},
             {"exp_avg_sq", &FusedAdamP::State::exp_avg_sq})
STATE_FIELDS(FusedBertAdam::State, {"exp_avg", &FusedBertAdam::State::exp_avg},
             {"exp_avg_sq", &FusedBertAdam::State::exp_avg_sq})
STATE_FIELDS(FusedAdadelta::State, {"square_avg", &FusedAdadelta::State::square_avg},
             {"acc_delta", &FusedAdadelta::State::acc_delta})
STATE_FIELDS(FusedLamb::State, {"exp_avg", &FusedLamb::State::exp_avg},
             {"exp_avg_sq", &FusedLamb::State::exp_avg_sq})
STATE_FIELDS(RmspropState, {"square_avg", &RmspropState::square_avg},
             {"grad_avg", &RmspropState::grad_avg},
             {"momentum_buffer", &RmspropState::momentum_buffer})

template <typename Opt>
bool parse_state(PyObject* dict, typename Opt::State& state, const char* kind) {
  return for_each_named(dict, "state (name -> address)", [&](const char* name, PyObject* value) {
    for (const auto& [field, member] : StateFields<typename Opt::State>::fields) {
      if (std::string_view(name) != field) continue;
      std::uintptr_t address = 0;
      if (!to_address(value, &address)) return false;
      state.*member = ptr<float>(address);
      return true;
    }
    PyErr_Format(PyExc_ValueError, "%s has no state buffer '%s'", kind, name);
    return false;
  });
}

// Filled in by add_optim_constants (designated initialisers of PyTypeObject differ by version).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
PyTypeObject OptimizerType = {PyVarObject_HEAD_INIT(nullptr, 0)};
#pragma GCC diagnostic pop

bool needs_segments(std::string_view kind) {
  return kind == "adamp" || kind == "bert_adam" || kind == "lamb";
}

PyObject* optimizer_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"kind", "options", "segments", "rows", nullptr};
  const char* kind_c = nullptr;
  PyObject *options = nullptr, *segments = nullptr, *rows = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OOO:Optimizer", const_cast<char**>(names),
                                   &kind_c, &options, &segments, &rows))
    return nullptr;
  const std::string_view kind(kind_c);
  std::vector<rt::Segment> segs;
  if (needs_segments(kind)) {
    if (segments == nullptr || segments == Py_None) {
      PyErr_Format(PyExc_ValueError, "Optimizer('%s') needs segments=[(offset, numel), ...]", kind_c);
      return nullptr;
    }
    if (!parse_segments(segments, segs)) return nullptr;
  }
  std::vector<std::size_t> row_sizes;
  if (kind == "adamp") {
    if (rows == nullptr || rows == Py_None) row_sizes.assign(segs.size(), 0);
    else if (!parse_sizes(rows, "rows must be a sequence of ints", row_sizes)) return nullptr;
  }
  return guarded([&]() -> PyObject* {
    std::unique_ptr<AnyOptimizer> impl;
    const char* canonical = nullptr;
    // Reads the options dict over the defaults, then constructs optimizer Opt from them.
    auto make = [&]<typename Opt, typename Options>(Options o, const char* name,
                                                   auto&&... extra) -> bool {
      if (!apply_options(o, options, name)) return false;
      impl = std::make_unique<AnyOptimizer>(std::in_place_type<Opt>, o, extra...);
      canonical = name;
      return true;
    };
    bool ok = false;
    if (kind == "sgd") ok = make.template operator()<FusedSgd>(SgdOptions{}, "sgd");
    else if (kind == "adam") ok = make.template operator()<FusedAdam>(AdamOptions{}, "adam");
    else if (kind == "adamw") ok = make.template operator()<FusedAdam>(adamw_defaults(), "adamw");
    else if (kind == "adadelta") ok = make.template operator()<FusedAdadelta>(AdadeltaOptions{}, "adadelta");
    else if (kind == "rmsprop") ok = make.template operator()<FusedRmsprop>(RmspropOptions{}, "rmsprop");
    else if (kind == "rmsprop_tf") ok = make.template operator()<FusedRmspropTf>(RmspropTfOptions{}, "rmsprop_tf");
    else if (kind == "adamp") ok = make.template operator()<FusedAdamP>(AdamPOptions{}, "adamp", rt::SegmentTable(segs), row_sizes);
    else if (kind == "bert_adam") ok = make.template operator()<FusedBertAdam>(BertAdamOptions{}, "bert_adam", rt::SegmentTable(segs));
    else if (kind == "lamb") ok = make.template operator()<FusedLamb>(LambOptions{}, "lamb", rt::SegmentTable(segs));
    else {
      PyErr_Format(PyExc_ValueError, "unknown optimizer kind '%s' (sgd, adam, adamw, adamp, "
                   "bert_adam, adadelta, lamb, rmsprop, rmsprop_tf)", kind_c);
      return nullptr;
    }
    if (!ok) return nullptr;
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
          if (!parse_state<Opt>(state, st, self->kind)) return false;
          GilRelease unlocked;
          std::lock_guard lock(*self->mutex);
          if constexpr (std::is_same_v<Opt, FusedLamb>) flagged = opt.step(buffers, st, global_norm);
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
  return add_object(m, "OPTIMIZERS",
                    Py_BuildValue("(sssssssss)", "sgd", "adam", "adamw", "adamp", "bert_adam",
                                  "adadelta", "lamb", "rmsprop", "rmsprop_tf"));
}

}  // namespace apexnpu::py
