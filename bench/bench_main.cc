// dmls_bench: measures the D3D12 engine's kernels in GB/s and, in the same
// run and on the same buffers, a D3D12 device-to-device CopyBufferRegion of
// the same size as the anchor. Each measurement records `iters` executions
// into one command list between two timestamp queries, runs the list once
// to warm up and once timed, and reports GPU time per execution (and the
// wall time of the submit + fence wait as a cross-check). Bytes counted per
// execution: input read + output written (MVN1 too, as PyTorch's
// layer_norm bar in DESIGN.md §3 counts it).
//
//   dmls_bench [--ops=celu,threshold,...] [--sizes=1M,16M,128M] [--iters=20]
//              [--device=auto|gpu|software] [--adapter=N] [--mvn_rows=512]
//              [--overlap] [--no_dispatch_cost] [--list_adapters] [--show_plan]
//              [--engine_requests=2000] [--engine_elements=1K]
//              [--engine_in_flight=64] [--engine_threads=4]
//              [--engine_max_batch=256[,1]] [--data_type=float32|float16]
//              [--cache_mib=N] [--mvn_block_kib=N] [--mvn_no_row]
//              [--mvn_wide_row] [--mvn_blocked] [--plan_only]
//              [--mvn_coop_max_chunks=N] [--mvn_coop_spin_limit=N]
//              [--mvn_vec4=0|1] [--mvn_vec4_scale_bias=0|1]
//
// The engine run pushes small CELU requests through GpuEngine end to end
// (upload, batching, kernels, readback, callbacks) and reports requests/s:
// that is where batching many requests into one command list shows.
//
// MVN1 normalises rows of --mvn_rows x (size / mvn_rows) over the last
// axis; --sizes=134217216 gives PyTorch's 512 x 262143 layer_norm case.
// mvn1_nv0 is the same with NormalizeVariance FALSE (exact-mean statistics);
// mvn1_affine with a Scale and a Bias per column (PyTorch's layer_norm with
// weight and bias), whose FLOAT32 kernels carry the overflow and
// cancellation slow path (mvn_emitter_normalise.cc, Affine).
// --cache_mib tells the planner the adapter's L2 size (D3D12 does not
// report it; default gpu::kAssumedCacheBytes); --mvn_blocked turns on the
// blocked MVN schedule (off by default) with row blocks of a quarter of the
// cache, --mvn_block_kib=N with blocks of N KiB; --mvn_wide_row lets rows of
// up to 32,768 elements take the row schedule (off by default); --mvn_no_row
// keeps MVN off the row schedule (to compare with the two dispatches); --show_plan
// prints the MVN schedule chosen (row, blocked, two-pass or cooperative);
// --plan_only prints the plans without a device and measures nothing.
// --mvn_coop_max_chunks=N turns on the cooperative MVN schedule (off by
// default: slower than the two passes on the H100) for groups of up to N
// 4,096-element chunks; --mvn_coop_spin_limit sets the polls before one of
// its normalisation tasks stops waiting. --mvn_vec4=0 keeps MVN on one
// 32-bit load per element where it would load whole 16-byte texels
// (PlannerOptions::mvn_vec4; --show_plan says which it took);
// --mvn_vec4_scale_bias=0 keeps Scale and Bias on one load per element
// beside texels of the input (PlannerOptions::mvn_vec4_scale_bias).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/device_flags.h"
#include "engine/core/tensor_desc.h"
#include "engine/d3d12/buffer_pool.h"
#include "engine/d3d12/device.h"
#include "engine/d3d12/dispatch_binder.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/d3d12/fence.h"
#include "engine/d3d12/hresult.h"
#include "engine/d3d12/pipeline_cache.h"
#include "engine/plan/mvn_plan.h"
#include "engine/plan/planner.h"
#include "engine/ops/validator.h"

