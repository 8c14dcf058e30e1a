#pragma once
// Any optimizer of the registry (registry.h) behind one interface, made by kind name, with its
// options and state buffers addressed by name. Code outside the runtime (the CPython binding,
// compiled once per Python) uses this and instantiates no optimizer template; the templates are
// compiled here, once per architecture.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "optim/fused_buffers.h"
#include "tensor/segment_table.h"

namespace apexnpu::rt::optim {

// An option's type: a number (double), a flag (bool), or a warmup schedule given by its name.
enum class OptionType { number, flag, schedule };
using OptionValue = std::variant<double, bool, std::string>;

struct OptionInfo {
  const char* name;
  OptionType type;
};

// What a kind's constructor takes besides its options.
enum class KindInputs { options, segments, segments_and_rows };

struct KindInfo {
  const char* name;          // "adamw"
  const char* python_class;  // "NpuFusedAdamW"
  KindInputs inputs;
  std::span<const OptionInfo> options;  // the options struct's fields, in order
  std::span<const char* const> state;   // the State struct's buffers, in order
  // The index of an option or state buffer by name, or -1.
  int option_index(std::string_view name) const;
  int state_index(std::string_view name) const;
};

// Every kind, in the registry's order.
std::span<const KindInfo> optimizer_kinds();
// The kind of that name, or null.
const KindInfo* find_optimizer_kind(std::string_view name);

// (option index, value) pairs, applied in order; a value of the option's type.
using OptionChanges = std::vector<std::pair<std::size_t, OptionValue>>;

class AnyOptimizer {
 public:
  virtual ~AnyOptimizer() = default;

  virtual const KindInfo& kind() const noexcept = 0;
  // The current options, one per kind().options entry (a schedule as its name).
  virtual std::vector<OptionValue> options() const = 0;
  // Applies the changes over the current options and checks them together, as the constructor
  // does; ArgumentError (and nothing changed) when they are invalid.
  virtual void set_options(const OptionChanges& changes) = 0;
  // One step; state holds one pointer per kind().state entry, null for a buffer not given (an
  // ArgumentError names it when these options need it). True when the float status was raised.
  virtual bool step(const FusedBuffers& buffers, std::span<float* const> state, double global_grad_norm) = 0;
  virtual std::int64_t step_count() const noexcept = 0;
  virtual void set_step_count(std::int64_t steps) = 0;

  // The optimizer itself when it is a T (FusedLamb, ...), for its own extra calls; else null.
  template <typename T>
  T* as() noexcept {
    return static_cast<T*>(target(typeid(T)));
  }

 protected:
  virtual void* target(const std::type_info& type) noexcept = 0;
};

// The extra calls of particular kinds, none when `optimizer` is of another kind:
// LAMB's trust ratio per tensor of the last step, and its buffer's share of a global gradient
// norm (the sum of squares of `grads`); BertAdam's lr for the next step; AdamP's projection per
// tensor of the last step ("none", "channel", "layer").
std::optional<std::vector<float>> lamb_trust_ratios(AnyOptimizer& optimizer);
std::optional<double> lamb_grad_sum_squares(AnyOptimizer& optimizer, const float* grads);
std::optional<double> bert_adam_scheduled_lr(AnyOptimizer& optimizer);
std::optional<std::vector<const char*>> adamp_projections(AnyOptimizer& optimizer);

// The kind's optimizer from its defaults and `changes`; `segments` and `rows` are used as
// kind.inputs says. Throws ArgumentError on invalid options or inputs.
std::unique_ptr<AnyOptimizer> make_optimizer(const KindInfo& kind, const OptionChanges& changes,
                                             std::vector<Segment> segments, std::vector<std::size_t> rows);

}  // namespace apexnpu::rt::optim
