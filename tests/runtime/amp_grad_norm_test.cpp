// Fused gradient norms and clipping against a double-precision reference written here from
// torch.nn.utils.clip_grad_norm_ (torch 1.13), on several segment layouts, every ISA level and
// 1/2/3 threads (bit-identical across all of them).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "amp/grad_norm.h"
#include "exec/chunking.h"
#include "exec/error.h"
#include "exec/half.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"
#include "tensor/combine.h"

namespace apexnpu::rt {
namespace {

constexpr double kInfD = std::numeric_limits<double>::infinity();

struct Config {
  IsaLevel level;
  std::size_t threads;
};
std::vector<Config> configs() {
  std::vector<Config> out;
  for (const IsaLevel level : kIsaLevels)
    if (isa_supported(level))
      for (const std::size_t threads : {1u, 2u, 3u}) out.push_back({level, threads});
  return out;
}

// A combined fp32 buffer laid out as combine() lays it out, filled with random values
// (padding zero).
struct Layout {
  std::vector<float> buffer;
  SegmentTable table;
};
Layout make_layout(const std::vector<std::size_t>& sizes, unsigned seed) {
  std::vector<Segment> segments;
  std::size_t total = 0;
  for (const std::size_t n : sizes) {
    segments.push_back({total, n});
    total += aligned_storage_size(n);
  }
  Layout l{std::vector<float>(total, 0.0f), SegmentTable(segments)};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.01f);
  for (const Segment& s : l.table.segments())
    for (std::size_t i = 0; i < s.numel; ++i) l.buffer[s.offset + i] = normal(rng) * (1.0f + s.numel % 7);
  return l;
}

std::vector<std::vector<std::size_t>> layouts() {
  std::vector<std::size_t> many;
  for (std::size_t i = 0; i < 500; ++i) many.push_back((i * 37) % 53);  // zeros, ragged sizes
  return {{3 * kChunkElements + 1001}, many, {1, 15, 17, kChunkElements - 1, kChunkElements + 3, 0, 250}};
}

// Reference: per-tensor norms in long double, naive order; total as torch: norm of the norms.
struct RefNorms {
  std::vector<double> per_segment;
  double total;
};
RefNorms reference(const std::vector<float>& buf, const SegmentTable& t, NormType type) {
  RefNorms r{{}, 0.0};
  long double all = 0;
  for (const Segment& s : t.segments()) {
    long double acc = 0;
    for (std::size_t i = 0; i < s.numel; ++i) {
      const long double x = buf[s.offset + i];
      acc = type == NormType::l2 ? acc + x * x : std::max(acc, std::fabs(x));
    }
    r.per_segment.push_back(static_cast<double>(type == NormType::l2 ? std::sqrt(acc) : acc));
    all = type == NormType::l2 ? all + acc : std::max(all, acc);
  }
  r.total = static_cast<double>(type == NormType::l2 ? std::sqrt(all) : all);
  return r;
}

TEST(GradNorm, MatchesReferenceAndIsBitIdenticalEverywhere) {
  for (const auto& sizes : layouts()) {
    const Layout l = make_layout(sizes, 11);
    for (const NormType type : {NormType::l2, NormType::inf}) {
      const RefNorms ref = reference(l.buffer, l.table, type);
      std::vector<double> first_per_segment;
      double first_total = 0;
      for (const Config& c : configs()) {
        ScopedIsaLevel isa(c.level);
        ScopedNumThreads threads(c.threads);
        SCOPED_TRACE(std::string(isa_name(c.level)) + " x" + std::to_string(c.threads));
        GradBuffer b{const_cast<float*>(l.buffer.data()), DType::float32, &l.table};
        std::vector<double> per(l.table.size(), -1.0);
        const double total = grad_norm(b, type, per.data(), device(0));
        // L2: the double sum is within a few ulps of the long double one; inf: exact.
        const double tol = type == NormType::l2 ? 1e-13 : 0.0;
        EXPECT_NEAR(total, ref.total, tol * ref.total);
        for (std::size_t s = 0; s < per.size(); ++s)
          ASSERT_NEAR(per[s], ref.per_segment[s], tol * ref.per_segment[s]) << "segment " << s;
        const GradBuffer one[] = {b};
        EXPECT_EQ(std::bit_cast<std::uint64_t>(grad_norm(one, type, device(0))),
                  std::bit_cast<std::uint64_t>(total));
        if (first_per_segment.empty()) {
          first_per_segment = per;
          first_total = total;
        } else {
          EXPECT_EQ(std::bit_cast<std::uint64_t>(total), std::bit_cast<std::uint64_t>(first_total));
          EXPECT_EQ(std::memcmp(per.data(), first_per_segment.data(), per.size() * sizeof(double)), 0);
        }
      }
    }
  }
}

TEST(GradNorm, Float16MatchesTheSameValuesInFloat32) {
  for (const auto& sizes : layouts()) {
    Layout l = make_layout(sizes, 5);
    std::vector<half_bits> h(l.buffer.size());
    for (std::size_t i = 0; i < h.size(); ++i) {
      h[i] = float_to_half(l.buffer[i]);
      l.buffer[i] = half_to_float(h[i]);
    }
    for (const Config& c : configs()) {
      ScopedIsaLevel isa(c.level);
      ScopedNumThreads threads(c.threads);
      for (const NormType type : {NormType::l2, NormType::inf}) {
        const double want =
            grad_norm(GradBuffer{l.buffer.data(), DType::float32, &l.table}, type, nullptr, device(0));
        const double got =
            grad_norm(GradBuffer{h.data(), DType::float16, &l.table}, type, nullptr, device(0));
        EXPECT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want));
      }
    }
  }
}