namespace dmls::d3d12 {
namespace {

struct Flags {
  std::vector<std::string> ops = {"celu", "threshold", "clip", "relu",
                                  "sigmoid", "tanh", "mvn1"};
  std::vector<uint64_t> sizes = {1ull << 20, 16ull << 20, 128ull << 20};
  int iters = 20;
  DeviceOptions device;
  uint64_t mvn_rows = 512;
  bool overlap = false;        // no UAV barrier between executions
  bool dispatch_cost = true;   // measure per-dispatch and submit cost
  bool list_adapters = false;  // print the adapters and exit
  bool show_plan = false;      // print each plan's dispatches
  bool plan_only = false;      // print the plans, measure nothing (no device)
  // Requests pushed through GpuEngine end to end (0: skip): small CELUs of
  // --engine_elements, --engine_in_flight at a time.
  int engine_requests = 2000;
  uint64_t engine_elements = 1024;
  int engine_in_flight = 64;
  // Threads submitting engine requests, and the max_batch_requests values to
  // measure (each in its own engine).
  int engine_threads = 4;
  std::vector<uint32_t> engine_max_batch = {256};
  // The tensors' data type: float32 or float16 (--data_type).
  DataType data_type = DataType::kFloat32;
  // Planner options (--cache_mib, --mvn_block_kib).
  gpu::PlannerOptions planner;
};

bool ParseSize(std::string_view s, uint64_t* out) {
  uint64_t mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) mult = 1ull << 10;
  if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) mult = 1ull << 20;
  if (!s.empty() && (s.back() == 'G' || s.back() == 'g')) mult = 1ull << 30;
  if (mult != 1) s.remove_suffix(1);
  uint64_t v = 0;
  if (!absl::SimpleAtoi(std::string(s), &v) || v == 0) return false;
  *out = v * mult;
  return true;
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string key = a, value;
    if (size_t eq = a.find('='); eq != std::string::npos) {
      key = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else if (i + 1 < argc && a != "--overlap" && a != "--no_dispatch_cost" &&
               a != "--list_adapters" && a != "--show_plan" && a != "--plan_only" &&
               a != "--mvn_no_row" && a != "--mvn_wide_row" && a != "--mvn_blocked" &&
               a != "--help") {
      value = argv[++i];
    }
    if (key == "--ops") {
      f->ops = absl::StrSplit(value, ',', absl::SkipEmpty());
    } else if (key == "--sizes") {
      f->sizes.clear();
      for (absl::string_view s : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        uint64_t n;
        if (!ParseSize(std::string(s), &n)) {
          std::fprintf(stderr, "bad size '%s'\n", std::string(s).c_str());
          return false;
        }
        f->sizes.push_back(n);
      }
    } else if (key == "--iters") {
      if (!absl::SimpleAtoi(value, &f->iters) || f->iters < 1) return false;
    } else if (bool ok = true; bench::ParseDeviceFlag(key, value, &f->device, &ok)) {
      if (!ok) return false;
    } else if (key == "--data_type") {
      if (value == "float32") {
        f->data_type = DataType::kFloat32;
      } else if (value == "float16") {
        f->data_type = DataType::kFloat16;
      } else {
        std::fprintf(stderr, "--data_type: float32 or float16\n");
        return false;
      }
    } else if (key == "--mvn_rows") {
      if (!absl::SimpleAtoi(value, &f->mvn_rows) || f->mvn_rows == 0) return false;
    } else if (key == "--overlap") {
      f->overlap = true;
    } else if (key == "--no_dispatch_cost") {
      f->dispatch_cost = false;
    } else if (key == "--engine_requests") {
      if (!absl::SimpleAtoi(value, &f->engine_requests) || f->engine_requests < 0) return false;
    } else if (key == "--engine_elements") {
      if (!ParseSize(value, &f->engine_elements)) return false;
    } else if (key == "--engine_in_flight") {
      if (!absl::SimpleAtoi(value, &f->engine_in_flight) || f->engine_in_flight < 1) return false;
    } else if (key == "--engine_threads") {
      if (!absl::SimpleAtoi(value, &f->engine_threads) || f->engine_threads < 1) return false;
    } else if (key == "--engine_max_batch") {
      f->engine_max_batch.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        uint32_t v = 0;
        if (!absl::SimpleAtoi(part, &v) || v < 1) return false;
        f->engine_max_batch.push_back(v);
      }
    } else if (key == "--cache_mib") {
      uint64_t v = 0;
      if (!absl::SimpleAtoi(value, &v) || v == 0) return false;
      f->planner.cache_bytes = v << 20;
    } else if (key == "--mvn_block_kib") {
      uint64_t v = 0;
      if (!absl::SimpleAtoi(value, &v) || v == 0) return false;
      f->planner.mvn_block_bytes = v << 10;
    } else if (key == "--show_plan") {
      f->show_plan = true;
    } else if (key == "--mvn_no_row") {
      f->planner.mvn_row = false;
    } else if (key == "--mvn_wide_row") {
      f->planner.mvn_wide_row = true;
    } else if (key == "--mvn_blocked") {
      f->planner.mvn_blocked = true;
    } else if (key == "--mvn_coop_max_chunks") {
      uint32_t v = 0;
      if (!absl::SimpleAtoi(value, &v) || v == 0) return false;
      f->planner.mvn_coop_max_chunks = v;
    } else if (key == "--mvn_coop_spin_limit") {
      if (!absl::SimpleAtoi(value, &f->planner.mvn_coop_spin_limit)) return false;
    } else if (key == "--mvn_vec4") {
      if (value != "0" && value != "1") return false;
      f->planner.mvn_vec4 = value == "1";
    } else if (key == "--mvn_vec4_scale_bias") {
      if (value != "0" && value != "1") return false;
      f->planner.mvn_vec4_scale_bias = value == "1";
    } else if (key == "--plan_only") {
      f->show_plan = f->plan_only = true;
    } else if (key == "--list_adapters") {
      f->list_adapters = true;
    } else {
      std::fprintf(stderr,
                   "usage: dmls_bench [--ops=celu,threshold,clip,relu,sigmoid,"
                   "tanh,elu,gelu,identity,mvn1] [--sizes=1M,16M,128M] "
                   "[--iters=20] [--device=auto|gpu|software] [--adapter=N] "
                   "[--mvn_rows=512] [--overlap] [--no_dispatch_cost] "
                   "[--list_adapters] [--show_plan] [--plan_only] [--engine_requests=2000] "
                   "[--engine_elements=1K] [--engine_in_flight=64] [--engine_threads=4] "
                   "[--engine_max_batch=256[,1]] [--data_type=float32|float16] "
                   "[--cache_mib=N] [--mvn_block_kib=N] [--mvn_no_row] [--mvn_wide_row] "
                   "[--mvn_blocked] [--mvn_coop_max_chunks=N] "
                   "[--mvn_coop_spin_limit=N] [--mvn_vec4=0|1] [--mvn_vec4_scale_bias=0|1]\n");
      return false;
    }
  }
  return true;
}

