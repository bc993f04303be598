// The kernels against views that begin before their tensors, as persistent
// arenas bind them (one view per format over a whole arena, created once,
// kernel_abi.h ViewBases): every buffer slot of a request gets a prefix of
// sentinel texels (3, 5, 7, 11 and 13 texels for input, scale, bias, output,
// scratch), every view starts at element 0 of its buffer, and the
// dispatch's view_base says where its tensor begins. The results must be
// bit-identical to the same plan bound as before (views starting at the
// tensors, bases 0), the output must match the CPU reference (OPERATORS.md
// §8), and no byte before or after any tensor may change.
//
// Runs the real planner, kernels and DispatchBinder on the software adapter
// (DMLS_KERNELS_TEST_ADAPTER=gpu: the hardware GPU), through a small
// harness of its own: GpuEngine uploads every tensor at offset 0 of its
// buffer, and the point here is that it need not.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/d3d12/test_adapter.h"
#include "absl/strings/str_cat.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/cpu/float16.h"
#include "engine/cpu/tensor_access.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/device.h"
#include "engine/d3d12/dispatch_binder.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/d3d12/fence.h"
#include "engine/d3d12/hresult.h"
#include "engine/d3d12/objects.h"
#include "engine/d3d12/pipeline_cache.h"
#include "engine/plan/planner.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"
#include "gtest/gtest.h"
#include "tests/conformance/tolerance.h"

namespace dmls::gpu {
namespace {

using d3d12::kSlotCount;

constexpr char kSentinel = static_cast<char>(0xA5);
constexpr char kPoison = static_cast<char>(0xFF);  // initial output/scratch bytes
constexpr uint64_t kTailBytes = 256;  // sentinel checked past each tensor

// Prefix of each BufferSlot (kNone, kInput, kScale, kBias, kOutput,
// kScratch) in texels of the widest view format bound on it, so that
// bases are odd and differ from slot to slot.
constexpr std::array<uint64_t, kSlotCount> kPrefixTexels = {0, 3, 5, 7, 11, 13};

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

size_t Index(BufferSlot s) { return static_cast<size_t>(s); }

// The buffer a view's slot lives in: in place, the output is the input.
BufferSlot Storage(BufferSlot s, bool in_place) {
  return in_place && s == BufferSlot::kOutput ? BufferSlot::kInput : s;
}

// Calls f(view, its base) for t0..t2, u0..u1 (D: Dispatch or const Dispatch).
template <typename D, typename F>
void ForEachView(D& d, F f) {
  for (size_t s = 0; s < d.srv.size(); ++s) f(d.srv[s], d.view_base[s]);
  for (size_t u = 0; u < d.uav.size(); ++u) f(d.uav[u], d.view_base[d.srv.size() + u]);
}

// Prefix bytes of every buffer for `plan`.
std::array<uint64_t, kSlotCount> Prefixes(const DispatchPlan& plan, bool in_place) {
  std::array<uint64_t, kSlotCount> texel = {};
  for (const Dispatch& d : plan.dispatches) {
    ForEachView(d, [&](const View& v, const uint32_t&) {
      if (v.buffer == BufferSlot::kNone) return;
      uint64_t& t = texel[Index(Storage(v.buffer, in_place))];
      t = std::max<uint64_t>(t, gpu::TexelBytes(v.format));
    });
  }
  std::array<uint64_t, kSlotCount> prefix = {};
  for (size_t s = 0; s < kSlotCount; ++s) prefix[s] = kPrefixTexels[s] * texel[s];
  return prefix;
}

// `plan` bound over whole-buffer views: each view starts at element 0 and
// its tensor (the planned view start) `view_base` texels in.
DispatchPlan WithViewBases(DispatchPlan plan, const std::array<uint64_t, kSlotCount>& prefix,
                           bool in_place) {
  for (Dispatch& d : plan.dispatches) {
    ForEachView(d, [&](View& v, uint32_t& base) {
      if (v.buffer == BufferSlot::kNone) return;
      const uint64_t texel = gpu::TexelBytes(v.format);
      const uint64_t pre = prefix[Index(Storage(v.buffer, in_place))];
      EXPECT_EQ(pre % texel, 0u);
      EXPECT_GT(pre, 0u);
      base = static_cast<uint32_t>(pre / texel + v.first_element);
      v.num_elements += base;
      v.first_element = 0;
    });
  }
  return plan;
}

// Executes plans on buffers laid out as [prefix | tensor | tail], prefix
// and tail holding kSentinel, and reads every buffer back whole.
class Runner {
 public:
  absl::Status Init(d3d12::DeviceOptions::Kind kind) {
    d3d12::DeviceOptions options;
    options.kind = kind;
    absl::StatusOr<std::unique_ptr<d3d12::Device>> d = d3d12::Device::Create(options);
    if (!d.ok()) return d.status();
    device_ = std::move(*d);
    ID3D12Device* dev = device_->d3d();
    if (absl::Status s = d3d12::CreateDirectQueue(dev, &queue_); !s.ok()) return s;
    absl::StatusOr<std::unique_ptr<d3d12::Fence>> fence = d3d12::Fence::Create(dev);
    if (!fence.ok()) return fence.status();
    fence_ = std::move(*fence);
    if (absl::Status s = d3d12::CreateClosedDirectList(dev, &allocator_, &list_); !s.ok()) {
      return s;
    }
    pool_ = std::make_unique<d3d12::BufferPool>(dev, d3d12::BufferPoolOptions{});
    absl::StatusOr<std::unique_ptr<d3d12::PipelineCache>> p =
        d3d12::PipelineCache::Create(dev, d3d12::DxbcKernelSource());
    if (!p.ok()) return p.status();
    pipelines_ = std::move(*p);
    absl::StatusOr<std::unique_ptr<d3d12::DispatchBinder>> b =
        d3d12::DispatchBinder::Create(dev, pipelines_.get());
    if (!b.ok()) return b.status();
    binder_ = std::move(*b);
    return absl::OkStatus();
  }

