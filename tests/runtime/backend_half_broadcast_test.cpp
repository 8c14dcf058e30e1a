// The broadcast fp16 sum and product of backend/half_broadcast.h against their definition: the
// fp32 sum or product torch's kernels compute on the exact fp32 values, stored back with the
// saturating conversion, b's element found from the multi-index as written in the header. Every
// fp16 value, the layouts of rotary embeddings, RMSNorm and its gradients, gathers, runs shorter
// and longer than a tile, b widened once or read run by run, at every ISA level, in place, and
// over chunks that start mid-run.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "backend/half_broadcast.h"
#include "exec/error.h"
#include "exec/half.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

half_bits definition(HalfBinaryOp op, half_bits a, half_bits b, bool& overflow) {
  const float x = half_to_float(a);
  const float y = half_to_float(b);
  return float_to_half(op == HalfBinaryOp::add ? x + y : x * y, overflow);
}

// b's offset for element i, from the multi-index.
std::size_t offset_of(std::size_t i, const std::vector<BroadcastDim>& dims) {
  std::size_t offset = 0;
  for (std::size_t k = dims.size(); k-- > 0;) {
    offset += (i % dims[k].size) * dims[k].stride;
    i /= dims[k].size;
  }
  return offset;
}

std::size_t numel(const std::vector<BroadcastDim>& dims) {
  std::size_t n = 1;
  for (const BroadcastDim& d : dims) n *= d.size;
  return n;
}

// The largest offset b is read at, plus one: how many elements b must hold.
std::size_t extent(const std::vector<BroadcastDim>& dims) {
  std::size_t last = 0;
  for (const BroadcastDim& d : dims) last += (d.size - 1) * d.stride;
  return last + 1;
}

std::vector<half_bits> random_halves(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<half_bits> out(n);
  for (half_bits& h : out) h = static_cast<half_bits>(rng());
  return out;
}

// Checks op over `dims` with a and b given, out of place and in place.
void expect_definition(HalfBinaryOp op, const std::vector<half_bits>& a, const std::vector<half_bits>& b,
                       const std::vector<BroadcastDim>& dims) {
  const std::size_t n = numel(dims);
  ASSERT_EQ(a.size(), n);
  ASSERT_GE(b.size(), extent(dims));
  bool overflow = false;
  std::vector<half_bits> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = definition(op, a[i], b[offset_of(i, dims)], overflow);
  std::vector<half_bits> got(n);
  EXPECT_EQ(binary_half_broadcast(op, a.data(), b.data(), dims, got.data(), n), overflow);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], want[i]) << std::hex << a[i] << (op == HalfBinaryOp::add ? " + " : " * ")
                               << b[offset_of(i, dims)] << std::dec << " at " << i;
  std::vector<half_bits> in_place = a;
  EXPECT_EQ(binary_half_broadcast(op, in_place.data(), b.data(), dims, in_place.data(), n), overflow);
  EXPECT_EQ(in_place, want);
}

// Values for b: zeros, specials, boundaries, and random ones.
const half_bits kSomeHalves[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00,
                                 0xFC00, 0x7C01, 0x7E00, 0xFE00, 0xFFFF, 0x03FF, 0x5CB0, 0x1400, 0x3555};

class HalfBroadcastIsa : public ::testing::TestWithParam<IsaLevel> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam())) GTEST_SKIP() << isa_name(GetParam()) << " not supported";
  }
};

TEST_P(HalfBroadcastIsa, EveryHalfTimesAndPlusSomeIsTheFp32ResultSaturated) {
  ScopedIsaLevel isa(GetParam());
  std::vector<half_bits> every(65536 + 3);
  for (std::size_t h = 0; h < every.size(); ++h) every[h] = static_cast<half_bits>(h);
  for (const half_bits fixed : kSomeHalves) {
    for (const HalfBinaryOp op : {HalfBinaryOp::add, HalfBinaryOp::multiply}) {
      // b one value broadcast along everything, and b as long as a (a run of memory).
      expect_definition(op, every, {fixed}, {{every.size(), 0}});
      const std::vector<half_bits> same(every.size(), fixed);
      expect_definition(op, every, same, {{every.size(), 1}});
    }
  }
}