// The operator descriptors measured, packed, of `type`.
absl::StatusOr<OperatorDesc> MakeOp(const std::string& name, uint64_t n,
                                    uint64_t mvn_rows, DataType type) {
  OperatorDesc op;
  std::vector<uint64_t> sizes = {1, 1, 1, n};
  auto act = [&](OperatorType t, std::optional<float> p0 = {},
                 std::optional<float> p1 = {}) {
    op.type = static_cast<uint32_t>(t);
    op.activation = {p0, p1};
  };
  if (name == "celu") {
    act(OperatorType::kActivationCelu, 1.0f);
  } else if (name == "elu") {
    act(OperatorType::kActivationElu, 1.0f);
  } else if (name == "relu") {
    act(OperatorType::kActivationRelu);
  } else if (name == "sigmoid") {
    act(OperatorType::kActivationSigmoid);
  } else if (name == "tanh") {
    act(OperatorType::kActivationTanh);
  } else if (name == "gelu") {
    act(OperatorType::kActivationGelu);
  } else if (name == "identity") {
    act(OperatorType::kActivationIdentity);
  } else if (name == "linear") {
    act(OperatorType::kActivationLinear, 0.75f, 0.25f);
  } else if (name == "hard_sigmoid") {
    act(OperatorType::kActivationHardSigmoid, 0.2f, 0.5f);
  } else if (name == "threshold") {
    op.type = static_cast<uint32_t>(OperatorType::kElementWiseThreshold);
    op.min = 0.0f;
  } else if (name == "clip") {
    op.type = static_cast<uint32_t>(OperatorType::kElementWiseClip);
    op.min = -1.0f;
    op.max = 1.0f;
  } else if (name == "mvn1" || name == "mvn1_nv0" || name == "mvn1_affine") {
    if (n % mvn_rows != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("size ", n, " is not a multiple of --mvn_rows"));
    }
    op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
    sizes = {1, 1, mvn_rows, n / mvn_rows};
    op.axis_count = 1;
    op.axes = {3};
    op.normalize_variance = name == "mvn1_nv0" ? 0 : 1;
    op.epsilon = 1e-5f;
    if (name == "mvn1_affine") {
      op.scale = MakeTensorDesc(type, {1, 1, 1, n / mvn_rows});
      op.bias = op.scale;
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown op '", name, "'"));
  }
  op.input = MakeTensorDesc(type, sizes);
  op.output = op.input;
  if (absl::Status s = ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false);
      !s.ok()) {
    return s;
  }
  return op;
}

