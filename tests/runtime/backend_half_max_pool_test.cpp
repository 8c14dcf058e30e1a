// Max pooling of fp16 planes (backend/half_max_pool.h) against torch's fp32 loop written out
// here: windows scanned row by row from their first in-bounds element, starting from -inf at
// that index, an element taken when greater than the maximum or NaN; the result stored
// saturating. Random planes full of ties, zeros of both signs, infinities and NaNs, under
// paddings, strides, dilations and the extra row and column of ceil mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "backend/half_max_pool.h"
#include "exec/half.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {
namespace {

struct Pooled {
  std::vector<half_bits> out;
  std::vector<std::int64_t> indices;
  bool overflow = false;
};

Pooled reference(const std::vector<half_bits>& in, std::int64_t planes, const PoolGeometry& g) {
  Pooled r;
  for (std::int64_t p = 0; p < planes; ++p) {
    const half_bits* plane = in.data() + p * g.in_h * g.in_w;
    for (std::int64_t oh = 0; oh < g.out_h; ++oh) {
      std::int64_t ih0 = oh * g.stride_h - g.pad_h;
      const std::int64_t ih1 = std::min(ih0 + (g.kernel_h - 1) * g.dilation_h + 1, g.in_h);
      while (ih0 < 0) ih0 += g.dilation_h;
      for (std::int64_t ow = 0; ow < g.out_w; ++ow) {
        std::int64_t iw0 = ow * g.stride_w - g.pad_w;
        const std::int64_t iw1 = std::min(iw0 + (g.kernel_w - 1) * g.dilation_w + 1, g.in_w);
        while (iw0 < 0) iw0 += g.dilation_w;
        std::int64_t max_index = ih0 * g.in_w + iw0;
        float max_value = -std::numeric_limits<float>::infinity();
        for (std::int64_t ih = ih0; ih < ih1; ih += g.dilation_h)
          for (std::int64_t iw = iw0; iw < iw1; iw += g.dilation_w) {
            const float v = half_to_float(plane[ih * g.in_w + iw]);
            if (v > max_value || std::isnan(v)) {
              max_value = v;
              max_index = ih * g.in_w + iw;
            }
          }
        r.out.push_back(float_to_half(max_value, r.overflow));
        r.indices.push_back(max_index);
      }
    }
  }
  return r;
}

// Output size as torch computes it (pooling_output_shape), ceil mode included.
std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t pad, std::int64_t d,
                      bool ceil) {
  const std::int64_t span = in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  std::int64_t out = span / s + 1;
  if (ceil && (out - 1) * s >= in + pad) --out;
  return out;
}

half_bits random_half(std::mt19937& rng) {
  static const half_bits specials[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01,
                                       0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x0001};
  const auto pick = rng() % 4;
  if (pick == 0) return specials[rng() % std::size(specials)];
  if (pick == 1) return static_cast<half_bits>(0x3C00 + rng() % 4);  // ties
  return static_cast<half_bits>(rng());
}

class HalfMaxPoolIsa : public ::testing::TestWithParam<IsaLevel> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam())) GTEST_SKIP() << isa_name(GetParam()) << " not supported";
  }
};

TEST_P(HalfMaxPoolIsa, MatchesTorchsLoopOnEveryGeometry) {
  ScopedIsaLevel isa(GetParam());
  std::mt19937 rng(11);
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t kh = 1 + rng() % 3, kw = 1 + rng() % 3;
    const std::int64_t sh = 1 + rng() % 3, sw = 1 + rng() % 3;
    const std::int64_t ph = rng() % (kh / 2 + 1), pw = rng() % (kw / 2 + 1);
    const std::int64_t dh = 1 + rng() % 2, dw = 1 + rng() % 2;
    // Widths up to 150: rows of more than one block of outputs inside the plane.
    const std::int64_t ih = (kh - 1) * dh + 1 + rng() % 6;
    const std::int64_t iw = (kw - 1) * dw + 1 + (trial % 4 == 0 ? rng() % 150 : rng() % 6);
    const bool ceil = rng() % 2;
    const PoolGeometry g{ih,
                         iw,
                         out_size(ih, kh, sh, ph, dh, ceil),
                         out_size(iw, kw, sw, pw, dw, ceil),
                         kh,
                         kw,
                         sh,
                         sw,
                         ph,
                         pw,
                         dh,
                         dw};
    const std::int64_t planes = 1 + rng() % 4;
    std::vector<half_bits> in(static_cast<std::size_t>(planes * ih * iw));
    for (auto& v : in) v = random_half(rng);
    const Pooled want = reference(in, planes, g);
    std::vector<half_bits> out(want.out.size());
    std::vector<std::int64_t> indices(want.indices.size());
    const bool overflow = max_pool2d_half(in.data(), out.data(), indices.data(), planes, g);
    ASSERT_EQ(out, want.out) << "trial " << trial;
    ASSERT_EQ(indices, want.indices) << "trial " << trial;
    ASSERT_EQ(overflow, want.overflow) << "trial " << trial;
  }
}

TEST_P(HalfMaxPoolIsa, ManyPlanesOverThreadsGiveTheSameResult) {
  ScopedIsaLevel isa(GetParam());
  ScopedNumThreads threads(3);
  std::mt19937 rng(5);
  const PoolGeometry g{32, 32, 16, 16, 2, 2, 2, 2, 0, 0, 1, 1};
  const std::int64_t planes = 300;
  std::vector<half_bits> in(static_cast<std::size_t>(planes * 32 * 32));
  for (auto& v : in) v = random_half(rng);
  const Pooled want = reference(in, planes, g);
  std::vector<half_bits> out(want.out.size());
  std::vector<std::int64_t> indices(want.indices.size());
  EXPECT_EQ(max_pool2d_half(in.data(), out.data(), indices.data(), planes, g), want.overflow);
  EXPECT_EQ(out, want.out);
  EXPECT_EQ(indices, want.indices);
}

INSTANTIATE_TEST_SUITE_P(AllLevels, HalfMaxPoolIsa, ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace apexnpu::rt