TEST(GradNorm, SeveralBuffersCombine) {
  const Layout a = make_layout({100, 3}, 1), b = make_layout({7, 5000}, 2);
  std::vector<half_bits> bh(b.buffer.size());
  std::vector<float> b_rounded(b.buffer.size());
  for (std::size_t i = 0; i < bh.size(); ++i) {
    bh[i] = float_to_half(b.buffer[i]);
    b_rounded[i] = half_to_float(bh[i]);
  }
  const GradBuffer buffers[] = {{const_cast<float*>(a.buffer.data()), DType::float32, &a.table},
                                {bh.data(), DType::float16, &b.table}};
  const RefNorms ra = reference(a.buffer, a.table, NormType::l2);
  const RefNorms rb = reference(b_rounded, b.table, NormType::l2);
  EXPECT_NEAR(grad_norm(buffers, NormType::l2, device(0)), std::hypot(ra.total, rb.total), 1e-12);
  const RefNorms ia = reference(a.buffer, a.table, NormType::inf);
  const RefNorms ib = reference(b_rounded, b.table, NormType::inf);
  EXPECT_EQ(grad_norm(buffers, NormType::inf, device(0)), std::max(ia.total, ib.total));
}

TEST(ClipGradNorm, ScalesLikeTorchWhenAboveMaxNorm) {
  for (const auto& sizes : layouts()) {
    const Layout original = make_layout(sizes, 3);
    for (const double norm_type : {2.0, kInfD}) {
      const NormType type = parse_norm_type(norm_type);
      const RefNorms ref = reference(original.buffer, original.table, type);
      const double max_norm = ref.total / 4;  // clipping happens
      const double coef = max_norm / (ref.total + 1e-6);
      std::vector<float> first;
      for (const Config& c : configs()) {
        ScopedIsaLevel isa(c.level);
        ScopedNumThreads threads(c.threads);
        Layout l = original;
        const GradBuffer b[] = {{l.buffer.data(), DType::float32, &l.table}};
        device(0).float_status().clear();
        const double total = clip_grad_norm(b, max_norm, norm_type, device(0));
        EXPECT_NEAR(total, ref.total, 1e-12 * ref.total);
        EXPECT_FALSE(device(0).float_status().get());
        for (std::size_t i = 0; i < l.buffer.size(); ++i)
          ASSERT_NEAR(l.buffer[i], original.buffer[i] * coef, 1e-6 * std::fabs(original.buffer[i] * coef))
              << i;
        // The clipped gradients' norm is max_norm (up to the 1e-6 and float rounding).
        EXPECT_NEAR(grad_norm(b[0], type, nullptr, device(0)), max_norm, 1e-5 * max_norm);
        if (first.empty())
          first = l.buffer;
        else
          EXPECT_EQ(std::memcmp(first.data(), l.buffer.data(), first.size() * 4), 0);
      }
    }
  }
}