// binary32 -> binary16 for values in [-4, 4] (normal range; truncates).
uint16_t HalfOf(float v) {
  uint32_t x;
  std::memcpy(&x, &v, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t a = x & 0x7fffffffu;
  if (a < 0x38800000u) return sign;  // below 2^-14: zero is close enough here
  return sign | static_cast<uint16_t>((a - 0x38000000u) >> 13);
}

// The D3D12 objects one measurement needs.
class Bench {
 public:
  absl::Status Init(const DeviceOptions& options) {
    absl::StatusOr<std::unique_ptr<Device>> d = Device::Create(options);
    if (!d.ok()) return d.status();
    device_ = std::move(*d);
    ID3D12Device* dev = device_->d3d();
    D3D12_COMMAND_QUEUE_DESC qd = {};
    qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    DMLS_RETURN_IF_FAILED(
        dev->CreateCommandQueue(&qd, DMLS_IID_PPV(ID3D12CommandQueue, queue_.Put())),
        "CreateCommandQueue");
    absl::StatusOr<std::unique_ptr<Fence>> fence = Fence::Create(dev);
    if (!fence.ok()) return fence.status();
    fence_ = std::move(*fence);
    DMLS_RETURN_IF_FAILED(
        dev->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_DIRECT,
                                    DMLS_IID_PPV(ID3D12CommandAllocator, allocator_.Put())),
        "CreateCommandAllocator");
    DMLS_RETURN_IF_FAILED(
        dev->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT, allocator_.get(),
                               nullptr,
                               DMLS_IID_PPV(ID3D12GraphicsCommandList, list_.Put())),
        "CreateCommandList");
    DMLS_RETURN_IF_FAILED(list_->Close(), "Close");
    D3D12_QUERY_HEAP_DESC qh = {};
    qh.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
    qh.Count = 2;
    DMLS_RETURN_IF_FAILED(
        dev->CreateQueryHeap(&qh, DMLS_IID_PPV(ID3D12QueryHeap, queries_.Put())),
        "CreateQueryHeap");
    DMLS_RETURN_IF_FAILED(queue_->GetTimestampFrequency(&ticks_per_second_),
                          "GetTimestampFrequency");
    pool_ = std::make_unique<BufferPool>(dev, BufferPoolOptions{});
    absl::StatusOr<PoolBuffer*> ts = pool_->Acquire(HeapKind::kReadback, 16);
    if (!ts.ok()) return ts.status();
    timestamps_ = *ts;
    absl::StatusOr<std::unique_ptr<PipelineCache>> p =
        PipelineCache::Create(dev, DxbcKernelSource());
    if (!p.ok()) return p.status();
    pipelines_ = std::move(*p);
    DispatchBinderOptions bo;
    bo.descriptor_capacity = 1 << 16;
    bo.constant_blocks = 1 << 13;
    absl::StatusOr<std::unique_ptr<DispatchBinder>> b =
        DispatchBinder::Create(dev, pipelines_.get(), bo);
    if (!b.ok()) return b.status();
    binder_ = std::move(*b);
    return absl::OkStatus();
  }

  struct Timing {
    double gpu_seconds = 0;   // between the two timestamps
    double wall_seconds = 0;  // ExecuteCommandLists + fence wait
  };

  // Records `body` between two timestamps; runs it once to warm up and once
  // timed.
  absl::StatusOr<Timing> Measure(
      const std::function<void(ID3D12GraphicsCommandList*)>& prologue,
      const std::function<void(ID3D12GraphicsCommandList*)>& body) {
    DMLS_RETURN_IF_FAILED(allocator_->Reset(), "allocator Reset");
    DMLS_RETURN_IF_FAILED(list_->Reset(allocator_.get(), nullptr), "list Reset");
    if (prologue) prologue(list_.get());
    list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0);
    body(list_.get());
    list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 1);
    list_->ResolveQueryData(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0, 2,
                            timestamps_->resource.get(), 0);
    DMLS_RETURN_IF_FAILED(list_->Close(), "list Close");
    Timing t;
    for (int run = 0; run < 2; ++run) {
      const auto start = std::chrono::steady_clock::now();
      absl::Status s = ExecuteAndWait();
      if (!s.ok()) return s;
      t.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    uint64_t ts[2];
    std::memcpy(ts, timestamps_->mapped, sizeof(ts));
    t.gpu_seconds = ts[1] > ts[0]
                        ? static_cast<double>(ts[1] - ts[0]) / ticks_per_second_
                        : 0.0;
    return t;
  }

  absl::Status ExecuteAndWait() {
    ID3D12CommandList* lists[] = {list_.get()};
    queue_->ExecuteCommandLists(1, lists);
    absl::StatusOr<uint64_t> v = fence_->Signal(queue_.get());
    if (!v.ok()) return v.status();
    return fence_->Wait(*v);
  }

  // Records and runs `body` once, untimed.
  absl::Status RunOnce(const std::function<void(ID3D12GraphicsCommandList*)>& body) {
    DMLS_RETURN_IF_FAILED(allocator_->Reset(), "allocator Reset");
    DMLS_RETURN_IF_FAILED(list_->Reset(allocator_.get(), nullptr), "list Reset");
    body(list_.get());
    DMLS_RETURN_IF_FAILED(list_->Close(), "list Close");
    return ExecuteAndWait();
  }

  const Device& device() const { return *device_; }
  BufferPool& pool() { return *pool_; }
  DispatchBinder& binder() { return *binder_; }
  Fence& fence() { return *fence_; }

 private:
  std::unique_ptr<Device> device_;
  ComPtr<ID3D12CommandQueue> queue_;
  std::unique_ptr<Fence> fence_;
  ComPtr<ID3D12CommandAllocator> allocator_;
  ComPtr<ID3D12GraphicsCommandList> list_;
  ComPtr<ID3D12QueryHeap> queries_;
  UINT64 ticks_per_second_ = 1;
  std::unique_ptr<BufferPool> pool_;
  PoolBuffer* timestamps_ = nullptr;
  std::unique_ptr<PipelineCache> pipelines_;
  std::unique_ptr<DispatchBinder> binder_;
};

D3D12_RESOURCE_BARRIER Transition(ID3D12Resource* r, D3D12_RESOURCE_STATES from,
                                  D3D12_RESOURCE_STATES to) {
  D3D12_RESOURCE_BARRIER b = {};
  b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
  b.Transition.pResource = r;
  b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
  b.Transition.StateBefore = from;
  b.Transition.StateAfter = to;
  return b;
}

// The next of a 24-bit linear congruential sequence, in [0, 1).
float NextUniform(uint32_t& seed) {
  seed = seed * 1664525u + 1013904223u;
  return static_cast<float>(seed >> 8) / 16777216.0f;
}

// Element i of a FLOAT32 or FLOAT16 (`type`) buffer at `mapped` = v.
void PutElement(uint8_t* mapped, uint64_t i, float v, DataType type) {
  if (type == DataType::kFloat16) {
    reinterpret_cast<uint16_t*>(mapped)[i] = HalfOf(v);
  } else {
    reinterpret_cast<float*>(mapped)[i] = v;
  }
}

// Copies bytes [0, bytes) of `upload` into `a` and [bytes, 2 * bytes) into
// `b` (both in the COMMON state, as they return to it afterwards).
absl::Status UploadPair(Bench& bench, PoolBuffer* upload, PoolBuffer* a, PoolBuffer* b,
                        uint64_t bytes) {
  return bench.RunOnce([&](ID3D12GraphicsCommandList* l) {
    D3D12_RESOURCE_BARRIER t[] = {
        Transition(a->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_DEST),
        Transition(b->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_DEST)};
    l->ResourceBarrier(2, t);
    l->CopyBufferRegion(a->resource.get(), 0, upload->resource.get(), 0, bytes);
    l->CopyBufferRegion(b->resource.get(), 0, upload->resource.get(), bytes, bytes);
  });
}

D3D12_RESOURCE_BARRIER UavBarrier(ID3D12Resource* r) {
  D3D12_RESOURCE_BARRIER b = {};
  b.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
  b.UAV.pResource = r;
  return b;
}

struct Row {
  std::string op;
  uint64_t elements = 0;
  size_t dispatches = 0;
  double kernel_gbs = 0, copy_gbs = 0, kernel_us = 0, wall_gbs = 0;
  std::string error;
};

