#pragma once
// Shared by the optim_*_test.cpp files: combined-buffer layouts, the fused optimizers behind one
// interface with their state buffers, and double-precision references written from the
// published formulas (torch.optim for SGD/Adam/AdamW/Adadelta/RMSprop, clovaai AdamP,
// pytorch-pretrained-bert BertAdam, cybertronai/Ascend LAMB, timm RMSpropTF).
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "exec/half.h"
#include "optim/adadelta.h"
#include "optim/adam.h"
#include "optim/adamp.h"
#include "optim/bert_adam.h"
#include "optim/lamb.h"
#include "optim/registry.h"
#include "optim/rmsprop.h"
#include "optim/rmsprop_tf.h"
#include "optim/sgd.h"
#include "tensor/segment_table.h"

namespace apexnpu::rt::optim::testing {

// Tensors placed as combine() places them: ceil(numel/16)*16 + 32 elements each, in order.
struct Layout {
  std::string name;
  std::vector<std::size_t> numels;
  std::vector<std::size_t> rows;  // AdamP: size of dim 0 for tensors of >= 2 dims, else 0
  std::vector<Segment> segments;
  std::size_t total = 0;
};

inline Layout make_layout(std::string name, std::vector<std::size_t> numels, std::vector<std::size_t> rows) {
  Layout l{std::move(name), std::move(numels), std::move(rows), {}, 0};
  for (std::size_t n : l.numels) {
    l.segments.push_back({l.total, n});
    l.total += (n + 15) / 16 * 16 + 32;
  }
  return l;
}

// `count` tensors of 1 to `max_numel` elements drawn from `seed`; AdamP sees those of a numel
// divisible by 4 as 4 rows, the others divisible by `odd_rows` as that many, the rest as 1-d.
inline Layout many_small_layout(unsigned seed, int count, std::size_t max_numel, std::size_t odd_rows) {
  std::vector<std::size_t> small, small_rows;
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    const std::size_t n = 1 + rng() % max_numel;
    small.push_back(n);
    small_rows.push_back(n % 4 == 0 ? 4 : n % odd_rows == 0 ? odd_rows : 0);
  }
  return make_layout("many_small", small, small_rows);
}

// One big tensor (two chunks), many small ones, sizes that are not multiples of 16.
inline std::vector<Layout> standard_layouts() {
  std::vector<Layout> out;
  out.push_back(make_layout("one_big", {70000}, {280}));
  out.push_back(many_small_layout(7, 300, 120, 3));
  out.push_back(make_layout("odd_sizes", {17, 1000, 33, 4099, 9999, 5, 20001}, {0, 10, 3, 0, 3, 0, 59}));
  return out;
}

// Spans several chunks, so threads 1/2/3 split it differently.
inline Layout wide_layout() { return make_layout("wide", {150000, 77, 40000, 1500, 3}, {600, 0, 0, 3, 0}); }

// The compiler's IEEE binary16 type, which converts from float rounding to nearest even:
// _Float16, or __fp16 on aarch64 (gcc 12 has no _Float16 in C++ there).
#if defined(__aarch64__)
using CompilerHalf = __fp16;
#else
using CompilerHalf = _Float16;
#endif

