// combine / get_part_combined_tensor / is_combined_tensor_valid / change_data_ptr: layout,
// values, every error path with its message, and lifetime (run under ASan to prove it).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "exec/chunking.h"
#include "exec/error.h"
#include "tensor/change_data_ptr.h"
#include "tensor/combine.h"

namespace apexnpu::rt {
namespace {

TensorView filled_f32(std::size_t n, float base) {
  TensorView t = TensorView::empty(device(0), DType::float32, n);
  for (std::size_t i = 0; i < n; ++i) t.f32()[i] = base + static_cast<float>(i);
  return t;
}

// Runs fn, expects ArgumentError with exactly `message`.
template <typename Fn>
void expect_error(Fn&& fn, const std::string& message) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected: " << message;
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(Combine, AlignedStorageSize) {
  EXPECT_EQ(aligned_storage_size(0), 32u);
  EXPECT_EQ(aligned_storage_size(1), 48u);
  EXPECT_EQ(aligned_storage_size(16), 48u);
  EXPECT_EQ(aligned_storage_size(17), 64u);
}

TEST(Combine, LayoutValuesAndSegmentTable) {
  const std::vector<std::size_t> sizes = {5, 16, 0, 33, 100000};
  std::vector<TensorView> tensors;
  for (std::size_t i = 0; i < sizes.size(); ++i) tensors.push_back(filled_f32(sizes[i], 1000.0f * i));
  const std::vector<TensorView> originals = tensors;
  auto combined = combine(tensors, true);
  ASSERT_TRUE(combined);
  std::size_t expected_offset = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(combined->segments[i].offset, expected_offset);
    EXPECT_EQ(combined->segments[i].numel, sizes[i]);
    EXPECT_EQ(tensors[i].storage, combined->tensor.storage);
    EXPECT_EQ(tensors[i].data(), combined->tensor.f32() + expected_offset);
    EXPECT_EQ(tensors[i].numel, sizes[i]);
    EXPECT_EQ(std::memcmp(tensors[i].data(), originals[i].data(), originals[i].bytes()), 0) << i;
    // Padding after each tensor is zero.
    for (std::size_t k = sizes[i]; k < aligned_storage_size(sizes[i]); ++k)
      ASSERT_EQ(combined->tensor.f32()[expected_offset + k], 0.0f);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(tensors[i].data()) % 64, 0u);
    expected_offset += aligned_storage_size(sizes[i]);
  }
  EXPECT_EQ(combined->tensor.numel, expected_offset);
  EXPECT_EQ(combined->segments.total_numel(), 5u + 16 + 33 + 100000);
  // Writes through a re-pointed view land in the combined buffer.
  tensors[3].f32()[2] = -7.0f;
  EXPECT_EQ(combined->tensor.f32()[combined->segments[3].offset + 2], -7.0f);
  EXPECT_TRUE(is_combined_tensor_valid(&combined->tensor, tensors));
  EXPECT_FALSE(is_combined_tensor_valid(&combined->tensor, originals));
}

TEST(Combine, WithoutCopyLeavesZeros) {
  std::vector<TensorView> tensors = {filled_f32(3, 1.0f), filled_f32(20, 1.0f)};
  auto combined = combine(tensors, false);
  ASSERT_TRUE(combined);
  for (std::size_t i = 0; i < combined->tensor.numel; ++i) ASSERT_EQ(combined->tensor.f32()[i], 0.0f);
}

TEST(Combine, Float16) {
  std::vector<TensorView> tensors;
  for (const std::size_t n : {7u, 40u}) {
    TensorView t = TensorView::empty(device(1), DType::float16, n);
    for (std::size_t i = 0; i < n; ++i) t.f16()[i] = float_to_half(static_cast<float>(i) * 0.25f);
    tensors.push_back(t);
  }
  auto combined = combine(tensors, true);
  ASSERT_TRUE(combined);
  EXPECT_EQ(combined->tensor.dtype, DType::float16);
  EXPECT_EQ(&combined->tensor.device(), &device(1));
  EXPECT_EQ(combined->tensor.numel, aligned_storage_size(7) + aligned_storage_size(40));
  EXPECT_EQ(half_to_float(tensors[1].f16()[39]), 9.75f);
}

TEST(Combine, EmptyListGivesNothing) {
  std::vector<TensorView> none;
  EXPECT_FALSE(combine(none, true).has_value());
}