void ShowView(const char* what, const gpu::View& v) {
  if (v.buffer == gpu::BufferSlot::kNone) return;
  std::printf("      %s slot %d fmt %u first %llu n %u\n", what, static_cast<int>(v.buffer),
              static_cast<unsigned>(v.format), static_cast<unsigned long long>(v.first_element),
              v.num_elements);
}

// The plan's dispatches (the first 4 and the last 2 of a long plan) and,
// for MVN1, the schedule the planner chose.
void ShowPlan(const std::string& name, const OperatorDesc& op, const gpu::DispatchPlan& plan,
              const Flags& f) {
  const uint64_t n = ElementCount(op.input->sizes);
  std::printf("  plan %s %llu: %zu dispatches, %llu scratch bytes\n",
              name.c_str(), static_cast<unsigned long long>(n),
              plan.dispatches.size(), static_cast<unsigned long long>(plan.scratch_bytes));
  if (op.type == static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1)) {
    const uint64_t cols = op.input->sizes.back(), rows = n / cols;
    const gpu::MvnSchedule& s = plan.mvn_schedule;
    const uint64_t cache = f.planner.cache_bytes ? f.planner.cache_bytes : gpu::kAssumedCacheBytes;
    const uint32_t threads = s.row_bits == gpu::kMvnVariantSmallRow  ? gpu::kMvnSmallRowThreads
                             : s.row_bits == gpu::kMvnVariantWideRow ? gpu::kMvnWideRowThreads
                                                                     : gpu::kMvnThreads;
    std::string how = absl::StrCat("row: one workgroup of ", threads,
                                   " threads per row, read once, no scratch");
    if (s.kind == gpu::MvnSchedule::kCoop) {
      how = absl::StrCat("cooperative: one dispatch (after a counter clear) of a statistics "
                         "and a normalisation task per ", gpu::kMvnChunk,
                         "-element chunk, normalisation ", s.block_groups,
                         " rows after statistics, spin limit ", f.planner.mvn_coop_spin_limit);
    } else if (s.kind != gpu::MvnSchedule::kRow) {
      how = absl::StrCat(s.kind == gpu::MvnSchedule::kBlocked ? "blocked" : "two-pass", ": ",
                         s.block_groups, " rows per (statistics, normalise) dispatch pair");
    }
    const uint8_t last = plan.dispatches.empty() ? 0 : plan.dispatches.back().key.variant;
    const bool vec4 = (last & gpu::kMvnVariantVec4) != 0;
    const bool sb = op.scale.has_value() || op.bias.has_value();
    const char* sb_how = !sb ? ""
                         : (last & gpu::kMvnVariantVec4ScaleBias) != 0
                             ? ", Scale/Bias texels too"
                             : ", Scale/Bias one load per element";
    std::printf("  mvn schedule: %s; %llu x %llu, cache %llu MiB%s; %s%s\n", how.c_str(),
                static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
                static_cast<unsigned long long>(cache >> 20),
                f.planner.cache_bytes ? "" : " (assumed)",
                vec4 ? "16-byte texel loads/stores (vec4)" : "one load per element", sb_how);
  }
  const size_t count = plan.dispatches.size();
  for (size_t i = 0; i < count; ++i) {
    if (count > 8 && i == 4) {
      std::printf("    ... %zu more ...\n", count - 6);
      i = count - 2;
    }
    const gpu::Dispatch& d = plan.dispatches[i];
    std::printf("    %s groups %u x %u x %u%s\n", d.key.DebugString().c_str(), d.groups[0],
                d.groups[1], d.groups[2], d.barrier_before ? " (barrier)" : "");
    for (const gpu::View& v : d.srv) ShowView("srv", v);
    for (const gpu::View& v : d.uav) ShowView("uav", v);
  }
}