// IEEE round-to-nearest-even to fp16 (the compiler's half type), then the NPU's saturation.
inline half_bits saturated_half(float x) {
  if (std::isnan(x)) return 0;
  if (x > 65504.0f) x = 65504.0f;
  if (x < -65504.0f) x = -65504.0f;
  const CompilerHalf h = static_cast<CompilerHalf>(x);
  half_bits bits;
  static_assert(sizeof h == sizeof bits);
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

// |fused - reference| / max(|reference|, 0.1), the largest over the buffer. Params start in
// [-1, 1]; an fp32 param of magnitude ~1 is rounded (by 2^-25 or less) at every step, so after
// 100 steps a value that has since crossed zero can carry ~1e-6 of absolute error whatever the
// kernel does. Values below 0.1 are therefore held to 1e-6 absolute, the rest to 1e-5 relative.
inline double max_relative_error(const std::vector<float>& fused, const std::vector<double>& ref,
                                 std::size_t* worst = nullptr) {
  double max_error = 0.0;
  for (std::size_t i = 0; i < fused.size(); ++i) {
    const double e = std::fabs(fused[i] - ref[i]) / std::fmax(std::fabs(ref[i]), 0.1);
    if (!(e <= max_error)) {
      max_error = e;
      if (worst != nullptr) *worst = i;
    }
  }
  return max_error;
}

// ---- the fused side: an optimizer and its state buffers ----

using States = std::vector<std::vector<float>>;

class Fused {
 public:
  virtual ~Fused() = default;
  virtual bool step(const FusedBuffers& b) = 0;
  States state;
};

template <typename Fn>
class FusedFn final : public Fused {
 public:
  FusedFn(const Layout& l, const std::vector<float>& init, Fn fn) : fn_(std::move(fn)) {
    for (float v : init) state.emplace_back(l.total, v);
  }
  bool step(const FusedBuffers& b) override { return fn_(b, state); }

 private:
  Fn fn_;
};

template <typename Fn>
std::unique_ptr<Fused> make_fused(const Layout& l, const std::vector<float>& init, Fn fn) {
  return std::make_unique<FusedFn<Fn>>(l, init, std::move(fn));
}

inline float* at(States& s, std::size_t i) { return i < s.size() ? s[i].data() : nullptr; }

// ---- the references (double precision, the published formulas) ----

class Reference {
 public:
  explicit Reference(const Layout& l) : layout(l) {}
  virtual ~Reference() = default;
  virtual void step(std::vector<double>& p, const std::vector<double>& g) = 0;

 protected:
  static std::vector<double> zeros(const Layout& l) { return std::vector<double>(l.total, 0.0); }
  const Layout& layout;
};

class SgdReference final : public Reference {
 public:
  SgdReference(const Layout& l, SgdOptions o) : Reference(l), o_(o), buf_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    for (std::size_t i = 0; i < p.size(); ++i) {
      double d = g[i] + o_.weight_decay * p[i];
      if (o_.momentum != 0.0) {
        buf_[i] = first_ ? d : o_.momentum * buf_[i] + (1.0 - o_.dampening) * d;
        d = o_.nesterov ? d + o_.momentum * buf_[i] : buf_[i];
      }
      p[i] -= o_.lr * d;
    }
    first_ = false;
  }

 private:
  SgdOptions o_;
  std::vector<double> buf_;
  bool first_ = true;
};

class AdamReference final : public Reference {
 public:
  AdamReference(const Layout& l, AdamOptions o)
      : Reference(l), o_(o), m_(zeros(l)), v_(zeros(l)), vmax_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    ++t_;
    const double bc1 = 1.0 - std::pow(o_.beta1, t_), bc2 = 1.0 - std::pow(o_.beta2, t_);
    for (std::size_t i = 0; i < p.size(); ++i) {
      double gi = g[i];
      if (o_.decoupled_weight_decay) {
        p[i] *= 1.0 - o_.lr * o_.weight_decay;
      } else {
        gi += o_.weight_decay * p[i];
      }
      m_[i] = o_.beta1 * m_[i] + (1.0 - o_.beta1) * gi;
      v_[i] = o_.beta2 * v_[i] + (1.0 - o_.beta2) * gi * gi;
      double v = v_[i];
      if (o_.amsgrad) v = vmax_[i] = std::fmax(vmax_[i], v_[i]);
      const double denom = std::sqrt(v) / std::sqrt(bc2) + o_.eps;
      p[i] -= o_.lr / bc1 * m_[i] / denom;
    }
  }

 private:
  AdamOptions o_;
  std::vector<double> m_, v_, vmax_;
  int t_ = 0;
};