TEST_P(HalfBroadcastIsa, LayoutsOfRotaryAndRmsNormAreReadAsTheirStridesSay) {
  ScopedIsaLevel isa(GetParam());
  const std::size_t batch = 3, heads = 4, seq = 37, dim = 10;  // runs shorter than a vector
  const std::vector<std::vector<BroadcastDim>> layouts = {
      {{batch * heads, 0}, {seq * dim, 1}},                // contiguous q (B, H, T, d) * cos (T, d)
      {{batch, 0}, {seq, dim}, {heads, 0}, {dim, 1}},      // q laid out (B, T, H, d) * cos (T, d)
      {{batch * seq, 1}, {heads * dim, 0}},                // x * rsqrt(mean) of shape (B, T, 1)
      {{batch * seq, 0}, {heads * dim, 1}},                // weight (D,) * x
      {{batch * heads, seq * dim}, {seq, 1}, {dim, seq}},  // b transposed in its last two dims
      {{seq, 3}, {dim, 5 * seq * 3}},                      // b gathered with strides in both
      {{2 * 300, 0}, {1000, 1}},                           // runs of several tiles
      {{1, 0}},                                            // one element
      // b too large to be widened once: read as fp16 run by run
      {{2, 0}, {1500, 1}},
      {{1111, 1}, {3, 0}},
  };
  std::uint32_t seed = 1;
  for (const auto& dims : layouts) {
    const std::vector<half_bits> a = random_halves(numel(dims), ++seed);
    const std::vector<half_bits> b = random_halves(extent(dims), ++seed);
    for (const HalfBinaryOp op : {HalfBinaryOp::add, HalfBinaryOp::multiply})
      expect_definition(op, a, b, dims);
  }
}

TEST_P(HalfBroadcastIsa, ChunksStartingMidRunGiveTheSameBits) {
  ScopedIsaLevel isa(GetParam());
  // 5 chunks of the thread pool and a tail; 1003 and 999 divide none of the chunk boundaries.
  const std::vector<std::vector<BroadcastDim>> layouts = {
      {{327, 0}, {1003, 1}},
      {{331, 1}, {999, 0}},
      {{7, 0}, {331, 13}, {3, 0}, {47, 1}},
  };
  std::uint32_t seed = 11;
  for (const auto& dims : layouts) {
    const std::vector<half_bits> a = random_halves(numel(dims), ++seed);
    const std::vector<half_bits> b = random_halves(extent(dims), ++seed);
    for (const HalfBinaryOp op : {HalfBinaryOp::add, HalfBinaryOp::multiply})
      expect_definition(op, a, b, dims);
  }
}

TEST_P(HalfBroadcastIsa, ReportsExactlyWhatItSaturates) {
  ScopedIsaLevel isa(GetParam());
  for (const std::size_t where : {std::size_t{0}, std::size_t{9}, std::size_t{16}, std::size_t{40}}) {
    std::vector<half_bits> a(41, 0x3C00), out(41);      // ones
    const std::vector<half_bits> b = {0x5CB0, 0x3C00};  // 300, 1
    const std::vector<BroadcastDim> dims = {{41, 0}};
    EXPECT_FALSE(binary_half_broadcast(HalfBinaryOp::multiply, a.data(), b.data(), dims, out.data(), 41));
    a[where] = 0x5CB0;  // 300 * 300 = 90000
    EXPECT_TRUE(binary_half_broadcast(HalfBinaryOp::multiply, a.data(), b.data(), dims, out.data(), 41));
    EXPECT_EQ(out[where], kHalfMaxBits);
    // 65504 * 1 and 65504 + 0 stay; 65504 + 8 is 65512 in fp32: beyond the largest half, so
    // saturated and reported, although IEEE rounding would give 65504.
    a.assign(41, 0x7BFF);
    EXPECT_FALSE(binary_half_broadcast(HalfBinaryOp::multiply, a.data(), b.data() + 1, dims, out.data(), 41));
    const half_bits eight = 0x4800;
    EXPECT_TRUE(binary_half_broadcast(HalfBinaryOp::add, a.data(), &eight, dims, out.data(), 41));
    EXPECT_EQ(out[where], kHalfMaxBits);
    a.assign(41, 0x0000);
    a[where] = 0x7C00;  // inf * 0 is NaN: stored +0 and reported
    const half_bits zero = 0x0000;
    EXPECT_TRUE(binary_half_broadcast(HalfBinaryOp::multiply, a.data(), &zero, dims, out.data(), 41));
    EXPECT_EQ(out[where], 0x0000);
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevels, HalfBroadcastIsa, ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

TEST(HalfBroadcast, RefusesLayoutsThatDoNotCoverTheElements) {
  const std::vector<half_bits> a(12, 0x3C00), b(12, 0x3C00);
  std::vector<half_bits> out(12);
  const auto run = [&](std::vector<BroadcastDim> dims, std::size_t n) {
    return binary_half_broadcast(HalfBinaryOp::add, a.data(), b.data(), dims, out.data(), n);
  };
  EXPECT_THROW(run({}, 12), ArgumentError);
  EXPECT_THROW(run({{3, 1}, {4, 0}}, 11), ArgumentError);
  EXPECT_THROW(run({{SIZE_MAX, 0}, {3, 1}}, 12), ArgumentError);  // the product overflows
  EXPECT_THROW(run(std::vector<BroadcastDim>(kMaxBroadcastDims + 1, {1, 0}), 1), ArgumentError);
  EXPECT_FALSE(run({{3, 0}, {0, 1}}, 0));  // nothing to do
}

}  // namespace
}  // namespace apexnpu::rt