// One operator at one size: kernel and copy anchor on the same buffers.
Row MeasureOp(Bench& bench, const std::string& name, uint64_t n, const Flags& f) {
  Row row;
  row.op = name;
  row.elements = n;
  auto fail = [&](const absl::Status& s) {
    row.error = std::string(s.message());
    return row;
  };
  absl::StatusOr<OperatorDesc> op = MakeOp(name, n, f.mvn_rows, f.data_type);
  if (!op.ok()) return fail(op.status());
  absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(*op, false, f.planner);
  if (!plan.ok()) return fail(plan.status());
  row.dispatches = plan->dispatches.size();
  if (f.show_plan) ShowPlan(name, *op, *plan, f);

  const uint64_t bytes = op->input->total_tensor_size_in_bytes;
  BufferPool& pool = bench.pool();
  std::vector<PoolBuffer*> held;
  auto take = [&](HeapKind kind, uint64_t b) -> PoolBuffer* {
    absl::StatusOr<PoolBuffer*> p = pool.Acquire(kind, b);
    if (!p.ok()) return nullptr;
    held.push_back(*p);
    return *p;
  };
  auto give_back = [&] {
    for (PoolBuffer* b : held) pool.Release(b, bench.fence().last_signaled());
    pool.Reclaim(bench.fence().completed());
  };
  PoolBuffer* input = take(HeapKind::kDefault, bytes);
  PoolBuffer* output = take(HeapKind::kDefault, bytes);
  PoolBuffer* scratch =
      plan->scratch_bytes ? take(HeapKind::kDefault, plan->scratch_bytes) : nullptr;
  PoolBuffer* upload = take(HeapKind::kUpload, 2 * bytes);
  if (!input || !output || !upload || (plan->scratch_bytes && !scratch)) {
    give_back();
    return fail(absl::ResourceExhaustedError("cannot allocate buffers"));
  }
  // Inputs in [-4, 4); the output starts as 0xFF bytes, which no kernel
  // produces from finite inputs, so unwritten elements show.
  uint32_t seed = 1;
  for (uint64_t i = 0; i < n; ++i) {
    PutElement(upload->mapped, i, NextUniform(seed) * 8.0f - 4.0f, f.data_type);
  }
  std::memset(upload->mapped + bytes, 0xFF, bytes);
  absl::Status s = UploadPair(bench, upload, input, output, bytes);
  if (!s.ok()) {
    give_back();
    return fail(s);
  }

  // Scale in [0.5, 1.5) and Bias in [-1, 1) (mvn1_affine).
  std::vector<PoolBuffer*> read_only = {input};
  PoolBuffer* scale = nullptr;
  PoolBuffer* bias = nullptr;
  if (op->scale) {
    const uint64_t sb = op->scale->total_tensor_size_in_bytes;
    const uint64_t count = sb / (f.data_type == DataType::kFloat16 ? 2 : 4);
    scale = take(HeapKind::kDefault, sb);
    bias = take(HeapKind::kDefault, sb);
    PoolBuffer* sb_upload = take(HeapKind::kUpload, 2 * sb);
    if (!scale || !bias || !sb_upload) {
      give_back();
      return fail(absl::ResourceExhaustedError("cannot allocate Scale and Bias"));
    }
    for (uint64_t i = 0; i < 2 * count; ++i) {
      const float u = NextUniform(seed);
      PutElement(sb_upload->mapped, i, i < count ? 0.5f + u : 2.0f * u - 1.0f, f.data_type);
    }
    s = UploadPair(bench, sb_upload, scale, bias, sb);
    if (!s.ok()) {
      give_back();
      return fail(s);
    }
    read_only.push_back(scale);
    read_only.push_back(bias);
  }

  SlotBuffers slots;
  slots.Set(gpu::BufferSlot::kInput, input->resource.get(), input->size);
  if (scale) slots.Set(gpu::BufferSlot::kScale, scale->resource.get(), scale->size);
  if (bias) slots.Set(gpu::BufferSlot::kBias, bias->resource.get(), bias->size);
  slots.Set(gpu::BufferSlot::kOutput, output->resource.get(), output->size);
  if (scratch) slots.Set(gpu::BufferSlot::kScratch, scratch->resource.get(), scratch->size);
  bench.binder().Reclaim(bench.fence().completed());
  absl::StatusOr<std::vector<BoundDispatch>> bound = bench.binder().Bind(*plan, slots);
  if (!bound.ok()) {
    give_back();
    return fail(bound.status());
  }
  std::vector<ID3D12Resource*> written = {output->resource.get()};
  if (scratch) written.push_back(scratch->resource.get());

  auto kernel_prologue = [&](ID3D12GraphicsCommandList* l) {
    std::vector<D3D12_RESOURCE_BARRIER> b;
    for (PoolBuffer* r : read_only) {
      b.push_back(Transition(r->resource.get(), D3D12_RESOURCE_STATE_COMMON,
                             D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE));
    }
    for (ID3D12Resource* r : written) {
      b.push_back(Transition(r, D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_UNORDERED_ACCESS));
    }
    l->ResourceBarrier(static_cast<UINT>(b.size()), b.data());
    bench.binder().SetState(l);
  };
  absl::StatusOr<Bench::Timing> kt = bench.Measure(kernel_prologue, [&](ID3D12GraphicsCommandList* l) {
    ID3D12PipelineState* pso = nullptr;
    std::vector<D3D12_RESOURCE_BARRIER> uav;
    for (ID3D12Resource* r : written) uav.push_back(UavBarrier(r));
    for (int i = 0; i < f.iters; ++i) {
      if (i > 0 && !f.overlap) l->ResourceBarrier(static_cast<UINT>(uav.size()), uav.data());
      DispatchBinder::Record(l, *bound, &pso);
    }
  });
  bench.binder().Retire(bench.fence().last_signaled());
  if (!kt.ok()) {
    give_back();
    return fail(kt.status());
  }

  // Every output element written?
  PoolBuffer* readback = take(HeapKind::kReadback, bytes);
  if (readback == nullptr) {
    give_back();
    return fail(absl::ResourceExhaustedError("cannot allocate readback"));
  }
  s = bench.RunOnce([&](ID3D12GraphicsCommandList* l) {
    D3D12_RESOURCE_BARRIER b = Transition(output->resource.get(), D3D12_RESOURCE_STATE_COMMON,
                                          D3D12_RESOURCE_STATE_COPY_SOURCE);
    l->ResourceBarrier(1, &b);
    l->CopyBufferRegion(readback->resource.get(), 0, output->resource.get(), 0, bytes);
  });
  if (!s.ok()) {
    give_back();
    return fail(s);
  }
  uint64_t unwritten = 0;
  if (f.data_type == DataType::kFloat16) {
    const uint16_t* out = reinterpret_cast<const uint16_t*>(readback->mapped);
    unwritten = std::count(out, out + n, uint16_t{0xFFFF});
  } else {
    const uint32_t* out = reinterpret_cast<const uint32_t*>(readback->mapped);
    unwritten = std::count(out, out + n, 0xFFFFFFFFu);
  }
  if (unwritten != 0) {
    give_back();
    return fail(absl::InternalError(absl::StrCat(unwritten, " output elements not written")));
  }

  absl::StatusOr<Bench::Timing> ct = bench.Measure(
      [&](ID3D12GraphicsCommandList* l) {
        D3D12_RESOURCE_BARRIER b[] = {
            Transition(input->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_SOURCE),
            Transition(output->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_DEST)};
        l->ResourceBarrier(2, b);
      },
      [&](ID3D12GraphicsCommandList* l) {
        for (int i = 0; i < f.iters; ++i) {
          l->CopyBufferRegion(output->resource.get(), 0, input->resource.get(), 0, bytes);
        }
      });
  give_back();
  if (!ct.ok()) return fail(ct.status());

  const double moved = 2.0 * static_cast<double>(bytes) * f.iters;
  if (kt->gpu_seconds > 0) {
    row.kernel_gbs = moved / kt->gpu_seconds / 1e9;
    row.kernel_us = kt->gpu_seconds / f.iters * 1e6;
  }
  if (ct->gpu_seconds > 0) row.copy_gbs = moved / ct->gpu_seconds / 1e9;
  if (kt->wall_seconds > 0) row.wall_gbs = moved / kt->wall_seconds / 1e9;
  return row;
}

