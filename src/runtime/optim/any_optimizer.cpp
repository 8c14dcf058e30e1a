#include "optim/any_optimizer.h"

#include <array>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "exec/error.h"
#include "optim/registry.h"

namespace apexnpu::rt::optim {
namespace {

template <typename Struct, typename Member>
constexpr OptionType option_type(const Field<Struct, Member>&) {
  if constexpr (std::is_same_v<Member, double>)
    return OptionType::number;
  else if constexpr (std::is_same_v<Member, bool>)
    return OptionType::flag;
  else {
    static_assert(std::is_same_v<Member, WarmupSchedule>, "an option type OptionValue lacks");
    return OptionType::schedule;
  }
}

// Per options struct and per State struct, their fields as the tables KindInfo points at.
template <typename Options>
constexpr auto kOptionTable = std::apply(
    [](const auto&... field) {
      return std::array<OptionInfo, sizeof...(field)>{OptionInfo{field.name, option_type(field)}...};
    },
    Options::fields());

template <typename State>
constexpr auto kStateTable =
    std::apply([](const auto&... field) { return std::array<const char*, sizeof...(field)>{field.name...}; },
               State::fields());

template <typename Opt>
constexpr KindInputs inputs_of() {
  if constexpr (TakesSegmentsAndRows<Opt>)
    return KindInputs::segments_and_rows;
  else if constexpr (TakesSegments<Opt>)
    return KindInputs::segments;
  else
    return KindInputs::options;
}

const std::array<KindInfo, kOptimizerKindCount> kKinds = std::apply(
    [](const auto&... kind) {
      return std::array<KindInfo, kOptimizerKindCount>{KindInfo{
          kind.name, kind.python_class, inputs_of<typename std::remove_cvref_t<decltype(kind)>::Optimizer>(),
          kOptionTable<typename std::remove_cvref_t<decltype(kind)>::Options>,
          kStateTable<typename std::remove_cvref_t<decltype(kind)>::Optimizer::State>}...};
    },
    kOptimizerKinds);

// value -> member, of the option's own type.
void assign(double& member, const OptionValue& value) { member = std::get<double>(value); }
void assign(bool& member, const OptionValue& value) { member = std::get<bool>(value); }
void assign(WarmupSchedule& member, const OptionValue& value) {
  member = parse_warmup_schedule(std::get<std::string>(value));
}
OptionValue value_of(double member) { return member; }
OptionValue value_of(bool member) { return member; }
OptionValue value_of(WarmupSchedule member) { return std::string(to_string(member)); }

template <typename Options>
void apply_changes(Options& options, const OptionChanges& changes) {
  for (const auto& [index, value] : changes) {
    std::size_t at = 0;
    bool known = false;
    std::apply(
        [&](const auto&... field) {
          ((at++ == index ? (known = true, assign(options.*field.member, value)) : void()), ...);
        },
        Options::fields());
    if (!known) throw ArgumentError(concat("option index ", index, " is out of range"));
  }
}

template <typename Opt>
class Holder final : public AnyOptimizer {
 public:
  template <typename... Inputs>
  Holder(const KindInfo& kind, const typename Opt::Options& options, Inputs&&... inputs)
      : kind_(kind), opt_(options, std::forward<Inputs>(inputs)...) {}

  const KindInfo& kind() const noexcept override { return kind_; }

  std::vector<OptionValue> options() const override {
    std::vector<OptionValue> values;
    std::apply([&](const auto&... field) { (values.push_back(value_of(opt_.options().*field.member)), ...); },
               Opt::Options::fields());
    return values;
  }

  void set_options(const OptionChanges& changes) override {
    auto options = opt_.options();
    apply_changes(options, changes);
    opt_.set_options(options);
  }

  bool step(const FusedBuffers& buffers, std::span<float* const> state, double global_grad_norm) override {
    typename Opt::State st;
    const auto fields = Opt::State::fields();
    if (state.size() != fields.size())
      throw ArgumentError(
          concat(kind_.name, ": ", state.size(), " state pointers for ", fields.size(), " buffers"));
    for (std::size_t i = 0; i < fields.size(); ++i) st.*fields[i].member = state[i];
    if constexpr (TakesGlobalGradNorm<Opt>)
      return opt_.step(buffers, st, global_grad_norm);
    else
      return opt_.step(buffers, st);
  }

