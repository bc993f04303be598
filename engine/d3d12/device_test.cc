#include "engine/d3d12/device.h"

#include "engine/d3d12/fence.h"
#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

TEST(DeviceTest, ParsesKinds) {
  EXPECT_EQ(*ParseDeviceKind("auto"), DeviceOptions::Kind::kAuto);
  EXPECT_EQ(*ParseDeviceKind("gpu"), DeviceOptions::Kind::kGpu);
  EXPECT_EQ(*ParseDeviceKind("software"), DeviceOptions::Kind::kSoftware);
  EXPECT_FALSE(ParseDeviceKind("cpu").ok());
  EXPECT_EQ(DeviceKindName(DeviceOptions::Kind::kSoftware), "software");
}

std::vector<AdapterInfo> FakeAdapters() {
  std::vector<AdapterInfo> a(3);
  a[0] = {0, "llvmpipe", "software", false, 0};
  a[1] = {1, "integrated", "gpu", false, 1};
  a[2] = {2, "discrete", "gpu", true, 2};
  return a;
}

TEST(DeviceTest, ChoosesDiscreteGpuFirst) {
  DeviceOptions o;
  EXPECT_EQ(*ChooseAdapter(FakeAdapters(), o), 2);
  o.kind = DeviceOptions::Kind::kGpu;
  EXPECT_EQ(*ChooseAdapter(FakeAdapters(), o), 2);
  o.kind = DeviceOptions::Kind::kSoftware;
  EXPECT_EQ(*ChooseAdapter(FakeAdapters(), o), 0);
  o.adapter_index = 1;
  EXPECT_EQ(*ChooseAdapter(FakeAdapters(), o), 1);
  o.adapter_index = 3;
  EXPECT_EQ(ChooseAdapter(FakeAdapters(), o).status().code(),
            absl::StatusCode::kNotFound);
}

// llvmpipe, an integrated GPU, two discrete H200s.
std::vector<AdapterInfo> TwoGpus() {
  return {{0, "llvmpipe (LLVM 15)", "software", false, 0},
          {1, "Intel UHD", "gpu", false, 1},
          {2, "NVIDIA H200", "gpu", true, 2},
          {3, "NVIDIA H200", "gpu", true, 2}};
}

TEST(DeviceTest, EveryDiscreteGpuByDefault) {
  DeviceOptions o;
  o.kind = DeviceOptions::Kind::kGpu;
  EXPECT_EQ(*ChooseAdapters(TwoGpus(), o), (std::vector<int>{2, 3}));
  o.kind = DeviceOptions::Kind::kAuto;
  EXPECT_EQ(*ChooseAdapters(TwoGpus(), o), (std::vector<int>{2, 3}));
  o.kind = DeviceOptions::Kind::kSoftware;
  EXPECT_EQ(*ChooseAdapters(TwoGpus(), o), (std::vector<int>{0}));
  // No discrete GPU: the one ChooseAdapter picks.
  std::vector<AdapterInfo> a = TwoGpus();
  a.resize(2);
  o.kind = DeviceOptions::Kind::kGpu;
  EXPECT_EQ(*ChooseAdapters(a, o), (std::vector<int>{1}));
  o.kind = DeviceOptions::Kind::kAuto;
  a.resize(1);
  EXPECT_EQ(*ChooseAdapters(a, o), (std::vector<int>{0}));
  o.kind = DeviceOptions::Kind::kGpu;
  EXPECT_EQ(ChooseAdapters(a, o).status().code(), absl::StatusCode::kNotFound);
}

TEST(DeviceTest, ParsesAdapterLists) {
  EXPECT_EQ(*ParseAdapterList(TwoGpus(), "2"), (std::vector<int>{2}));
  EXPECT_EQ(*ParseAdapterList(TwoGpus(), "3, 2"), (std::vector<int>{3, 2}));
  // A name selects every adapter that has it.
  EXPECT_EQ(*ParseAdapterList(TwoGpus(), "H200"), (std::vector<int>{2, 3}));
  EXPECT_EQ(*ParseAdapterList(TwoGpus(), "Intel,3"), (std::vector<int>{1, 3}));
  // Twice: two engines on one adapter (testing).
  EXPECT_EQ(*ParseAdapterList(TwoGpus(), "0,0"), (std::vector<int>{0, 0}));
  EXPECT_EQ(*ParseAdapterList(TwoGpus(), "llvmpipe,llvmpipe"),
            (std::vector<int>{0, 0}));
  EXPECT_EQ(ParseAdapterList(TwoGpus(), "4").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseAdapterList(TwoGpus(), "-1").status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<int>> none = ParseAdapterList(TwoGpus(), "A100");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("A100"), std::string::npos);
  EXPECT_NE(none.status().message().find("H200"), std::string::npos);
  EXPECT_EQ(ParseAdapterList(TwoGpus(), "2,,3").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceTest, GpuKindFailsClearlyWithoutGpu) {
  std::vector<AdapterInfo> a = {{0, "llvmpipe", "software", false, 0}};
  DeviceOptions o;
  EXPECT_EQ(*ChooseAdapter(a, o), 0);  // auto falls back to software
  o.kind = DeviceOptions::Kind::kGpu;
  absl::StatusOr<int> r = ChooseAdapter(a, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no hardware GPU"), std::string::npos);
  EXPECT_NE(r.status().message().find("llvmpipe"), std::string::npos);
  EXPECT_FALSE(ChooseAdapter({}, DeviceOptions()).ok());
}

TEST(DeviceTest, CreatesSoftwareDeviceHeadlessly) {
  DeviceOptions o;
  o.kind = DeviceOptions::Kind::kSoftware;
  absl::StatusOr<std::unique_ptr<Device>> device = Device::Create(o);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->adapter().kind, "software");
  EXPECT_FALSE((*device)->adapter().name.empty());
  DeviceInfo info = (*device)->device_info();
  EXPECT_EQ(info.kind, "software");
  EXPECT_EQ(info.name, (*device)->adapter().name);
  EXPECT_FALSE(info.backend.empty());
  ASSERT_NE((*device)->d3d(), nullptr);

  // The device is usable: a queue, a fence signalled and waited on.
  D3D12_COMMAND_QUEUE_DESC qd = {};
  qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
  ComPtr<ID3D12CommandQueue> queue;
  ASSERT_TRUE(SUCCEEDED((*device)->d3d()->CreateCommandQueue(
      &qd, DMLS_IID_PPV(ID3D12CommandQueue, queue.Put()))));
  absl::StatusOr<std::unique_ptr<Fence>> fence = Fence::Create((*device)->d3d());
  ASSERT_TRUE(fence.ok()) << fence.status();
  for (int i = 1; i <= 3; ++i) {
    absl::StatusOr<uint64_t> v = (*fence)->Signal(queue.get());
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, static_cast<uint64_t>(i));
    ASSERT_TRUE((*fence)->Wait(*v).ok());
    EXPECT_GE((*fence)->completed(), *v);
  }
}

TEST(DeviceTest, ListsTheSoftwareAdapter) {
  absl::StatusOr<std::vector<AdapterInfo>> adapters = Device::ListAdapters();
  ASSERT_TRUE(adapters.ok()) << adapters.status();
  bool software = false;
  for (const AdapterInfo& a : *adapters) software |= a.kind == "software";
  EXPECT_TRUE(software);
}

}  // namespace
}  // namespace dmls::d3d12
