#pragma once
// The one list of the runtime's fused optimizers. Everything that enumerates them derives from
// kOptimizerKinds: the binding's Optimizer(kind) factory, its OPTIMIZERS and OPTIMIZER_CLASSES,
// and the description embedded in the runtime (registry_description.h) from which `apexnpu
// build` writes the manifest's list. A new optimizer needs more than its row here: every file it
// touches is listed in CONTRIBUTING.md's recipe "An optimizer", which test_contributing.py checks.
//
// What a kind needs besides its options follows from its constructor: a SegmentTable for the
// per-tensor optimizers, and dim-0 row counts too for AdamP.
#include <concepts>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <vector>

#include "optim/adadelta.h"
#include "optim/adam.h"
#include "optim/adamp.h"
#include "optim/bert_adam.h"
#include "optim/lamb.h"
#include "optim/rmsprop.h"
#include "optim/rmsprop_tf.h"
#include "optim/sgd.h"

namespace apexnpu::rt::optim {

template <typename OptimizerT>
struct OptimizerKind {
  using Optimizer = OptimizerT;
  using Options = typename OptimizerT::Options;

  const char* name;          // Optimizer(kind) in the binding; the manifest's list
  const char* python_class;  // the apex.optimizers class whose steps run this kind
  Options defaults{};        // the Python class's defaults, before its options are applied
};

inline constexpr std::tuple kOptimizerKinds{
    OptimizerKind<FusedSgd>{"sgd", "NpuFusedSGD"},
    OptimizerKind<FusedAdam>{"adam", "NpuFusedAdam"},
    OptimizerKind<FusedAdam>{"adamw", "NpuFusedAdamW", adamw_defaults()},
    OptimizerKind<FusedAdamP>{"adamp", "NpuFusedAdamP"},
    OptimizerKind<FusedBertAdam>{"bert_adam", "NpuFusedBertAdam"},
    OptimizerKind<FusedAdadelta>{"adadelta", "NpuFusedAdadelta"},
    OptimizerKind<FusedLamb>{"lamb", "NpuFusedLamb"},
    OptimizerKind<FusedRmsprop>{"rmsprop", "NpuFusedRMSprop"},
    OptimizerKind<FusedRmspropTf>{"rmsprop_tf", "NpuFusedRMSpropTF"},
};

inline constexpr std::size_t kOptimizerKindCount = std::tuple_size_v<decltype(kOptimizerKinds)>;

// fn(kind) for every kind, in the table's order.
template <typename Fn>
constexpr void for_each_optimizer_kind(Fn&& fn) {
  std::apply([&](const auto&... kind) { (fn(kind), ...); }, kOptimizerKinds);
}

// Constructed from its options and the segment table of the combined buffer's tensors.
template <typename Opt>
concept TakesSegments = std::constructible_from<Opt, const typename Opt::Options&, SegmentTable>;
// ... and each tensor's size along dim 0 (0: fewer than two dims).
template <typename Opt>
concept TakesSegmentsAndRows =
    std::constructible_from<Opt, const typename Opt::Options&, SegmentTable, std::vector<std::size_t>>;
// step() accepts a global gradient norm computed over several buffers.
template <typename Opt>
concept TakesGlobalGradNorm = requires(Opt& opt, const FusedBuffers& buffers,
                                       const typename Opt::State& state) {
  opt.step(buffers, state, 1.0);
};

}  // namespace apexnpu::rt::optim