class AdamPReference final : public Reference {
 public:
  AdamPReference(const Layout& l, AdamPOptions o) : Reference(l), o_(o), m_(zeros(l)), v_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    ++t_;
    const double bc1 = 1.0 - std::pow(o_.beta1, t_), bc2 = 1.0 - std::pow(o_.beta2, t_);
    for (std::size_t s = 0; s < layout.segments.size(); ++s) {
      const std::size_t off = layout.segments[s].offset, n = layout.segments[s].numel;
      std::vector<double> perturb(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = off + i;
        m_[k] = o_.beta1 * m_[k] + (1.0 - o_.beta1) * g[k];
        v_[k] = o_.beta2 * v_[k] + (1.0 - o_.beta2) * g[k] * g[k];
        const double denom = std::sqrt(v_[k]) / std::sqrt(bc2) + o_.eps;
        perturb[i] = (o_.nesterov ? o_.beta1 * m_[k] + (1.0 - o_.beta1) * g[k] : m_[k]) / denom;
      }
      double wd_ratio = 1.0;
      const std::size_t rows = layout.rows[s];
      if (rows > 0 && n > 0) {
        // _projection: the channel view (rows x n/rows), then the layer view (1 x n).
        for (const std::size_t view_rows : {rows, std::size_t{1}}) {
          const std::size_t len = n / view_rows;
          double max_cos = 0.0;
          for (std::size_t r = 0; r < view_rows; ++r) {
            double gp = 0, gg = 0, pp = 0;
            for (std::size_t i = r * len; i < (r + 1) * len; ++i) {
              gp += g[off + i] * p[off + i];
              gg += g[off + i] * g[off + i];
              pp += p[off + i] * p[off + i];
            }
            max_cos = std::fmax(max_cos, std::fabs(gp) / (std::fmax(std::sqrt(gg), o_.eps) *
                                                          std::fmax(std::sqrt(pp), o_.eps)));
          }
          if (max_cos < o_.delta / std::sqrt(static_cast<double>(len))) {
            for (std::size_t r = 0; r < view_rows; ++r) {
              double pp = 0;
              for (std::size_t i = r * len; i < (r + 1) * len; ++i) pp += p[off + i] * p[off + i];
              const double norm = std::sqrt(pp) + o_.eps;
              double dot = 0;  // (p_n * perturb).sum()
              for (std::size_t i = r * len; i < (r + 1) * len; ++i) dot += p[off + i] / norm * perturb[i];
              for (std::size_t i = r * len; i < (r + 1) * len; ++i) perturb[i] -= p[off + i] / norm * dot;
            }
            wd_ratio = o_.wd_ratio;
            break;
          }
        }
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (o_.weight_decay > 0) p[off + i] *= 1.0 - o_.lr * o_.weight_decay * wd_ratio;
        p[off + i] -= o_.lr / bc1 * perturb[i];
      }
    }
  }

 private:
  AdamPOptions o_;
  std::vector<double> m_, v_;
  int t_ = 0;
};

// pytorch-pretrained-bert 0.6 schedules, progress x = step / t_total.
inline double bert_schedule(WarmupSchedule s, double x, double warmup) {
  warmup = std::fmax(warmup, 0.0);
  if (s == WarmupSchedule::none) return 1.0;
  if (x < warmup) return x / warmup;
  if (s == WarmupSchedule::warmup_constant) return 1.0;
  if (s == WarmupSchedule::warmup_linear) return std::fmax((x - 1.0) / (warmup - 1.0), 0.0);
  return 0.5 * (1.0 + std::cos(std::numbers::pi * (x - warmup) / (1.0 - warmup)));
}

class BertAdamReference final : public Reference {
 public:
  BertAdamReference(const Layout& l, BertAdamOptions o) : Reference(l), o_(o), m_(zeros(l)), v_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    const double lr =
        o_.t_total < 0 ? o_.lr : o_.lr * bert_schedule(o_.schedule, step_ / o_.t_total, o_.warmup);
    for (const Segment& seg : layout.segments) {
      double clip = 1.0;
      if (o_.max_grad_norm > 0) {  // clip_grad_norm_(p, max_grad_norm)
        double ss = 0;
        for (std::size_t k = seg.offset; k < seg.offset + seg.numel; ++k) ss += g[k] * g[k];
        clip = std::fmin(o_.max_grad_norm / (std::sqrt(ss) + 1e-6), 1.0);
      }
      for (std::size_t k = seg.offset; k < seg.offset + seg.numel; ++k) {
        const double gk = g[k] * clip;
        m_[k] = o_.b1 * m_[k] + (1.0 - o_.b1) * gk;
        v_[k] = o_.b2 * v_[k] + (1.0 - o_.b2) * gk * gk;
        double update = m_[k] / (std::sqrt(v_[k]) + o_.e);
        if (o_.weight_decay > 0.0) update += o_.weight_decay * p[k];
        p[k] -= lr * update;
      }
    }
    step_ += 1.0;
  }

 private:
  BertAdamOptions o_;
  std::vector<double> m_, v_;
  double step_ = 0.0;
};