TEST(Combine, ErrorsLeaveTheTensorsUnchanged) {
  std::vector<TensorView> mixed = {filled_f32(4, 0), TensorView::empty(device(0), DType::float16, 4)};
  const void* before = mixed[0].data();
  expect_error([&] { combine(mixed, true); },
               "combine: tensors must share one dtype; tensor 0 is float32, tensor 1 is float16");
  EXPECT_EQ(mixed[0].data(), before);
  std::vector<TensorView> ints = {TensorView::empty(device(0), DType::int32, 4)};
  expect_error([&] { combine(ints, true); },
               "combine: tensor 0 has dtype int32; fused tensors must be float32 or float16");
  std::vector<TensorView> devices = {filled_f32(4, 0), TensorView::empty(device(1), DType::float32, 4)};
  expect_error([&] { combine(devices, true); }, "combine: tensor 1 is on npu:1, the others on npu:0");
  std::vector<TensorView> unbacked = {filled_f32(4, 0), TensorView{nullptr, 0, 4, DType::float32}};
  expect_error([&] { combine(unbacked, true); },
               "combine: tensor 1 has no storage, so its values cannot be copied");
  EXPECT_TRUE(combine(unbacked, false).has_value()) << "without copying, no storage is fine";
}

TEST(Combine, GetPartCombinedTensor) {
  std::vector<TensorView> tensors = {filled_f32(10, 1.0f), filled_f32(10, 100.0f)};
  auto combined = combine(tensors, true);
  ASSERT_TRUE(combined);
  const std::size_t total = combined->tensor.numel;
  auto part = get_part_combined_tensor(&combined->tensor, 48, 10);
  ASSERT_TRUE(part);
  EXPECT_EQ(part->data(), tensors[1].data());
  EXPECT_EQ(part->f32()[9], 109.0f);
  EXPECT_FALSE(get_part_combined_tensor(nullptr, 0, 4));
  EXPECT_FALSE(get_part_combined_tensor(&combined->tensor, 3, 0));
  EXPECT_TRUE(get_part_combined_tensor(&combined->tensor, 0, static_cast<std::int64_t>(total)));
  expect_error([&] { get_part_combined_tensor(&combined->tensor, 1, static_cast<std::int64_t>(total)); },
               "get_part_combined_tensor: (index + size) (" + std::to_string(total + 1) +
                   ") > combined tensor size (" + std::to_string(total) + ")");
  expect_error([&] { get_part_combined_tensor(&combined->tensor, -1, 4); },
               "get_part_combined_tensor: index must be >= 0, got -1");
  expect_error([&] { get_part_combined_tensor(&combined->tensor, 0, -4); },
               "get_part_combined_tensor: size must be >= 0, got -4");
}

TEST(Combine, IsCombinedTensorValid) {
  std::vector<TensorView> tensors = {filled_f32(10, 1.0f), filled_f32(30, 1.0f)};
  auto combined = combine(tensors, true);
  ASSERT_TRUE(combined);
  EXPECT_TRUE(is_combined_tensor_valid(nullptr, {}));
  EXPECT_FALSE(is_combined_tensor_valid(nullptr, tensors));
  EXPECT_TRUE(is_combined_tensor_valid(&combined->tensor, tensors));
  std::vector<TensorView> with_null = {tensors[0], TensorView{}};
  EXPECT_FALSE(is_combined_tensor_valid(&combined->tensor, with_null));
  // A view starting at the last element is inside; one starting at the end is not.
  const auto n = static_cast<std::int64_t>(combined->tensor.numel);
  std::vector<TensorView> last = {*get_part_combined_tensor(&combined->tensor, n - 1, 1)};
  EXPECT_TRUE(is_combined_tensor_valid(&combined->tensor, last));
  TensorView past = last[0];
  past.offset += 1;
  past.numel = 0;
  EXPECT_FALSE(is_combined_tensor_valid(&combined->tensor, std::vector<TensorView>{past}));
}

TEST(ChangeDataPtr, RepointsAtAnOffsetFromSrcStart) {
  TensorView src = filled_f32(100, 0.0f);
  TensorView sub{src.storage, 10, 50, DType::float32};  // a view that starts at element 10
  TensorView dst = filled_f32(5, 0.0f);
  change_data_ptr(dst, sub, 45);
  EXPECT_EQ(dst.storage, src.storage);
  EXPECT_EQ(dst.offset, 55u);
  EXPECT_EQ(dst.f32()[0], 55.0f);
  EXPECT_EQ(dst.numel, 5u);
}