  // Runs `plan`. `data[slot]` is the initial tensor region of each slot's
  // buffer (empty: no buffer; in place, kOutput is kInput's buffer).
  // Returns each buffer whole: prefix[slot] bytes, the tensor region, then
  // sentinel up to a 16-byte boundary plus kTailBytes.
  absl::StatusOr<std::array<std::string, kSlotCount>> Run(
      const DispatchPlan& plan, const std::array<std::string, kSlotCount>& data,
      const std::array<uint64_t, kSlotCount>& prefix, bool in_place) {
    std::array<std::string, kSlotCount> whole;
    std::array<uint64_t, kSlotCount> at = {};  // offset in the upload/readback buffers
    uint64_t staging = 0;
    for (size_t s = 0; s < kSlotCount; ++s) {
      if (data[s].empty()) continue;
      whole[s] = std::string(prefix[s], kSentinel) + data[s];
      whole[s].resize(RoundUp(whole[s].size(), 16) + kTailBytes, kSentinel);
      at[s] = staging;
      staging = RoundUp(staging + whole[s].size(), 256);
    }
    std::vector<d3d12::PoolBuffer*> taken;
    auto acquire = [&](d3d12::HeapKind kind, uint64_t bytes) -> absl::StatusOr<d3d12::PoolBuffer*> {
      absl::StatusOr<d3d12::PoolBuffer*> b = pool_->Acquire(kind, bytes);
      if (b.ok()) taken.push_back(*b);
      return b;
    };
    auto release = [&](uint64_t fence_value) {
      for (d3d12::PoolBuffer* b : taken) pool_->Release(b, fence_value);
    };
    absl::StatusOr<d3d12::PoolBuffer*> upload = acquire(d3d12::HeapKind::kUpload, staging);
    absl::StatusOr<d3d12::PoolBuffer*> readback = acquire(d3d12::HeapKind::kReadback, staging);
    std::array<ID3D12Resource*, kSlotCount> gpu = {};
    d3d12::SlotBuffers slots;
    for (size_t s = 0; s < kSlotCount && upload.ok() && readback.ok(); ++s) {
      if (whole[s].empty()) continue;
      absl::StatusOr<d3d12::PoolBuffer*> b = acquire(d3d12::HeapKind::kDefault, whole[s].size());
      if (!b.ok()) {
        release(0);
        return b.status();
      }
      gpu[s] = (*b)->resource.get();
      std::memcpy((*upload)->mapped + at[s], whole[s].data(), whole[s].size());
      // The binder checks views against the bytes we laid out, not the
      // pool's size class.
      slots.Set(static_cast<BufferSlot>(s), gpu[s], whole[s].size());
    }
    if (!upload.ok() || !readback.ok()) {
      release(0);
      return upload.ok() ? readback.status() : upload.status();
    }
    if (in_place) {
      gpu[Index(BufferSlot::kOutput)] = gpu[Index(BufferSlot::kInput)];
      slots.Set(BufferSlot::kOutput, gpu[Index(BufferSlot::kInput)], whole[Index(BufferSlot::kInput)].size());
    }

    binder_->Reclaim(fence_->completed());
    absl::StatusOr<std::vector<d3d12::BoundDispatch>> bound = binder_->Bind(plan, slots);
    if (!bound.ok()) {
      release(0);
      return bound.status();
    }

    HRESULT hr = allocator_->Reset();
    if (SUCCEEDED(hr)) hr = list_->Reset(allocator_.get(), nullptr);
    if (FAILED(hr)) {
      release(0);
      return d3d12::HrToStatus(hr, "Reset");
    }
    ID3D12GraphicsCommandList* l = list_.get();
    auto transition_all = [&](auto state_of) {
      std::vector<D3D12_RESOURCE_BARRIER> barriers;
      for (size_t s = 0; s < kSlotCount; ++s) {
        if (whole[s].empty()) continue;
        D3D12_RESOURCE_BARRIER b = {};
        b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
        b.Transition.pResource = gpu[s];
        b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
        b.Transition.StateBefore = state_of(s).first;
        b.Transition.StateAfter = state_of(s).second;
        barriers.push_back(b);
      }
      l->ResourceBarrier(static_cast<UINT>(barriers.size()), barriers.data());
    };
    // Buffers start in COMMON (they decay to it after every submission).
    auto kernel_state = [&](size_t s) {
      const bool written = s == Index(BufferSlot::kOutput) || s == Index(BufferSlot::kScratch) ||
                           (in_place && s == Index(BufferSlot::kInput));
      return written ? D3D12_RESOURCE_STATE_UNORDERED_ACCESS
                     : D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE;
    };
    transition_all([&](size_t) {
      return std::make_pair(D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_DEST);
    });
    for (size_t s = 0; s < kSlotCount; ++s) {
      if (!whole[s].empty()) {
        l->CopyBufferRegion(gpu[s], 0, (*upload)->resource.get(), at[s], whole[s].size());
      }
    }
    transition_all([&](size_t s) {
      return std::make_pair(D3D12_RESOURCE_STATE_COPY_DEST, kernel_state(s));
    });
    binder_->SetState(l);
    ID3D12PipelineState* pso = nullptr;
    d3d12::DispatchBinder::Record(l, *bound, &pso);
    transition_all([&](size_t s) {
      return std::make_pair(kernel_state(s), D3D12_RESOURCE_STATE_COPY_SOURCE);
    });
    for (size_t s = 0; s < kSlotCount; ++s) {
      if (!whole[s].empty()) {
        l->CopyBufferRegion((*readback)->resource.get(), at[s], gpu[s], 0, whole[s].size());
      }
    }
    hr = l->Close();
    if (FAILED(hr)) {
      binder_->Retire(fence_->last_signaled());
      release(fence_->last_signaled());
      return d3d12::HrToStatus(hr, "Close");
    }
    ID3D12CommandList* lists[] = {l};
    queue_->ExecuteCommandLists(1, lists);
    absl::StatusOr<uint64_t> value = fence_->Signal(queue_.get());
    if (!value.ok()) return value.status();
    binder_->Retire(*value);
    absl::Status waited = fence_->Wait(*value);
    std::array<std::string, kSlotCount> out;
    for (size_t s = 0; s < kSlotCount && waited.ok(); ++s) {
      if (whole[s].empty()) continue;
      out[s].assign(reinterpret_cast<const char*>((*readback)->mapped) + at[s], whole[s].size());
    }
    release(*value);
    pool_->Reclaim(fence_->completed());
    if (!waited.ok()) return waited;
    return out;
  }