class AdadeltaReference final : public Reference {
 public:
  AdadeltaReference(const Layout& l, AdadeltaOptions o)
      : Reference(l), o_(o), sq_(zeros(l)), acc_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double gi = g[i] + o_.weight_decay * p[i];
      sq_[i] = o_.rho * sq_[i] + (1.0 - o_.rho) * gi * gi;
      const double delta = std::sqrt(acc_[i] + o_.eps) / std::sqrt(sq_[i] + o_.eps) * gi;
      acc_[i] = o_.rho * acc_[i] + (1.0 - o_.rho) * delta * delta;
      p[i] -= o_.lr * delta;
    }
  }

 private:
  AdadeltaOptions o_;
  std::vector<double> sq_, acc_;
};

class LambReference final : public Reference {
 public:
  LambReference(const Layout& l, LambOptions o) : Reference(l), o_(o), m_(zeros(l)), v_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    double scale = 1.0;
    if (o_.use_global_grad_norm) {
      double ss = 0;
      for (const Segment& seg : layout.segments)
        for (std::size_t k = seg.offset; k < seg.offset + seg.numel; ++k) ss += g[k] * g[k];
      if (std::sqrt(ss) > 1.0) scale = 1.0 / std::sqrt(ss);
    }
    for (const Segment& seg : layout.segments) {
      std::vector<double> update(seg.numel);
      double pp = 0, uu = 0;
      for (std::size_t i = 0; i < seg.numel; ++i) {
        const std::size_t k = seg.offset + i;
        const double gk = g[k] * scale;
        m_[k] = o_.beta1 * m_[k] + (1.0 - o_.beta1) * gk;
        v_[k] = o_.beta2 * v_[k] + (1.0 - o_.beta2) * gk * gk;
        update[i] = m_[k] / (std::sqrt(v_[k]) + o_.eps) + o_.weight_decay * p[k];
        pp += p[k] * p[k];
        uu += update[i] * update[i];
      }
      const double weight_norm = std::fmin(std::sqrt(pp), 10.0), adam_norm = std::sqrt(uu);
      double trust = weight_norm == 0 || adam_norm == 0 ? 1.0 : weight_norm / adam_norm;
      if (o_.adam) trust = 1.0;
      for (std::size_t i = 0; i < seg.numel; ++i) p[seg.offset + i] -= o_.lr * trust * update[i];
    }
  }

 private:
  LambOptions o_;
  std::vector<double> m_, v_;
};

class RmspropReference final : public Reference {
 public:
  RmspropReference(const Layout& l, RmspropOptions o)
      : Reference(l), o_(o), sq_(zeros(l)), ga_(zeros(l)), buf_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double gi = g[i] + o_.weight_decay * p[i];
      sq_[i] = o_.alpha * sq_[i] + (1.0 - o_.alpha) * gi * gi;
      double avg;
      if (o_.centered) {
        ga_[i] = o_.alpha * ga_[i] + (1.0 - o_.alpha) * gi;
        avg = std::sqrt(sq_[i] - ga_[i] * ga_[i]) + o_.eps;
      } else {
        avg = std::sqrt(sq_[i]) + o_.eps;
      }
      if (o_.momentum > 0) {
        buf_[i] = o_.momentum * buf_[i] + gi / avg;
        p[i] -= o_.lr * buf_[i];
      } else {
        p[i] -= o_.lr * gi / avg;
      }
    }
  }

 private:
  RmspropOptions o_;
  std::vector<double> sq_, ga_, buf_;
};