TEST(ChangeDataPtr, EveryErrorHasItsOwnMessage) {
  TensorView src = filled_f32(100, 0.0f);
  TensorView dst = filled_f32(10, 0.0f);
  expect_error([&] { change_data_ptr(dst, src, -1); }, "change_data_ptr: offset must be >= 0, got -1");
  expect_error(
      [&] {
        change_data_ptr(dst, TensorView{nullptr, 0, 100, DType::float32}, 0);
      },
      "change_data_ptr: src has no storage (null); it must be a combined tensor");
  TensorView h = TensorView::empty(device(0), DType::float16, 100);
  expect_error([&] { change_data_ptr(dst, h, 0); },
               "change_data_ptr: dst and src dtypes differ (dst float32, src float16)");
  TensorView i32 = TensorView::empty(device(0), DType::int32, 100);
  TensorView i32dst = TensorView::empty(device(0), DType::int32, 10);
  expect_error([&] { change_data_ptr(i32dst, i32, 0); },
               "change_data_ptr: only float16 and float32 are supported, got int32");
  expect_error([&] { change_data_ptr(dst, src, 91); },
               "change_data_ptr: dst.numel (10) + offset (91) = 101 exceeds src.numel (100)");
  const void* before = dst.data();
  EXPECT_EQ(dst.data(), before) << "a failed call leaves dst unchanged";
  change_data_ptr(dst, src, 90);  // exactly at the end is fine
  EXPECT_EQ(dst.f32()[9], 99.0f);
}

TEST(Lifetime, ViewsOutliveTheirCombinedTensor) {
  // Under ASan a dangling view would be reported as a heap-use-after-free here.
  std::vector<TensorView> tensors = {filled_f32(1000, 1.0f), filled_f32(17, 2.0f)};
  std::optional<TensorView> part;
  {
    auto combined = combine(tensors, true);
    ASSERT_TRUE(combined);
    part = get_part_combined_tensor(&combined->tensor, 0, 5);
  }  // the combined tensor and its segment table are gone
  EXPECT_EQ(tensors[0].f32()[999], 1000.0f);
  EXPECT_EQ(tensors[1].f32()[16], 18.0f);
  TensorView survivor = tensors[1];
  tensors.clear();
  survivor.f32()[0] = 3.0f;
  EXPECT_EQ(survivor.f32()[0], 3.0f);
  EXPECT_EQ(part->f32()[4], 5.0f);
  EXPECT_EQ(survivor.storage.use_count(), 2) << "survivor and part still own the storage";
}

TEST(Storage, AdoptRunsTheReleaseOnce) {
  std::vector<float> host(8, 1.0f);
  int released = 0;
  {
    auto s = Storage::adopt(device(0), host.data(), host.size() * 4, [&](void* p) {
      EXPECT_EQ(p, host.data());
      ++released;
    });
    TensorView view{s, 2, 4, DType::float32};
    s.reset();
    EXPECT_EQ(released, 0);
    EXPECT_EQ(view.f32()[0], 1.0f);
  }
  EXPECT_EQ(released, 1);
}

TEST(SegmentTable, ChunksAndOverlap) {
  SegmentTable table({{0, 3 * kChunkElements + 5}, {4 * kChunkElements, 0}, {4 * kChunkElements, 7}});
  ASSERT_EQ(table.chunks().size(), 5u);
  EXPECT_EQ(table.first_chunk(1), 4u);
  EXPECT_EQ(table.first_chunk(2), 4u);
  EXPECT_EQ(table.first_chunk(3), 5u);
  EXPECT_EQ(table.chunks()[3].begin, 3 * kChunkElements);
  EXPECT_EQ(table.chunks()[3].size(), 5u);
  EXPECT_EQ(table.chunks()[4].segment, 2u);
  EXPECT_EQ(table.extent(), 4 * kChunkElements + 7);
  expect_error([] { SegmentTable({{10, 5}, {0, 11}}); }, "segments 1 [0, 11) and 0 [10, 15) overlap");
}

}  // namespace
}  // namespace apexnpu::rt
