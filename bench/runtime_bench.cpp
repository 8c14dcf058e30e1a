// Step time and effective bandwidth of the fused optimizers at 1M, 16M and 64M fp32 params with
// 1 and 2 threads, beside STREAM-style kernels measured in the same run on the same thread pool:
// read-modify-write `a += s * b` (12 B/elem) and triad `a = b + s * c` (12 B/elem counted, as
// STREAM does, though the store to `a` also costs a read-for-ownership).
//
// bytes_per_second counts each optimizer's essential traffic: one pass reading and writing
// every buffer the algorithm needs (Adam: p rw, g r, m rw, v rw = 28 B/elem; SGD with
// momentum: 20). Optimizers that need per-tensor reductions make more passes than that; their
// actual traffic is in the `actual_B_per_elem` counter. bench/runtime_ratios.py prints each
// bandwidth as a fraction of the same run's read-modify-write bandwidth.
//
//   build/<dir>/bench/runtime_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/device.h"
#include "exec/chunking.h"
#include "exec/thread_pool.h"
#include "optim/registry.h"
#include "tensor/storage.h"

namespace apexnpu::rt::bench {
namespace {

using namespace apexnpu::rt::optim;

constexpr std::size_t kMi = std::size_t{1} << 20;
// Tensors of the benchmark model: 1 Mi elements of storage each (1 Mi - 32 elements plus
// combine()'s 32 of padding), so segment-based optimizers see realistic per-tensor work.
constexpr std::size_t kTensorStorage = kMi;
constexpr std::size_t kMaxBuffers = 6;

// fp32 buffers of n elements, allocated and first-touched once per size, reused by every
// benchmark of that size (reallocated when the size changes; benchmarks run size by size).
class Buffers {
 public:
  static Buffers& of(std::size_t n) {
    std::unique_ptr<Buffers>& buffers = current();
    if (!buffers || buffers->n_ != n) {
      buffers.reset();  // free the old size first
      buffers = std::make_unique<Buffers>(n);
    }
    return *buffers;
  }
  // Frees the buffers; main calls it before the devices (static objects) go away.
  static void release() { current().reset(); }
  explicit Buffers(std::size_t n) : n_(n) {
    for (std::size_t i = 0; i < kMaxBuffers; ++i) storage_.push_back(Storage::allocate(device(0), n * 4));
    half_ = Storage::allocate(device(0), n * 2);
    reset();
  }
  float* operator[](std::size_t i) const { return static_cast<float*>(storage_[i]->data()); }
  half_bits* half() const { return static_cast<half_bits*>(half_->data()); }
  std::size_t size() const { return n_; }

  // Params 0.5, grads 1e-3 with a pattern, states 0 (or `state_init`): no denormals appear.
  void reset(float state_init = 0.0f) const {
    parallel_for(chunk_count(n_), [&](std::size_t c) {
      const ChunkRange r = chunk_range(c, n_);
      for (std::size_t i = r.begin; i < r.end; ++i) {
        (*this)[0][i] = 0.5f;
        (*this)[1][i] = 1e-3f * static_cast<float>(1 + (i & 7));
        for (std::size_t b = 2; b < kMaxBuffers; ++b) (*this)[b][i] = state_init;
      }
    });
  }