 private:
  std::unique_ptr<d3d12::Device> device_;
  d3d12::ComPtr<ID3D12CommandQueue> queue_;
  std::unique_ptr<d3d12::Fence> fence_;
  d3d12::ComPtr<ID3D12CommandAllocator> allocator_;
  d3d12::ComPtr<ID3D12GraphicsCommandList> list_;
  std::unique_ptr<d3d12::BufferPool> pool_;
  std::unique_ptr<d3d12::PipelineCache> pipelines_;
  std::unique_ptr<d3d12::DispatchBinder> binder_;
};

// Bytes of a tensor buffer, every element slot (padding too) holding a
// value of its type: floats in [-4, 4), integers over their whole range.
std::string RandomBuffer(const TensorDesc& t, uint32_t seed) {
  std::string bytes(t.total_tensor_size_in_bytes, '\0');
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return seed;
  };
  auto uniform = [&] { return static_cast<float>(next() >> 8) / 16777216.0f * 8.0f - 4.0f; };
  if (t.type() == DataType::kFloat32) {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      const float v = uniform();
      std::memcpy(&bytes[i], &v, 4);
    }
  } else if (t.type() == DataType::kFloat16) {
    for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
      const uint16_t h = cpu::FloatToHalfBits(uniform());
      std::memcpy(&bytes[i], &h, 2);
    }
  } else {
    for (char& c : bytes) c = static_cast<char>(next() >> 24);
  }
  return bytes;
}

class ViewBaseGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    runner_ = new Runner();
    absl::Status s = runner_->Init(d3d12::TestAdapterKind());
    if (!s.ok()) {
      delete runner_;
      runner_ = nullptr;
      FAIL() << s;
    }
  }
  static void TearDownTestSuite() {
    delete runner_;
    runner_ = nullptr;
  }

  // Runs `r` twice, views at the tensors and views over whole buffers with
  // bases, and checks both against each other, the CPU reference and the
  // sentinels.
  static void Check(const ExecuteRequest& r, const PlannerOptions& options = {}) {
    ASSERT_NE(runner_, nullptr);
    const OperatorDesc& op = r.op;
    ASSERT_TRUE(ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), r.in_place).ok())
        << ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), r.in_place);
    absl::StatusOr<DispatchPlan> plan = PlanExecution(op, r.in_place, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<ExecuteResult> want = CpuEngine::Run(r);
    ASSERT_TRUE(want.ok()) << want.status();

    std::array<std::string, kSlotCount> data;
    data[Index(BufferSlot::kInput)] = r.input.ToString();
    data[Index(BufferSlot::kScale)] = r.scale.ToString();
    data[Index(BufferSlot::kBias)] = r.bias.ToString();
    if (!r.in_place) {
      data[Index(BufferSlot::kOutput)].assign(op.output->total_tensor_size_in_bytes, kPoison);
    }
    data[Index(BufferSlot::kScratch)].assign(plan->scratch_bytes, kPoison);

    absl::StatusOr<std::array<std::string, kSlotCount>> before =
        runner_->Run(*plan, data, {}, r.in_place);
    ASSERT_TRUE(before.ok()) << before.status();
    const std::array<uint64_t, kSlotCount> prefix = Prefixes(*plan, r.in_place);
    const DispatchPlan rebased = WithViewBases(*plan, prefix, r.in_place);
    absl::StatusOr<std::array<std::string, kSlotCount>> after =
        runner_->Run(rebased, data, prefix, r.in_place);
    ASSERT_TRUE(after.ok()) << after.status();

    for (size_t s = 0; s < kSlotCount; ++s) {
      if (data[s].empty()) continue;
      const std::string& a = (*after)[s];
      // Kernels may rewrite the partial last word of a tensor (its padding
      // lanes), nothing past it.
      const uint64_t end = prefix[s] + RoundUp(data[s].size(), 4);
      ASSERT_GE(a.size(), end);
      EXPECT_EQ(a.substr(0, prefix[s]), std::string(prefix[s], kSentinel))
          << "slot " << s << ": prefix written";
      EXPECT_EQ(a.substr(end), std::string(a.size() - end, kSentinel))
          << "slot " << s << ": bytes past the tensor written";
      EXPECT_TRUE(a.compare(prefix[s], data[s].size(), (*before)[s], 0, data[s].size()) == 0)
          << "slot " << s << ": differs from the run with views at the tensors";
      const bool read_only = s == Index(BufferSlot::kScale) || s == Index(BufferSlot::kBias) ||
                             (s == Index(BufferSlot::kInput) && !r.in_place);
      if (read_only) {
        EXPECT_TRUE(a.compare(prefix[s], data[s].size(), data[s]) == 0) << "slot " << s << " written";
      }
    }

    // The output elements against the CPU reference.
    const BufferSlot out_slot = r.in_place ? BufferSlot::kInput : BufferSlot::kOutput;
    const std::string& out = (*after)[Index(out_slot)];
    const DataType type = op.output->type();
    const uint32_t size = ElementBytes(type);
    std::string got, expected;
    for (uint64_t o : cpu::ElementOffsets(*op.output)) {
      got.append(out, prefix[Index(out_slot)] + o * size, size);
      expected.append(want->output, o * size, size);
    }
    const ops::OperatorSchema* schema = ops::FindOperator(op.type);
    ASSERT_NE(schema, nullptr);
    std::string cls(ops::ToleranceClassName(schema->tolerance));
    if (cls == "EXACT" && op.scale_bias) cls = "ARITH";
    absl::StatusOr<conformance::Tolerance> tol = conformance::ToleranceFor(cls, type);
    ASSERT_TRUE(tol.ok()) << tol.status();
    const std::optional<conformance::Mismatch> m =
        conformance::CompareElements(got, expected, type, got.size() / size, *tol);
    EXPECT_FALSE(m) << m->message;
  }

  static ExecuteRequest Request(OperatorDesc op, bool in_place = false) {
    ExecuteRequest r;
    r.input = RandomBuffer(*op.input, 1);
    if (op.scale) r.scale = RandomBuffer(*op.scale, 2);
    if (op.bias) r.bias = RandomBuffer(*op.bias, 3);
    r.op = std::move(op);
    r.in_place = in_place;
    return r;
  }

  static Runner* runner_;
};
Runner* ViewBaseGpuTest::runner_ = nullptr;

