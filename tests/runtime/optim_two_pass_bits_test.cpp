// The two-pass optimizers (LAMB, AdamP, BertAdam with clipping) keep the exact bits they gave
// before their schedules were reworked (issue 16): three steps on layouts around the cache
// thresholds, hashed (params, fp16 copy, state), must equal the hashes recorded from the
// schedule of commit 1c4eb97, under every blocking the constructors accept. A schedule may only
// change where and when pieces run, never the pieces or the order their partials are added.
// The hashes hold at every ISA level and on both architectures (the dispatch test shows the
// levels agree; scalar is the same on x86-64 and aarch64).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "exec/thread_pool.h"
#include "optim_support.h"

namespace apexnpu::rt::optim::testing {
namespace {

// FNV-1a over the bytes, in order.
struct Hash {
  std::uint64_t h = 0xcbf29ce484222325ull;
  template <typename T>
  void add(const std::vector<T>& v) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
    for (std::size_t i = 0; i < v.size() * sizeof(T); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  }
};

// Layouts around the thresholds: tensors just below, at and above the 32 Ki-element cache
// block and the 64 Ki-element chunk; many small tensors; one tensor of many chunks.
std::vector<Layout> layouts() {
  std::vector<Layout> out;
  out.push_back(make_layout("around_block", {32752, 32768, 32769, 5, 65536, 65537, 100000, 40000},
                            {2047, 64, 0, 0, 256, 0, 400, 200}));
  out.push_back(many_small_layout(11, 1000, 200, 5));
  out.push_back(make_layout("one_huge", {300000}, {300}));
  out.push_back(make_layout("mixed", {300, 130000, 17, 90000, 70000, 1000, 200000, 9},
                            {3, 500, 0, 300, 0, 10, 1000, 0}));
  return out;
}

// Schedules every optimizer must give the same bits under: the default blocking on one thread,
// small blocks on two, blocks of one tensor on three.
struct Blocking {
  const char* name;
  std::size_t block_elements;
  std::size_t threads;
};
constexpr Blocking kBlockings[] = {
    {"default", kBlockElements, 1}, {"block_4096", 4096, 2}, {"block_1", 1, 3}};

struct TwoPassCase {
  std::string name;
  std::function<std::unique_ptr<Fused>(const Layout&, const Blocking&)> fused;
  Grads grads = Grads::random;
};

std::vector<TwoPassCase> cases() {
  std::vector<TwoPassCase> out;
  auto lamb = [&](std::string name, LambOptions o) {
    out.push_back({"Lamb_" + name, [o](const Layout& l, const Blocking& b) {
                     auto opt = std::make_shared<FusedLamb>(o, table(l), b.block_elements);
                     return make_fused(l, {0.0f, 0.0f}, [opt](const FusedBuffers& fb, States& s) {
                       return opt->step(fb, {at(s, 0), at(s, 1)});
                     });
                   }});
  };
  lamb("default", {});
  lamb("wd_global_norm", {.lr = 2e-3, .weight_decay = 1e-2, .use_global_grad_norm = true});
  lamb("adam", {.weight_decay = 1e-2, .adam = true});
  auto adamp = [&](std::string name, AdamPOptions o) {
    out.push_back({"AdamP_" + name,
                   [o](const Layout& l, const Blocking& b) {
                     auto opt = std::make_shared<FusedAdamP>(o, table(l), l.rows, b.block_elements);
                     return make_fused(l, {0.0f, 0.0f}, [opt](const FusedBuffers& fb, States& s) {
                       return opt->step(fb, {at(s, 0), at(s, 1)});
                     });
                   },
                   Grads::adamp_mix});
  };
  adamp("default", {});
  adamp("nesterov_wd", {.lr = 2e-3, .weight_decay = 1e-2, .nesterov = true});
  out.push_back({"BertAdam_clip", [](const Layout& l, const Blocking& b) {
                   auto opt = std::make_shared<FusedBertAdam>(
                       BertAdamOptions{.lr = 2e-3, .warmup = 0.1, .t_total = 100, .max_grad_norm = 1.0},
                       table(l), b.block_elements);
                   return make_fused(l, {0.0f, 0.0f}, [opt](const FusedBuffers& fb, States& s) {
                     return opt->step(fb, {at(s, 0), at(s, 1)});
                   });
                 }});
  return out;
}

// Three steps; the first run draws the gradients (AdamP's depend on the params) and records
// them, the others replay them, so every schedule sees the same inputs (and the test spends its
// time in the optimizers, not in the random draws).
std::uint64_t run(const TwoPassCase& c, const Layout& layout, const Blocking& blocking, bool half_mode,
                  std::vector<std::vector<float>>& grads) {
  Problem problem(layout, half_mode, 2024);
  auto fused = c.fused(layout, blocking);
  const bool record = grads.empty();
  for (std::size_t step = 0; step < 3; ++step) {
    if (record) {
      problem.next_grads(c.grads);
      grads.push_back(problem.grads);
    } else {
      problem.grads = grads[step];
    }
    fused->step(problem.buffers());
  }
  Hash hash;
  hash.add(problem.params);
  hash.add(problem.half);
  for (const auto& s : fused->state) hash.add(s);
  return hash.h;
}

// Recorded at commit 1c4eb97 (scalar level, x86-64), in the order case x layout x mode of the
// loops below.
constexpr std::uint64_t kRecorded[] = {
    0xa9bc1e0b1114dff5ull,  // Lamb_default around_block fp32
    0xb630a3b23b057f2dull,  // Lamb_default around_block fp16
    0xb87e48beb28d3988ull,  // Lamb_default many_small fp32
    0x09392be9c5536577ull,  // Lamb_default many_small fp16
    0xb3be15ce516799b5ull,  // Lamb_default one_huge fp32
    0xf7d96f3ee9e36a08ull,  // Lamb_default one_huge fp16
    0xa63da0e34575cfa0ull,  // Lamb_default mixed fp32
    0x4adbafda5c75d4b5ull,  // Lamb_default mixed fp16
    0x142846f7c8cc667eull,  // Lamb_wd_global_norm around_block fp32
    0xb63ea5084aa464f4ull,  // Lamb_wd_global_norm around_block fp16
    0xaf43092d3ceffa34ull,  // Lamb_wd_global_norm many_small fp32
    0x5eef984c76c35328ull,  // Lamb_wd_global_norm many_small fp16
    0x148fb5219e30e2e9ull,  // Lamb_wd_global_norm one_huge fp32
    0x0b6bbace8ed04a60ull,  // Lamb_wd_global_norm one_huge fp16
    0xe624fcf6a4e23ac0ull,  // Lamb_wd_global_norm mixed fp32
    0x0407df57fb743fa7ull,  // Lamb_wd_global_norm mixed fp16
    0x593e20057556ee0dull,  // Lamb_adam around_block fp32
    0x11439faf58f53494ull,  // Lamb_adam around_block fp16
    0x5741fc584cf6e4b2ull,  // Lamb_adam many_small fp32
    0x0e1ec09fb7200a91ull,  // Lamb_adam many_small fp16
    0x932553f36f1f0f90ull,  // Lamb_adam one_huge fp32
    0x9648c9523e765e56ull,  // Lamb_adam one_huge fp16
    0xce89698479725eceull,  // Lamb_adam mixed fp32
    0xba437c9e7d14592eull,  // Lamb_adam mixed fp16
    0x9d36261cae2b3b50ull,  // AdamP_default around_block fp32
    0xd26c2fe852c66998ull,  // AdamP_default around_block fp16
    0x284b840bc6a75d8full,  // AdamP_default many_small fp32
    0xa9405d0ca6c29c8eull,  // AdamP_default many_small fp16
    0xf7301f32e011bab5ull,  // AdamP_default one_huge fp32
    0x68750a1214bb3787ull,  // AdamP_default one_huge fp16
    0x8148cf91d8a4fe92ull,  // AdamP_default mixed fp32
    0xcea213688bdee933ull,  // AdamP_default mixed fp16
    0xdc1e3bb90012b7b3ull,  // AdamP_nesterov_wd around_block fp32
    0xbc323943d6d0c188ull,  // AdamP_nesterov_wd around_block fp16
    0x8aa04b2e2f234dcdull,  // AdamP_nesterov_wd many_small fp32
    0x1d843477f941051cull,  // AdamP_nesterov_wd many_small fp16
    0xc702ecdd18bcba51ull,  // AdamP_nesterov_wd one_huge fp32
    0x9e6e580c7c6b0fd9ull,  // AdamP_nesterov_wd one_huge fp16
    0x276bf4122ba87997ull,  // AdamP_nesterov_wd mixed fp32
    0x69877d1d7d26b62eull,  // AdamP_nesterov_wd mixed fp16
    0x29a5e139a10794cdull,  // BertAdam_clip around_block fp32
    0x85e300d19850c6cbull,  // BertAdam_clip around_block fp16
    0x48817386b057f7ccull,  // BertAdam_clip many_small fp32
    0x4519b96537037d3eull,  // BertAdam_clip many_small fp16
    0x5cf6d8ab9b84b5f3ull,  // BertAdam_clip one_huge fp32
    0xe0194fee016235fbull,  // BertAdam_clip one_huge fp16
    0x91fcd63495c5f745ull,  // BertAdam_clip mixed fp32
    0xb974de7c8bae4143ull,  // BertAdam_clip mixed fp16
};

TEST(OptimTwoPassBits, SameBitsAsBeforeUnderEveryBlockingAndThreadCount) {
  std::size_t index = 0;
  std::string table_text;
  for (const TwoPassCase& c : cases()) {
    for (const Layout& layout : layouts()) {
      for (const bool half_mode : {false, true}) {
        const std::string where = c.name + " " + layout.name + (half_mode ? " fp16" : " fp32");
        std::uint64_t first = 0;
        std::vector<std::vector<float>> grads;
        for (const Blocking& blocking : kBlockings) {
          ScopedNumThreads scoped(blocking.threads);
          const std::uint64_t h = run(c, layout, blocking, half_mode, grads);
          if (&blocking == &kBlockings[0]) first = h;
          EXPECT_EQ(h, first) << where << ", " << blocking.name << " x" << blocking.threads;
        }
        char line[96];
        std::snprintf(line, sizeof line, "    0x%016llxull,  // %s\n", static_cast<unsigned long long>(first),
                      where.c_str());
        table_text += line;
        if (index < std::size(kRecorded)) {
          EXPECT_EQ(first, kRecorded[index]) << where;
        }
        ++index;
      }
    }
  }
  EXPECT_EQ(index, std::size(kRecorded)) << "the recorded hashes, for reference:\n" << table_text;
}

}  // namespace
}  // namespace apexnpu::rt::optim::testing