class RmspropTfReference final : public Reference {
 public:
  RmspropTfReference(const Layout& l, RmspropTfOptions o)
      : Reference(l), o_(o), sq_(l.total, 1.0), ga_(zeros(l)), buf_(zeros(l)) {}
  void step(std::vector<double>& p, const std::vector<double>& g) override {
    for (std::size_t i = 0; i < p.size(); ++i) {
      double gi = g[i];
      if (o_.weight_decay != 0) {
        if (o_.decoupled_decay) {
          p[i] *= 1.0 - o_.lr * o_.weight_decay;
        } else {
          gi += o_.weight_decay * p[i];
        }
      }
      sq_[i] += (1.0 - o_.alpha) * (gi * gi - sq_[i]);
      double avg;
      if (o_.centered) {
        ga_[i] += (1.0 - o_.alpha) * (gi - ga_[i]);
        avg = std::sqrt(sq_[i] - ga_[i] * ga_[i] + o_.eps);
      } else {
        avg = std::sqrt(sq_[i] + o_.eps);
      }
      if (o_.momentum > 0) {
        if (o_.lr_in_momentum) {
          buf_[i] = o_.momentum * buf_[i] + o_.lr * gi / avg;
          p[i] -= buf_[i];
        } else {
          buf_[i] = o_.momentum * buf_[i] + gi / avg;
          p[i] -= o_.lr * buf_[i];
        }
      } else {
        p[i] -= o_.lr * gi / avg;
      }
    }
  }

 private:
  RmspropTfOptions o_;
  std::vector<double> sq_, ga_, buf_;
};

// ---- the cases: every kind of the registry with the option combinations that change its code
// path ----

enum class Grads { random, adamp_mix };  // adamp_mix: some tensors orthogonal to their weights

struct Case {
  std::string name;
  std::function<std::unique_ptr<Fused>(const Layout&)> fused;
  std::function<std::unique_ptr<Reference>(const Layout&)> reference;
  Grads grads = Grads::random;
};

inline SegmentTable table(const Layout& l) { return SegmentTable(l.segments); }

// The two-pass optimizers run with small cache blocks in the tests, so every layout spans
// several blocks (a block always holds whole tensors, so a bigger tensor is a block alone).
inline constexpr std::size_t kTestBlockElements = 4096;

template <typename Options>
using Variants = std::vector<std::pair<std::string, Options>>;
// Options a kind refuses, each with a fragment of the ArgumentError's message.
template <typename Options>
using Rejections = std::vector<std::pair<Options, std::string>>;

// `o` after `set` changed it: a rejection written as "the defaults, but ...".
template <typename Options, typename Set>
Options changed(Options o, Set set) {
  set(o);
  return o;
}

// Per optimizer class: its reference and its option combinations, given the defaults of the
// registry's kind (adam and adamw share FusedAdam); optionally the gradients it is tested on and
// the values its state buffers start at (zeros otherwise). A kind of the registry whose class
// has none does not compile.
template <typename Opt>
struct CaseTraits;

template <>
struct CaseTraits<FusedSgd> {
  using Ref = SgdReference;
  static Variants<SgdOptions> variants(const SgdOptions&) {
    return {{"plain", {.lr = 0.05}},
            {"momentum_dampening_wd", {.lr = 0.02, .momentum = 0.9, .dampening = 0.1, .weight_decay = 1e-2}},
            {"nesterov", {.lr = 0.02, .momentum = 0.9, .weight_decay = 1e-3, .nesterov = true}}};
  }
  static Rejections<SgdOptions> rejected(const SgdOptions&) {
    return {{SgdOptions{}, "lr is required"},
            {{.lr = -0.1}, "invalid learning rate: -0.1 (lr must be >= 0)"},
            {{.lr = 0.1, .momentum = -0.5}, "invalid momentum value: -0.5"},
            {{.lr = 0.1, .weight_decay = -1}, "invalid weight_decay value: -1"},
            {{.lr = 0.1, .nesterov = true},
             "Nesterov momentum requires a momentum and zero dampening (momentum=0, dampening=0)"},
            {{.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}, "dampening=0.1"}};
  }
};