TEST(ClipGradNorm, LeavesGradientsAloneBelowMaxNormAndChecksNormType) {
  Layout l = make_layout({1000, 33}, 9);
  const std::vector<float> before = l.buffer;
  const GradBuffer b[] = {{l.buffer.data(), DType::float32, &l.table}};
  const double total = clip_grad_norm(b, 1e6, 2.0, device(0));
  EXPECT_GT(total, 0.0);
  EXPECT_EQ(l.buffer, before);
  try {
    clip_grad_norm(b, 1.0, 1.0, device(0));
    FAIL() << "no exception";
  } catch (const ArgumentError& e) {
    EXPECT_STREQ(e.what(), "norm_type must be 2 or inf for the fused gradient norm, got 1");
  }
  EXPECT_THROW(parse_norm_type(-kInfD), ArgumentError);
}

TEST(ClipGradNorm, NonFiniteGradientsFollowTorch) {
  for (const Config& c : configs()) {
    ScopedIsaLevel isa(c.level);
    ScopedNumThreads threads(c.threads);
    // inf: L2 total inf, coef 0: finite grads become 0, the inf becomes NaN (inf * 0).
    Layout l = make_layout({40, 2 * kChunkElements + 3}, 4);
    const std::size_t where = l.table[1].offset + kChunkElements + 1;
    l.buffer[where] = std::numeric_limits<float>::infinity();
    GradBuffer b[] = {{l.buffer.data(), DType::float32, &l.table}};
    device(5).float_status().clear();
    EXPECT_EQ(clip_grad_norm(b, 1.0, 2.0, device(5)), kInfD);
    EXPECT_TRUE(device(5).float_status().clear());
    EXPECT_TRUE(std::isnan(l.buffer[where]));
    EXPECT_EQ(l.buffer[l.table[0].offset + 3], 0.0f);
    // NaN: total NaN (inf norm too), every gradient becomes NaN; padding untouched.
    Layout n = make_layout({40, 70}, 4);
    n.buffer[n.table[0].offset + 39] = std::numeric_limits<float>::quiet_NaN();
    n.buffer[n.table[1].offset] = std::numeric_limits<float>::infinity();
    GradBuffer nb[] = {{n.buffer.data(), DType::float32, &n.table}};
    EXPECT_TRUE(std::isnan(grad_norm(nb, NormType::inf, device(5))));
    EXPECT_TRUE(std::isnan(clip_grad_norm(nb, 1.0, kInfD, device(5))));
    EXPECT_TRUE(device(5).float_status().clear());
    EXPECT_TRUE(std::isnan(n.buffer[n.table[1].offset + 69]));
    EXPECT_EQ(n.buffer[n.table[0].offset + 40], 0.0f) << "padding is not scaled";
  }
}

TEST(ClipGradNorm, Float16InPlace) {
  const Layout l = make_layout({333, 16, 4000}, 8);
  std::vector<half_bits> h(l.buffer.size());
  std::vector<float> rounded(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i] = float_to_half(l.buffer[i] * 100.0f);
    rounded[i] = half_to_float(h[i]);
  }
  const RefNorms ref = reference(rounded, l.table, NormType::l2);
  const GradBuffer b[] = {{h.data(), DType::float16, &l.table}};
  const double total = clip_grad_norm(b, 0.5, 2.0, device(0));
  EXPECT_NEAR(total, ref.total, 1e-12 * ref.total);
  const auto factor = static_cast<float>(0.5 / (ref.total + 1e-6));
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(h[i], float_to_half(rounded[i] * factor)) << i;
}

}  // namespace
}  // namespace apexnpu::rt