OperatorDesc Unary(OperatorType type, DataType t, std::vector<uint64_t> sizes,
                   std::optional<std::vector<uint64_t>> in_strides = {},
                   std::optional<std::vector<uint64_t>> out_strides = {}) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(type);
  op.input = MakeTensorDesc(t, sizes, in_strides);
  op.output = MakeTensorDesc(t, sizes, out_strides);
  return op;
}

// `op`'s plan (not in place); a planning error fails the test and gives an
// empty plan.
DispatchPlan PlanOf(const OperatorDesc& op, const PlannerOptions& options = {}) {
  absl::StatusOr<DispatchPlan> plan = PlanExecution(op, false, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : DispatchPlan();
}

OperatorDesc Clip(DataType t, std::vector<uint64_t> sizes, float min, float max,
                  std::optional<std::vector<uint64_t>> in_strides = {},
                  std::optional<std::vector<uint64_t>> out_strides = {}) {
  OperatorDesc op = Unary(OperatorType::kElementWiseClip, t, std::move(sizes),
                          std::move(in_strides), std::move(out_strides));
  op.min = min;
  op.max = max;
  return op;
}

// Contiguous plans: vec4 texels (R32G32B32A32 views, bases in 16-byte
// texels) and the < 4-word tail (an R32 view over the same buffer, bases in
// words). Small views split the vec4 part into dispatches whose planned
// view starts fold into the bases.
TEST_F(ViewBaseGpuTest, ContiguousFloat32Vec4AndWordTail) {
  OperatorDesc op = Unary(OperatorType::kActivationCelu, DataType::kFloat32, {3, 1001});
  op.activation = {1.5f, std::nullopt};
  const ExecuteRequest r = Request(op);
  Check(r);
  PlannerOptions split;
  split.max_view_texels = 100;
  ASSERT_EQ(PlanOf(op, split).dispatches.size(), 9u);  // 750 texels in 8 views, 3 tail words
  Check(r, split);
}

TEST_F(ViewBaseGpuTest, ContiguousFloat16ThresholdScaleBias) {
  OperatorDesc op = Unary(OperatorType::kElementWiseThreshold, DataType::kFloat16, {7, 143});
  op.min = -0.75f;
  op.scale_bias = ScaleBias{1.5f, 0.25f};
  Check(Request(op));  // 1001 halves: 125 texels and one word
}

TEST_F(ViewBaseGpuTest, ContiguousInPlace) {
  OperatorDesc op = Unary(OperatorType::kActivationSoftsign, DataType::kFloat32, {2, 999});
  Check(Request(op, /*in_place=*/true));
}

TEST_F(ViewBaseGpuTest, StridedFloat32) {
  OperatorDesc op = Unary(OperatorType::kActivationSigmoid, DataType::kFloat32, {5, 6, 7},
                          std::vector<uint64_t>{64, 9, 1}, std::vector<uint64_t>{1, 5, 30});
  Check(Request(op));
}

// Sub-word elements: loads of the containing word, stores by atomic and/or
// on it (the neighbours belong to other threads).
TEST_F(ViewBaseGpuTest, StridedFloat16Atomics) {
  Check(Request(Clip(DataType::kFloat16, {9, 13}, -1.0f, 2.0f,
                     std::vector<uint64_t>{16, 1}, std::vector<uint64_t>{1, 9})));
}

TEST_F(ViewBaseGpuTest, StridedInt8AtomicsWithScaleBias) {
  OperatorDesc op = Clip(DataType::kInt8, {6, 11}, -50.0f, 60.0f,
                         std::vector<uint64_t>{1, 6}, std::vector<uint64_t>{12, 1});
  op.scale_bias = ScaleBias{0.5f, 3.0f};
  Check(Request(op));
}

// 64-bit CLIP: an odd element count leaves a last element for a rank-1
// strided dispatch over its two words (an R32 view starting mid-buffer).
TEST_F(ViewBaseGpuTest, ContiguousInt64ClipWithOddTail) {
  OperatorDesc op = Clip(DataType::kInt64, {5, 7}, -1e18f, 2e18f);
  const DispatchPlan plan = PlanOf(op);
  ASSERT_EQ(plan.dispatches.size(), 2u);
  EXPECT_EQ(plan.dispatches[1].key.layout, LayoutClass::kStrided);
  Check(Request(op));
}

TEST_F(ViewBaseGpuTest, StridedUint64Clip) {
  Check(Request(Clip(DataType::kUint64, {4, 5}, 1e18f, 1e19f,
                     std::vector<uint64_t>{8, 1}, std::vector<uint64_t>{1, 4})));
}

OperatorDesc Mvn1(DataType t, std::vector<uint64_t> sizes, std::vector<uint64_t> axes,
                  std::vector<uint64_t> scale_sizes, std::vector<uint64_t> bias_sizes,
                  OperatorType fused, float p0) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
  op.input = MakeTensorDesc(t, sizes);
  op.output = op.input;
  op.scale = MakeTensorDesc(t, scale_sizes);
  op.bias = MakeTensorDesc(t, bias_sizes);
  op.axis_count = axes.size();
  op.axes = axes;
  op.normalize_variance = 1;
  op.epsilon = 1e-5f;
  FusedActivationDesc f;
  f.type = static_cast<uint32_t>(fused);
  f.params = {p0, std::nullopt};
  op.fused_activation = f;
  return op;
}