  std::int64_t step_count() const noexcept override { return opt_.step_count(); }
  void set_step_count(std::int64_t steps) override { opt_.set_step_count(steps); }

 protected:
  void* target(const std::type_info& type) noexcept override { return type == typeid(Opt) ? &opt_ : nullptr; }

 private:
  const KindInfo& kind_;
  Opt opt_;
};

template <typename Kind>
std::unique_ptr<AnyOptimizer> make_kind(const Kind& kind, const KindInfo& info, const OptionChanges& changes,
                                        std::vector<Segment>& segments, std::vector<std::size_t>& rows) {
  using Opt = typename Kind::Optimizer;
  typename Kind::Options options = kind.defaults;
  apply_changes(options, changes);
  if constexpr (TakesSegmentsAndRows<Opt>) {
    if (rows.empty()) rows.assign(segments.size(), 0);
    return std::make_unique<Holder<Opt>>(info, options, SegmentTable(std::move(segments)), std::move(rows));
  } else if constexpr (TakesSegments<Opt>) {
    return std::make_unique<Holder<Opt>>(info, options, SegmentTable(std::move(segments)));
  } else {
    return std::make_unique<Holder<Opt>>(info, options);
  }
}

}  // namespace

int KindInfo::option_index(std::string_view name) const {
  for (std::size_t i = 0; i < options.size(); ++i)
    if (name == options[i].name) return static_cast<int>(i);
  return -1;
}

int KindInfo::state_index(std::string_view name) const {
  for (std::size_t i = 0; i < state.size(); ++i)
    if (name == state[i]) return static_cast<int>(i);
  return -1;
}

std::span<const KindInfo> optimizer_kinds() { return kKinds; }

const KindInfo* find_optimizer_kind(std::string_view name) {
  for (const KindInfo& kind : kKinds)
    if (name == kind.name) return &kind;
  return nullptr;
}

std::optional<std::vector<float>> lamb_trust_ratios(AnyOptimizer& optimizer) {
  auto* lamb = optimizer.as<FusedLamb>();
  if (lamb == nullptr) return std::nullopt;
  const auto ratios = lamb->trust_ratios();
  return std::vector<float>(ratios.begin(), ratios.end());
}

std::optional<double> lamb_grad_sum_squares(AnyOptimizer& optimizer, const float* grads) {
  auto* lamb = optimizer.as<FusedLamb>();
  if (lamb == nullptr) return std::nullopt;
  return lamb->grad_sum_squares(grads);
}

std::optional<double> bert_adam_scheduled_lr(AnyOptimizer& optimizer) {
  auto* bert = optimizer.as<FusedBertAdam>();
  if (bert == nullptr) return std::nullopt;
  return bert->scheduled_lr();
}

std::optional<std::vector<const char*>> adamp_projections(AnyOptimizer& optimizer) {
  auto* adamp = optimizer.as<FusedAdamP>();
  if (adamp == nullptr) return std::nullopt;
  std::vector<const char*> names;
  for (const auto p : adamp->projections())
    names.push_back(p == FusedAdamP::Projection::channel ? "channel"
                    : p == FusedAdamP::Projection::layer ? "layer"
                                                         : "none");
  return names;
}

std::unique_ptr<AnyOptimizer> make_optimizer(const KindInfo& kind, const OptionChanges& changes,
                                             std::vector<Segment> segments, std::vector<std::size_t> rows) {
  std::unique_ptr<AnyOptimizer> made;
  std::size_t index = 0;
  for_each_optimizer_kind([&](const auto& registered) {
    if (&kKinds[index++] == &kind) made = make_kind(registered, kind, changes, segments, rows);
  });
  if (!made) throw ArgumentError(concat("unknown optimizer kind '", kind.name, "'"));
  return made;
}

}  // namespace apexnpu::rt::optim