// Per-dispatch cost inside one list (a tiny CELU repeated) and the cost of
// one submit + fence wait of an empty list.
void MeasureOverheads(Bench& bench) {
  Flags tiny;
  tiny.iters = 1000;
  tiny.overlap = true;
  Row r = MeasureOp(bench, "celu", 4096, tiny);
  if (!r.error.empty()) {
    std::printf("dispatch cost: error: %s\n", r.error.c_str());
  } else {
    std::printf("dispatch cost: %.2f us per dispatch (CELU 4096 elements, %d in "
                "one command list, no barriers)\n", r.kernel_us, tiny.iters);
  }
  tiny.overlap = false;
  r = MeasureOp(bench, "celu", 4096, tiny);
  if (r.error.empty()) {
    std::printf("dispatch cost: %.2f us per dispatch with a UAV barrier between\n",
                r.kernel_us);
  }
  const int runs = 50;
  double total = 0;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = bench.RunOnce([](ID3D12GraphicsCommandList*) {});
    if (!s.ok()) {
      std::printf("submit cost: error: %s\n", std::string(s.message()).c_str());
      return;
    }
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::printf("submit cost: %.1f us per empty command list (submit + fence wait, "
              "mean of %d)\n", total / runs * 1e6, runs);
}

// Small requests through the whole GpuEngine, `in_flight` at a time.
// Small CELU requests pushed through GpuEngine end to end (admission,
// scheduler, runner, copies) by --engine_threads submitting threads, once
// per --engine_max_batch value (1 = batching and coalescing off), each in a
// fresh engine so that the runs are independent.
void MeasureEngine(const Flags& f) {
  for (uint32_t max_batch : f.engine_max_batch) {
    GpuEngineOptions o;
    o.device = f.device;
    o.logger = nullptr;
    o.scheduler.policy.max_batch_requests = max_batch;
    absl::StatusOr<std::unique_ptr<GpuEngine>> engine = CreateGpuEngine(std::move(o));
    if (!engine.ok()) {
      std::printf("engine: error: %s\n", std::string(engine.status().message()).c_str());
      return;
    }
    absl::StatusOr<OperatorDesc> op = MakeOp("celu", f.engine_elements, 1, f.data_type);
    if (!op.ok()) {
      std::printf("engine: error: %s\n", std::string(op.status().message()).c_str());
      return;
    }
    const std::string payload(op->input->total_tensor_size_in_bytes, '\0');
    const int threads = std::max(1, f.engine_threads);
    const int window = std::max(1, f.engine_in_flight / threads);
    std::atomic<int> failed{0};
    auto submit_all = [&](int count) {
      std::vector<std::thread> submitters;
      for (int t = 0; t < threads; ++t) {
        const int mine = count / threads + (t < count % threads ? 1 : 0);
        submitters.emplace_back([&, mine] {
          std::mutex mu;
          std::condition_variable cv;
          int outstanding = 0;
          for (int i = 0; i < mine; ++i) {
            {
              std::unique_lock<std::mutex> lock(mu);
              cv.wait(lock, [&] { return outstanding < window; });
              ++outstanding;
            }
            ExecuteRequest r;
            r.op = *op;
            r.input = payload;
            (*engine)->Execute(std::move(r), [&](absl::StatusOr<ExecuteResult> res) {
              if (!res.ok()) failed.fetch_add(1);
              std::lock_guard<std::mutex> lock(mu);
              // Wake the submitter only when it can be waiting: at the
              // window's edge or at the end (a futex per request would
              // measure the harness, not the engine).
              if (--outstanding == window - 1 || outstanding == 0) cv.notify_all();
            });
          }
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return outstanding == 0; });
        });
      }
      for (std::thread& t : submitters) t.join();
    };
    submit_all(std::min(2000, f.engine_requests));  // warm-up: pipelines, arenas
    const GpuEngineStats before = (*engine)->stats();
    const auto start = std::chrono::steady_clock::now();
    submit_all(f.engine_requests);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const GpuEngineStats after = (*engine)->stats();
    const uint64_t batches = after.batches - before.batches;
    const uint64_t requests = after.requests - before.requests;
    std::printf("engine: max_batch=%u: %d CELU requests of %llu elements, %d in flight "
                "from %d threads: %.0f requests/s, %.2f us per request, %.1f requests "
                "per command list, %.1f requests per dispatch, %llu resources and %llu "
                "views created while measuring, %d failed (fence: %llu kicks, %llu lost "
                "events)\n",
                max_batch, f.engine_requests,
                static_cast<unsigned long long>(f.engine_elements), window * threads,
                threads, f.engine_requests / seconds, seconds / f.engine_requests * 1e6,
                batches ? static_cast<double>(requests) / batches : 0.0,
                after.dispatches > before.dispatches
                    ? static_cast<double>(requests) / (after.dispatches - before.dispatches)
                    : 0.0,
                static_cast<unsigned long long>(after.pool.resources_created -
                                                before.pool.resources_created),
                static_cast<unsigned long long>(after.views_created - before.views_created),
                failed.load(), static_cast<unsigned long long>(after.fence_kicks),
                static_cast<unsigned long long>(after.fence_lost_events));
    (*engine)->Shutdown();
  }
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  if (flags.list_adapters) {
    absl::StatusOr<std::vector<AdapterInfo>> adapters = Device::ListAdapters();
    if (!adapters.ok()) {
      std::fprintf(stderr, "dmls_bench: %s\n", std::string(adapters.status().message()).c_str());
      return 1;
    }
    for (const AdapterInfo& a : *adapters) {
      std::printf("#%d %s (%s%s), %llu MiB\n", a.index, a.name.c_str(), a.kind.c_str(),
                  a.discrete ? ", discrete" : "",
                  static_cast<unsigned long long>(a.memory_bytes >> 20));
    }
    return 0;
  }
  if (flags.plan_only) {
    for (const std::string& op : flags.ops) {
      for (uint64_t n : flags.sizes) {
        absl::StatusOr<OperatorDesc> desc = MakeOp(op, n, flags.mvn_rows, flags.data_type);
        absl::StatusOr<gpu::DispatchPlan> plan =
            desc.ok() ? gpu::PlanExecution(*desc, false, flags.planner)
                      : absl::StatusOr<gpu::DispatchPlan>(desc.status());
        if (!plan.ok()) {
          std::printf("  %s %llu: %s\n", op.c_str(), static_cast<unsigned long long>(n),
                      std::string(plan.status().message()).c_str());
          continue;
        }
        ShowPlan(op, *desc, *plan, flags);
      }
    }
    return 0;
  }
  Bench bench;
  if (absl::Status s = bench.Init(flags.device); !s.ok()) {
    std::fprintf(stderr, "dmls_bench: no %s device: %s\n",
                 std::string(DeviceKindName(flags.device.kind)).c_str(),
                 std::string(s.message()).c_str());
    return 1;
  }
  const AdapterInfo& a = bench.device().adapter();
  std::printf("adapter #%d: %s (%s), %llu MiB, %s\n", a.index, a.name.c_str(),
              a.kind.c_str(), static_cast<unsigned long long>(a.memory_bytes >> 20),
              bench.device().device_info().backend.c_str());
  std::printf("iters per measurement: %d, %s between executions; GB/s = "
              "(input read + output written) / GPU time\n",
              flags.iters, flags.overlap ? "no barrier" : "a UAV barrier");
  std::fflush(stdout);
  if (flags.dispatch_cost) MeasureOverheads(bench);
  if (flags.engine_requests > 0) MeasureEngine(flags);
  std::fflush(stdout);

  std::vector<Row> rows;
  for (const std::string& op : flags.ops) {
    for (uint64_t n : flags.sizes) {
      rows.push_back(MeasureOp(bench, op, n, flags));
      const Row& r = rows.back();
      if (r.error.empty()) {
        std::printf("  %-10s %12llu  kernel %9.1f GB/s  copy %9.1f GB/s\n",
                    r.op.c_str(), static_cast<unsigned long long>(r.elements),
                    r.kernel_gbs, r.copy_gbs);
      } else {
        std::printf("  %-10s %12llu  error: %s\n", r.op.c_str(),
                    static_cast<unsigned long long>(r.elements), r.error.c_str());
      }
      std::fflush(stdout);
    }
  }
  std::printf("\n%-10s %12s %10s %12s %12s %8s %12s %12s\n", "op", "elements",
              "dispatches", "kernel GB/s", "copy GB/s", "of copy", "us/exec",
              "wall GB/s");
  int errors = 0;
  for (const Row& r : rows) {
    if (!r.error.empty()) {
      ++errors;
      std::printf("%-10s %12llu  error: %s\n", r.op.c_str(),
                  static_cast<unsigned long long>(r.elements), r.error.c_str());
      continue;
    }
    std::printf("%-10s %12llu %10zu %12.1f %12.1f %7.0f%% %12.1f %12.1f\n",
                r.op.c_str(), static_cast<unsigned long long>(r.elements),
                r.dispatches, r.kernel_gbs, r.copy_gbs,
                r.copy_gbs > 0 ? 100.0 * r.kernel_gbs / r.copy_gbs : 0.0,
                r.kernel_us, r.wall_gbs);
  }
  return errors == 0 ? 0 : 3;
}

}  // namespace
}  // namespace dmls::d3d12

int main(int argc, char** argv) { return dmls::d3d12::Main(argc, argv); }
