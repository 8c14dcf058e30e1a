// Fused unscale: values against a per-element reference (bitwise: one float multiply, one
// rounding), overflow detection for inf/NaN anywhere, float status, every ISA x 1/2/3 threads.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "amp/unscale.h"
#include "exec/chunking.h"
#include "exec/error.h"
#include "exec/half.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Calls fn for every supported ISA level and thread counts 1, 2, 3.
template <typename Fn>
void for_each_config(Fn&& fn) {
  for (const IsaLevel level : kIsaLevels) {
    if (!isa_supported(level)) continue;
    ScopedIsaLevel isa(level);
    for (const std::size_t threads : {1u, 2u, 3u}) {
      ScopedNumThreads t(threads);
      SCOPED_TRACE(std::string(isa_name(level)) + " x" + std::to_string(threads));
      fn();
    }
  }
}

std::vector<float> random_grads(std::size_t n, float scale) {
  std::mt19937 rng(static_cast<unsigned>(n));
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> g(n);
  for (float& x : g) x = normal(rng);
  return g;
}

std::vector<half_bits> to_half(const std::vector<float>& v) {
  std::vector<half_bits> h(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) h[i] = float_to_half(v[i]);
  return h;
}

// Sizes: empty, a tail only, several chunks plus a ragged tail.
const std::vector<std::size_t> kSizes = {0, 13, 3 * kChunkElements + 77};

TEST(Unscale, Float32InPlaceAndToMaster) {
  for_each_config([] {
    for (const std::size_t n : kSizes) {
      const std::vector<float> g = random_grads(n, 1000.0f);
      const float inv = 1.0f / 1024.0f / 3.0f;
      std::vector<float> inplace = g, master(n, -1.0f);
      Device& dev = device(0);
      dev.float_status().clear();
      EXPECT_FALSE(unscale(inplace.data(), DType::float32, n, inv, nullptr, dev));
      EXPECT_FALSE(unscale(const_cast<float*>(g.data()), DType::float32, n, inv, master.data(), dev));
      EXPECT_FALSE(dev.float_status().get());
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(inplace[i], g[i] * inv) << i;
        ASSERT_EQ(master[i], g[i] * inv) << i;
      }
    }
  });
}

TEST(Unscale, Float16InPlaceAndToMaster) {
  for_each_config([] {
    for (const std::size_t n : kSizes) {
      const std::vector<half_bits> g = to_half(random_grads(n, 3000.0f));
      const float inv = 1.0f / 7.0f;
      std::vector<half_bits> inplace = g;
      std::vector<float> master(n);
      Device& dev = device(0);
      dev.float_status().clear();
      EXPECT_FALSE(unscale(inplace.data(), DType::float16, n, inv, nullptr, dev));
      std::vector<half_bits> source = g;
      EXPECT_FALSE(unscale(source.data(), DType::float16, n, inv, master.data(), dev));
      EXPECT_EQ(source, g) << "with a master output the fp16 gradients are only read";
      EXPECT_FALSE(dev.float_status().get());
      for (std::size_t i = 0; i < n; ++i) {
        const float want = half_to_float(g[i]) * inv;
        ASSERT_EQ(master[i], want) << i;
        ASSERT_EQ(inplace[i], float_to_half(want)) << i;
      }
    }
  });
}

TEST(Unscale, DetectsInfAndNanAnywhere) {
  const std::size_t n = 2 * kChunkElements + 21;
  for_each_config([&] {
    for (const float bad : {kInf, -kInf, kNan}) {
      for (const std::size_t where : {std::size_t{0}, kChunkElements + 5, n - 1}) {
        Device& dev = device(1);
        std::vector<float> g(n, 0.5f);
        g[where] = bad;
        std::vector<float> master(n);
        dev.float_status().clear();
        EXPECT_TRUE(unscale(g.data(), DType::float32, n, 0.25f, master.data(), dev)) << where;
        EXPECT_TRUE(dev.float_status().clear());
        EXPECT_TRUE(unscale(g.data(), DType::float32, n, 0.25f, nullptr, dev)) << where;
        EXPECT_TRUE(dev.float_status().clear());
        // fp16 gradients holding inf/NaN (foreign buffers can) are detected too.
        std::vector<half_bits> h(n, float_to_half(0.5f));
        h[where] = std::isnan(bad) ? half_bits{0x7E00} : (bad > 0 ? half_bits{0x7C00} : half_bits{0xFC00});
        EXPECT_TRUE(unscale(h.data(), DType::float16, n, 0.25f, master.data(), dev)) << where;
        EXPECT_TRUE(dev.float_status().clear());
        EXPECT_TRUE(unscale(h.data(), DType::float16, n, 0.25f, nullptr, dev)) << where;
        EXPECT_TRUE(dev.float_status().clear());
        EXPECT_EQ(h[where], std::isnan(bad) ? 0x0000 : (bad > 0 ? 0x7BFF : 0xFBFF)) << "saturated in place";
      }
    }
  });
}

TEST(Unscale, Float16InPlaceSaturationIsOverflow) {
  for_each_config([] {
    std::vector<half_bits> h(40, float_to_half(1.0f));
    h[37] = float_to_half(40000.0f);
    Device& dev = device(2);
    dev.float_status().clear();
    EXPECT_TRUE(unscale(h.data(), DType::float16, h.size(), 2.0f, nullptr, dev));
    EXPECT_EQ(h[37], kHalfMaxBits);
    EXPECT_EQ(h[0], float_to_half(2.0f));
    EXPECT_TRUE(dev.float_status().get());
  });
}

TEST(Unscale, ViewFormAndArgumentErrors) {
  TensorView g = TensorView::empty(device(3), DType::float16, 20);
  device(3).fill(g.data(), DType::float16, 20, 8.0f);
  TensorView master = TensorView::empty(device(3), DType::float32, 20);
  EXPECT_FALSE(unscale(g, 0.5f, &master));
  EXPECT_EQ(master.f32()[19], 4.0f);
  TensorView wrong = TensorView::empty(device(3), DType::float32, 19);
  EXPECT_THROW(unscale(g, 0.5f, &wrong), ArgumentError);
  TensorView half_master = TensorView::empty(device(3), DType::float16, 20);
  EXPECT_THROW(unscale(g, 0.5f, &half_master), ArgumentError);
  float x = 1.0f;
  EXPECT_THROW(unscale(&x, DType::float32, 1, 0.0f, nullptr, device(3)), ArgumentError);
  EXPECT_THROW(unscale(&x, DType::float32, 1, kNan, nullptr, device(3)), ArgumentError);
  EXPECT_THROW(unscale(&x, DType::int32, 1, 1.0f, nullptr, device(3)), ArgumentError);
}

}  // namespace
}  // namespace apexnpu::rt