template <>
struct CaseTraits<FusedAdam> {
  using Ref = AdamReference;
  static Variants<AdamOptions> variants(const AdamOptions& defaults) {
    AdamOptions amsgrad_wd = defaults;
    amsgrad_wd.lr = 2e-3;
    amsgrad_wd.weight_decay = 1e-2;
    amsgrad_wd.amsgrad = true;
    return {{"default", defaults}, {"amsgrad_wd", amsgrad_wd}};
  }
  static Rejections<AdamOptions> rejected(const AdamOptions& defaults) {
    return {{changed(defaults, [](auto& o) { o.lr = -1; }), "invalid learning rate: -1"},
            {changed(defaults, [](auto& o) { o.lr = std::nan(""); }), "lr is required"},
            {changed(defaults, [](auto& o) { o.eps = -1e-8; }), "invalid epsilon value: -1e-08"},
            {changed(defaults, [](auto& o) { o.beta1 = 1.0; }),
             "invalid beta parameter at index 0: 1 (must be in [0, 1))"},
            {changed(defaults, [](auto& o) { o.beta2 = -0.1; }), "invalid beta parameter at index 1: -0.1"},
            {changed(defaults, [](auto& o) { o.weight_decay = -0.1; }), "invalid weight_decay value"}};
  }
};

template <>
struct CaseTraits<FusedAdamP> {
  using Ref = AdamPReference;
  static constexpr Grads grads = Grads::adamp_mix;
  static Variants<AdamPOptions> variants(const AdamPOptions& defaults) {
    return {{"default", defaults}, {"nesterov_wd", {.lr = 2e-3, .weight_decay = 1e-2, .nesterov = true}}};
  }
  static Rejections<AdamPOptions> rejected(const AdamPOptions& defaults) {
    return {{changed(defaults, [](auto& o) { o.delta = -0.1; }), "AdamP: invalid delta value: -0.1"},
            {changed(defaults, [](auto& o) { o.wd_ratio = -1; }), "invalid wd_ratio value"},
            {changed(defaults, [](auto& o) { o.beta1 = 1.5; }), "beta parameter at index 0: 1.5"}};
  }
};

template <>
struct CaseTraits<FusedBertAdam> {
  using Ref = BertAdamReference;
  static Variants<BertAdamOptions> variants(const BertAdamOptions&) {
    return {{"constant", {.lr = 1e-3}},
            {"warmup_linear_clip", {.lr = 2e-3, .warmup = 0.1, .t_total = 100, .max_grad_norm = 1.0}},
            {"warmup_cosine",
             {.lr = 2e-3,
              .warmup = 0.2,
              .t_total = 120,
              .schedule = WarmupSchedule::warmup_cosine,
              .weight_decay = 0.0}},
            {"warmup_constant_clip",
             {.lr = 1e-3,
              .warmup = 0.05,
              .t_total = 100,
              .schedule = WarmupSchedule::warmup_constant,
              .max_grad_norm = 0.5}},
            {"none", {.lr = 1e-3, .warmup = 0.1, .t_total = 100, .schedule = WarmupSchedule::none}}};
  }
  static Rejections<BertAdamOptions> rejected(const BertAdamOptions&) {
    return {{BertAdamOptions{}, "BertAdam: lr is required"},
            {{.lr = -1e-3}, "invalid learning rate: -0.001"},
            {{.lr = 1e-3, .warmup = 1.0}, "invalid warmup: 1 (must be in [0, 1) or -1)"},
            {{.lr = 1e-3, .warmup = -0.5}, "invalid warmup: -0.5"},
            {{.lr = 1e-3, .t_total = 0}, "invalid t_total: 0"},
            {{.lr = 1e-3, .b1 = 1.0}, "invalid b1 parameter: 1"},
            {{.lr = 1e-3, .b2 = -0.01}, "invalid b2 parameter: -0.01"},
            {{.lr = 1e-3, .e = -1}, "invalid epsilon value: -1"}};
  }
};

