#include "bench/kernel_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "bench/bench_ops.h"
#include "bench/plan_report.h"
#include "bench/upload.h"
#include "engine/plan/planner.h"

namespace dmls::bench {

using d3d12::BoundDispatch;
using d3d12::BufferPool;
using d3d12::DispatchBinder;
using d3d12::HeapKind;
using d3d12::PoolBuffer;
using d3d12::SlotBuffers;

OpTiming MeasureOp(BenchDevice& bench, const std::string& name, uint64_t n,
                   const BenchOptions& f) {
  OpTiming row;
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
  if (f.show_plan) ShowPlan(name, *op, *plan, f.planner);

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
  FillUniform(upload->mapped, 0, n, -4.0f, 4.0f, f.data_type, seed);
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
    FillUniform(sb_upload->mapped, 0, count, 0.5f, 1.5f, f.data_type, seed);
    FillUniform(sb_upload->mapped, count, count, -1.0f, 1.0f, f.data_type, seed);
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
      b.push_back(d3d12::TransitionBarrier(r->resource.get(), D3D12_RESOURCE_STATE_COMMON,
                             D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE));
    }
    for (ID3D12Resource* r : written) {
      b.push_back(d3d12::TransitionBarrier(r, D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_UNORDERED_ACCESS));
    }
    l->ResourceBarrier(static_cast<UINT>(b.size()), b.data());
    bench.binder().SetState(l);
  };
  // --only_dispatch: the whole plan once before the timestamps, then that
  // dispatch alone.
  absl::Span<const BoundDispatch> timed = *bound;
  if (f.only_dispatch >= 0) {
    if (static_cast<size_t>(f.only_dispatch) >= bound->size()) {
      give_back();
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "--only_dispatch=", f.only_dispatch, ": the plan has ", bound->size(), " dispatches")));
    }
    timed = timed.subspan(f.only_dispatch, 1);
  }
  std::vector<D3D12_RESOURCE_BARRIER> uav;
  for (ID3D12Resource* r : written) uav.push_back(d3d12::UavBarrier(r));
  absl::StatusOr<BenchDevice::Timing> kt = bench.Measure(
      [&](ID3D12GraphicsCommandList* l) {
        kernel_prologue(l);
        if (f.only_dispatch < 0) return;
        ID3D12PipelineState* pso = nullptr;
        DispatchBinder::Record(l, *bound, &pso);
        l->ResourceBarrier(static_cast<UINT>(uav.size()), uav.data());
      },
      [&](ID3D12GraphicsCommandList* l) {
        ID3D12PipelineState* pso = nullptr;
        for (int i = 0; i < f.iters; ++i) {
          if (i > 0 && !f.overlap) l->ResourceBarrier(static_cast<UINT>(uav.size()), uav.data());
          DispatchBinder::Record(l, timed, &pso);
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
    D3D12_RESOURCE_BARRIER b = d3d12::TransitionBarrier(output->resource.get(), D3D12_RESOURCE_STATE_COMMON,
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

  absl::StatusOr<BenchDevice::Timing> ct = bench.Measure(
      [&](ID3D12GraphicsCommandList* l) {
        D3D12_RESOURCE_BARRIER b[] = {
            d3d12::TransitionBarrier(input->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_SOURCE),
            d3d12::TransitionBarrier(output->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_DEST)};
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

void MeasureOverheads(BenchDevice& bench) {
  BenchOptions tiny;
  tiny.iters = 1000;
  tiny.overlap = true;
  OpTiming r = MeasureOp(bench, "celu", 4096, tiny);
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

}  // namespace dmls::bench
