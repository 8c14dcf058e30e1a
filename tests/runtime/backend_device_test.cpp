#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "backend/device.h"
#include "exec/error.h"
#include "exec/half.h"

namespace apexnpu::rt {
namespace {

struct DeviceFree {
  Device* device;
  void operator()(void* p) const noexcept { device->deallocate(p); }
};
using DevicePtr = std::unique_ptr<void, DeviceFree>;
DevicePtr allocate(Device& d, std::size_t bytes) { return DevicePtr(d.allocate(bytes), {&d}); }

TEST(Device, RegistryHasDistinctDevicesAndRejectsBadIndex) {
  ASSERT_GE(device_count(), 2);
  EXPECT_EQ(&device(0), &device(0));
  EXPECT_NE(&device(0), &device(1));
  EXPECT_EQ(device(1).index(), 1);
  EXPECT_EQ(device(1).name(), "npu:1");
  try {
    device(device_count());
    FAIL() << "no exception";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("device index 8 out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(device(-1), ArgumentError);
}

TEST(Device, AllocationsAreAlignedAndWritable) {
  Device& d = device(0);
  for (const std::size_t bytes : {0u, 1u, 63u, 64u, 65u, 4096u, 1000003u}) {
    DevicePtr p = allocate(d, bytes);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % kDeviceAlignment, 0u) << bytes;
    std::memset(p.get(), 0xAB, bytes);
  }
}

TEST(Device, CopiesBothWaysAndWithinTheDevice) {
  Device& d = device(0);
  std::vector<float> host(1000);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  DevicePtr a = allocate(d, host.size() * 4), b = allocate(d, host.size() * 4);
  d.copy_host_to_device(a.get(), host.data(), host.size() * 4);
  d.copy_device_to_device(b.get(), a.get(), host.size() * 4);
  std::vector<float> back(host.size());
  d.copy_device_to_host(back.data(), b.get(), back.size() * 4);
  d.synchronize();
  EXPECT_EQ(back, host);
  // Overlapping device-to-device copies (views of one storage) behave like memmove.
  auto* f = static_cast<float*>(a.get());
  d.copy_device_to_device(f + 1, f, 10 * 4);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(f[i + 1], host[i]);
}

TEST(Device, FillsFloat32AndSaturatingFloat16) {
  Device& d = device(2);
  d.float_status().clear();
  DevicePtr p = allocate(d, 100 * 4);
  d.fill(p.get(), DType::float32, 100, -2.5f);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(static_cast<float*>(p.get())[i], -2.5f);
  auto* h = static_cast<half_bits*>(p.get());
  d.fill(h, DType::float16, 7, 0.1f);
  EXPECT_EQ(h[6], float_to_half(0.1f));
  EXPECT_FALSE(d.float_status().get());
  d.fill(h, DType::float16, 7, 1e6f);
  EXPECT_EQ(h[0], 0x7BFF);
  EXPECT_TRUE(d.float_status().get());
  EXPECT_FALSE(device(3).float_status().get()) << "the status is per device";
  EXPECT_THROW(d.fill(p.get(), DType::int32, 1, 0.0f), ArgumentError);
}

TEST(Device, FloatStatusIsStickyUntilCleared) {
  Device& d = device(4);
  d.float_status().clear();
  EXPECT_FALSE(d.float_status().get());
  d.float_status().raise();
  d.float_status().raise();
  EXPECT_TRUE(d.float_status().get());
  EXPECT_TRUE(d.float_status().clear());
  EXPECT_FALSE(d.float_status().get());
  EXPECT_FALSE(d.float_status().clear());
}

}  // namespace
}  // namespace apexnpu::rt