template <>
struct CaseTraits<FusedAdadelta> {
  using Ref = AdadeltaReference;
  static Variants<AdadeltaOptions> variants(const AdadeltaOptions& defaults) {
    return {{"default", defaults}, {"wd", {.lr = 0.5, .rho = 0.95, .eps = 1e-5, .weight_decay = 1e-2}}};
  }
  static Rejections<AdadeltaOptions> rejected(const AdadeltaOptions& defaults) {
    return {
        {changed(defaults, [](auto& o) { o.rho = 1.1; }),
         "Adadelta: invalid rho value: 1.1 (must be in [0, 1])"},
        {changed(defaults, [](auto& o) { o.lr = -1; }), "Adadelta: invalid learning rate"},
        {changed(defaults, [](auto& o) { o.eps = -1; }), "Adadelta: invalid epsilon value"},
        {changed(defaults, [](auto& o) { o.weight_decay = -1; }), "Adadelta: invalid weight_decay value"}};
  }
};

template <>
struct CaseTraits<FusedLamb> {
  using Ref = LambReference;
  static Variants<LambOptions> variants(const LambOptions& defaults) {
    return {{"default", defaults},
            {"wd_global_norm", {.lr = 2e-3, .weight_decay = 1e-2, .use_global_grad_norm = true}},
            {"adam", {.weight_decay = 1e-2, .adam = true}}};
  }
  static Rejections<LambOptions> rejected(const LambOptions& defaults) {
    return {{changed(defaults, [](auto& o) { o.beta2 = 1.0; }), "Lamb: invalid beta parameter at index 1: 1"},
            {changed(defaults, [](auto& o) { o.eps = -1; }), "Lamb: invalid epsilon value"},
            {changed(defaults, [](auto& o) { o.lr = -1; }), "Lamb: invalid learning rate"}};
  }
};

template <>
struct CaseTraits<FusedRmsprop> {
  using Ref = RmspropReference;
  static Variants<RmspropOptions> variants(const RmspropOptions&) {
    return {{"default", {.lr = 1e-3}},
            {"centered_momentum_wd", {.lr = 1e-3, .weight_decay = 1e-2, .momentum = 0.5, .centered = true}},
            {"momentum", {.lr = 1e-3, .momentum = 0.5}}};
  }
  static Rejections<RmspropOptions> rejected(const RmspropOptions&) {
    return {{{.lr = 1e-3, .alpha = -0.1}, "RMSprop: invalid alpha value: -0.1"},
            {{.lr = 1e-3, .momentum = -1}, "RMSprop: invalid momentum value"},
            {{.lr = 1e-3, .eps = -1}, "RMSprop: invalid epsilon value"},
            {{.lr = 1e-3, .weight_decay = -1}, "RMSprop: invalid weight_decay value"}};
  }
};

template <>
struct CaseTraits<FusedRmspropTf> {
  using Ref = RmspropTfReference;
  static std::vector<float> initial_state() { return {FusedRmspropTf::kSquareAvgInit, 0.0f, 0.0f}; }
  static Variants<RmspropTfOptions> variants(const RmspropTfOptions&) {
    return {{"default", {.lr = 1e-3}},
            {"centered_momentum_l2", {.lr = 1e-3, .weight_decay = 1e-2, .momentum = 0.9, .centered = true}},
            {"decoupled_momentum_no_lr_in_momentum",
             {.lr = 1e-3,
              .weight_decay = 1e-2,
              .momentum = 0.9,
              .decoupled_decay = true,
              .lr_in_momentum = false}}};
  }
  static Rejections<RmspropTfOptions> rejected(const RmspropTfOptions&) {
    return {{{.lr = -0.5}, "RMSpropTF: invalid learning rate: -0.5"},
            {{.lr = 1e-3, .alpha = -1}, "RMSpropTF: invalid alpha value"},
            {{.lr = 1e-3, .momentum = -1}, "RMSpropTF: invalid momentum value"}};
  }
};