// MVN1: the partial dispatch writes scratch (u1), the apply dispatch reads
// it back with typed UAV loads and reads input, scale and bias (t0..t2).
// 33,000 elements per group (beyond the row kernels): nine chunks, so
// partials really combine.
TEST_F(ViewBaseGpuTest, Mvn1Float32ScaleBiasFusedCelu) {
  OperatorDesc op = Mvn1(DataType::kFloat32, {2, 3, 33000}, {2}, {1, 3, 1}, {1, 1, 33000},
                         OperatorType::kActivationCelu, 0.8f);
  const DispatchPlan plan = PlanOf(op);
  ASSERT_EQ(plan.dispatches.size(), 2u);
  EXPECT_GT(plan.scratch_bytes, 0u);
  Check(Request(op));
}

// The row kernels (one dispatch, no scratch): 1,024-thread and 64-thread.
TEST_F(ViewBaseGpuTest, Mvn1Float16ScaleBiasFusedLeakyRelu) {
  OperatorDesc op = Mvn1(DataType::kFloat16, {4, 5001}, {1}, {1, 5001}, {4, 1},
                         OperatorType::kActivationLeakyRelu, 0.1f);
  Check(Request(op));
  op = Mvn1(DataType::kFloat32, {5, 999}, {1}, {1, 999}, {5, 1}, OperatorType::kActivationElu,
            0.5f);
  const DispatchPlan plan = PlanOf(op);
  ASSERT_EQ(plan.dispatches.size(), 1u);
  EXPECT_EQ(plan.dispatches[0].key.stage, KernelStage::kMvnRow);
  Check(Request(op));
}

// 16-byte texel loads and stores (kMvnVariantVec4): t0 and u0 bases in
// texels, Scale/Bias bases in words; the 33,000-element case above loads
// texels in both of its dispatches.
TEST_F(ViewBaseGpuTest, Mvn1TexelRowsFloat16AndFloat32) {
  for (DataType t : {DataType::kFloat16, DataType::kFloat32}) {
    const OperatorDesc op = Mvn1(t, {5, 1000}, {1}, {1, 1000}, {5, 1},
                                 OperatorType::kActivationElu, 0.5f);
    const DispatchPlan plan = PlanOf(op);
    ASSERT_EQ(plan.dispatches.size(), 1u);
    EXPECT_NE(plan.dispatches[0].key.variant & kMvnVariantVec4, 0);
    EXPECT_EQ(plan.dispatches[0].srv[0].format, ViewFormat::kR32G32B32A32Uint);
    Check(Request(op));
  }
}

}  // namespace
}  // namespace dmls::gpu