 private:
  static std::unique_ptr<Buffers>& current() {
    static std::unique_ptr<Buffers> buffers;
    return buffers;
  }
  std::size_t n_;
  std::vector<std::shared_ptr<Storage>> storage_;
  std::shared_ptr<Storage> half_;
};

SegmentTable model_segments(std::size_t n, std::size_t storage = kTensorStorage) {
  std::vector<Segment> segments;
  for (std::size_t offset = 0; offset + storage <= n; offset += storage) {
    segments.push_back({offset, storage - 32});
  }
  return SegmentTable(std::move(segments));
}

// One optimizer step over the buffers; made once per benchmark run, outside the timing loop.
using Step = std::function<void()>;
using MakeStep = std::function<Step(const Buffers&, FusedBuffers)>;

struct OptimizerBench {
  std::string name;
  double bytes_per_elem;         // essential: one pass over every buffer the algorithm needs
  double actual_bytes_per_elem;  // what this implementation moves
  MakeStep make;
  float state_init = 0.0f;
};

std::vector<OptimizerBench> optimizers() {
  std::vector<OptimizerBench> out;
  out.push_back({"SGD_momentum", 20, 20, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedSgd>(SgdOptions{.lr = 0.01, .momentum = 0.9});
                   return [=] { opt->step(fb, {b[2]}); };
                 }});
  out.push_back({"Adam", 28, 28, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedAdam>(AdamOptions{});
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  out.push_back({"AdamW", 28, 28, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedAdam>(adamw_defaults());
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  // Two passes for >= 2-D tensors: moments + row sums (p r, g r, m rw, v rw), then the update
  // (p rw, m r, v r).
  out.push_back({"AdamP", 28, 40, [](const Buffers& b, FusedBuffers fb) -> Step {
                   const SegmentTable t = model_segments(fb.numel);
                   auto opt =
                       std::make_shared<FusedAdamP>(AdamPOptions{.weight_decay = 1e-2}, t,
                                                    std::vector<std::size_t>(t.size(), 992));  // 992 x 1057
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  out.push_back({"BertAdam", 28, 28, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt =
                       std::make_shared<FusedBertAdam>(BertAdamOptions{.lr = 1e-3}, model_segments(fb.numel));
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  out.push_back({"BertAdam_clip", 28, 32, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedBertAdam>(
                       BertAdamOptions{.lr = 1e-3, .max_grad_norm = 1.0}, model_segments(fb.numel));
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  out.push_back({"Adadelta", 28, 28, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedAdadelta>(AdadeltaOptions{});
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  // Two passes: moments + norms (p r, g r, m rw, v rw), then the update (p rw, m r, v r).
  out.push_back({"Lamb", 28, 40, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedLamb>(LambOptions{}, model_segments(fb.numel));
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  // Tensors of 16 Ki elements: blocks of small tensors run both passes on one core, the second
  // from L2 (work_plan.h), so memory sees about one pass.
  out.push_back({"Lamb_16K_tensors", 28, 28, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedLamb>(LambOptions{}, model_segments(fb.numel, 16 * 1024));
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  // Lamb's two passes after a read of every gradient for the global norm.
  out.push_back({"NpuFusedLamb_global_norm", 28, 44, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedLamb>(LambOptions{.use_global_grad_norm = true},
                                                          model_segments(fb.numel));
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  out.push_back({"RMSprop", 20, 20, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedRmsprop>(RmspropOptions{});
                   return [=] { opt->step(fb, {b[2]}); };
                 }});
  out.push_back({"RMSpropTF", 20, 20,
                 [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedRmspropTf>(RmspropTfOptions{});
                   return [=] { opt->step(fb, {b[2]}); };
                 },
                 FusedRmspropTf::kSquareAvgInit});
  // fp16 model params with fp32 master: the fp16 copy adds a 2 B/elem store.
  out.push_back({"Adam_fp16_master", 30, 30, [](const Buffers& b, FusedBuffers fb) -> Step {
                   auto opt = std::make_shared<FusedAdam>(AdamOptions{});
                   fb.half_params = b.half();
                   return [=] { opt->step(fb, {b[2], b[3]}); };
                 }});
  return out;
}

void set_threads(std::size_t threads) {
  if (num_threads() != threads) set_num_threads(threads);
}

void run_optimizer(benchmark::State& state, const OptimizerBench& bench, std::size_t n, std::size_t threads) {
  set_threads(threads);
  const Buffers& buffers = Buffers::of(n);
  buffers.reset(bench.state_init);
  const FusedBuffers fb{buffers[0], buffers[1], nullptr, n, &device(0)};
  const Step step = bench.make(buffers, fb);
  step();  // warm-up (and SGD's first step, which skips the momentum-buffer read)
  for (auto _ : state) step();
  const double elems = static_cast<double>(n) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(elems * bench.bytes_per_elem));
  state.counters["B_per_elem"] = bench.bytes_per_elem;
  state.counters["actual_B_per_elem"] = bench.actual_bytes_per_elem;
  state.counters["threads"] = static_cast<double>(threads);
  state.counters["n"] = static_cast<double>(n);
  device(0).float_status().clear();
}

// STREAM-style kernels, compiled for the best ISA the CPU has (function multiversioning), run
// over the same fixed chunks and thread pool as the optimizers.
__attribute__((target_clones("avx512f", "avx2", "default"))) void rmw_range(float* __restrict a,
                                                                            const float* __restrict b,
                                                                            float s, std::size_t begin,
                                                                            std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) a[i] += s * b[i];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void triad_range(float* __restrict a,
                                                                              const float* __restrict b,
                                                                              const float* __restrict c,
                                                                              float s, std::size_t begin,
                                                                              std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
}

void run_stream(benchmark::State& state, bool triad, std::size_t n, std::size_t threads) {
  set_threads(threads);
  const Buffers& buffers = Buffers::of(n);
  buffers.reset();
  float* a = buffers[2];
  const float* b = buffers[1];
  const float* c = buffers[0];
  auto pass = [&] {
    parallel_for(chunk_count(n), [&](std::size_t k) {
      const ChunkRange r = chunk_range(k, n);
      if (triad) {
        triad_range(a, b, c, 1e-3f, r.begin, r.end);
      } else {
        rmw_range(a, b, 1e-3f, r.begin, r.end);
      }
    });
  };
  pass();
  for (auto _ : state) pass();
  state.SetBytesProcessed(
      static_cast<std::int64_t>(12.0 * static_cast<double>(n) * static_cast<double>(state.iterations())));
  state.counters["B_per_elem"] = 12;
  state.counters["actual_B_per_elem"] = triad ? 16 : 12;
  state.counters["threads"] = static_cast<double>(threads);
  state.counters["n"] = static_cast<double>(n);
}

// Names: <kernel>/<n in Mi>M/threads:<t>, e.g. "Adam/64M/threads:2", "stream_rmw/64M/threads:2".
void register_all() {
  for (const std::size_t millions : {1, 16, 64}) {
    const std::size_t n = millions * kMi;
    for (const std::size_t threads : {1, 2}) {
      std::string suffix = "/";
      suffix.append(std::to_string(millions)).append("M/threads:").append(std::to_string(threads));
      benchmark::RegisterBenchmark(std::string("stream_rmw").append(suffix).c_str(), run_stream, false, n,
                                   threads)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      benchmark::RegisterBenchmark(std::string("stream_triad").append(suffix).c_str(), run_stream, true, n,
                                   threads)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      for (const OptimizerBench& bench : optimizers()) {
        benchmark::RegisterBenchmark(std::string(bench.name).append(suffix).c_str(), run_optimizer, bench, n,
                                     threads)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
}

}  // namespace
}  // namespace apexnpu::rt::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  apexnpu::rt::bench::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  apexnpu::rt::bench::Buffers::release();
  return 0;
}