// The fused optimizer `Opt` with options `o` over layout `l`, built from what its constructor
// takes (as the binding does), its state buffers handed to step() in State::fields() order.
template <typename Opt>
std::unique_ptr<Fused> make_fused_optimizer(const Layout& l, const typename Opt::Options& o) {
  using Traits = CaseTraits<Opt>;
  std::shared_ptr<Opt> opt;
  if constexpr (TakesSegmentsAndRows<Opt>)
    opt = std::make_shared<Opt>(o, table(l), l.rows, kTestBlockElements);
  else if constexpr (TakesSegments<Opt>)
    opt = std::make_shared<Opt>(o, table(l), kTestBlockElements);
  else
    opt = std::make_shared<Opt>(o);
  std::vector<float> init(Opt::State::fields().size(), 0.0f);
  if constexpr (requires { Traits::initial_state(); }) init = Traits::initial_state();
  return make_fused(l, init, [opt](const FusedBuffers& b, States& s) {
    typename Opt::State state;
    const auto fields = Opt::State::fields();
    for (std::size_t i = 0; i < fields.size(); ++i) state.*fields[i].member = at(s, i);
    return opt->step(b, state);
  });
}

// Every kind of the registry (optim/registry.h), in its order, with each of its class's option
// combinations: "<class without NpuFused>_<combination>", e.g. "AdamW_default".
inline std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for_each_optimizer_kind([&](const auto& kind) {
    using Opt = typename std::remove_cvref_t<decltype(kind)>::Optimizer;
    using Traits = CaseTraits<Opt>;
    std::string prefix = kind.python_class;
    if (prefix.starts_with("NpuFused")) prefix.erase(0, std::string_view("NpuFused").size());
    Grads grads = Grads::random;
    if constexpr (requires { Traits::grads; }) grads = Traits::grads;
    for (const auto& [name, o] : Traits::variants(kind.defaults))
      cases.push_back({prefix + "_" + name, [o](const Layout& l) { return make_fused_optimizer<Opt>(l, o); },
                       [o](const Layout& l) { return std::make_unique<typename Traits::Ref>(l, o); }, grads});
  });
  return cases;
}

// ---- driving a case ----

// Deterministic inputs: params uniform in [-1, 1) (fp16-representable in fp16 mode, as amp's
// master copy of an fp16 model), padding 0.
struct Problem {
  Problem(const Layout& l, bool half_mode, std::uint64_t seed) : layout(l), rng(seed) {
    params.assign(l.total, 0.0f);
    grads.assign(l.total, 0.0f);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const Segment& s : l.segments)
      for (std::size_t k = s.offset; k < s.offset + s.numel; ++k) params[k] = u(rng);
    if (half_mode) {
      half.assign(l.total, 0);
      for (float& p : params) p = static_cast<float>(static_cast<CompilerHalf>(p));
      for (std::size_t k = 0; k < l.total; ++k) half[k] = saturated_half(params[k]);
    }
  }

  FusedBuffers buffers() {
    return {params.data(), grads.data(), half.empty() ? nullptr : half.data(), layout.total, nullptr};
  }

  // New gradients for the next step. adamp_mix: tensor s % 3 == 1 gets gradients orthogonal to
  // its weights row by row (channel projection), s % 3 == 2 orthogonal over the whole tensor
  // only (layer projection), the rest random.
  void next_grads(Grads kind) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t s = 0; s < layout.segments.size(); ++s) {
      const Segment& seg = layout.segments[s];
      const double scale = 0.05 * (1 + s % 5);
      std::vector<double> g(seg.numel);
      for (double& x : g) x = scale * normal(rng);
      const std::size_t rows = layout.rows[s];
      if (kind == Grads::adamp_mix && rows > 0 && s % 3 != 0) {
        const std::size_t views = s % 3 == 1 ? rows : 1, len = seg.numel / views;
        for (std::size_t r = 0; r < views; ++r) {
          double gp = 0, pp = 0;
          for (std::size_t i = r * len; i < (r + 1) * len; ++i) {
            gp += g[i] * params[seg.offset + i];
            pp += static_cast<double>(params[seg.offset + i]) * params[seg.offset + i];
          }
          for (std::size_t i = r * len; i < (r + 1) * len; ++i) g[i] -= gp / pp * params[seg.offset + i];
        }
      }
      for (std::size_t i = 0; i < seg.numel; ++i) grads[seg.offset + i] = static_cast<float>(g[i]);
    }
  }

  const Layout& layout;
  std::mt19937_64 rng;
  std::vector<float> params, grads;
  std::vector<half_bits> half;
};

}  // namespace apexnpu::rt::optim::testing
