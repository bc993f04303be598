#include "bench/plan_report.h"

#include <cstdint>
#include <cstdio>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_ops.h"
#include "engine/core/tensor_desc.h"
#include "engine/kernels/mvn_kernel.h"
#include "engine/plan/mvn_plan.h"

namespace dmls::bench {
namespace {

void ShowView(const char* what, const gpu::View& v) {
  if (v.buffer == gpu::BufferSlot::kNone) return;
  std::printf("      %s slot %d fmt %u first %llu n %u\n", what, static_cast<int>(v.buffer),
              static_cast<unsigned>(v.format), static_cast<unsigned long long>(v.first_element),
              v.num_elements);
}

}  // namespace

void ShowPlan(const std::string& name, const OperatorDesc& op, const gpu::DispatchPlan& plan,
              const gpu::PlannerOptions& planner) {
  const uint64_t n = ElementCount(op.input->sizes);
  std::printf("  plan %s %llu: %zu dispatches, %llu scratch bytes\n",
              name.c_str(), static_cast<unsigned long long>(n),
              plan.dispatches.size(), static_cast<unsigned long long>(plan.scratch_bytes));
  if (op.type == static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1)) {
    const uint64_t cols = op.input->sizes.back(), rows = n / cols;
    const gpu::MvnSchedule& s = plan.mvn_schedule;
    const uint64_t cache = planner.cache_bytes ? planner.cache_bytes : gpu::kAssumedCacheBytes;
    const uint32_t threads =
        plan.dispatches.empty() ? 0 : gpu::MvnKernelThreads(plan.dispatches.back().key);
    std::string how = absl::StrCat("row: one workgroup of ", threads,
                                   " threads per row, read once, no scratch");
    if (s.kind == gpu::MvnSchedule::kCoop) {
      how = absl::StrCat("cooperative: one dispatch (after a counter clear) of a statistics "
                         "and a normalisation task per ", gpu::kMvnChunk,
                         "-element chunk, normalisation ", s.block_groups,
                         " rows after statistics, spin limit ", planner.mvn_coop_spin_limit);
    } else if (s.kind != gpu::MvnSchedule::kRow) {
      how = absl::StrCat(s.kind == gpu::MvnSchedule::kBlocked ? "blocked" : "two-pass", ": ",
                         s.block_groups,
                         s.combine ? " rows per (statistics, combine, normalise) dispatch triple"
                                   : " rows per (statistics, normalise) dispatch pair");
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
                planner.cache_bytes ? "" : " (assumed)",
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

absl::StatusOr<OpPlan> PlanOp(const std::string& op, uint64_t n, const BenchOptions& options) {
  absl::StatusOr<OperatorDesc> desc = MakeOp(op, n, options.mvn_rows, options.data_type);
  if (!desc.ok()) return desc.status();
  absl::StatusOr<gpu::DispatchPlan> plan = gpu::PlanExecution(*desc, false, options.planner);
  if (!plan.ok()) return plan.status();
  return OpPlan{*std::move(desc), *std::move(plan)};
}

void PrintPlans(const BenchOptions& options) {
  for (const std::string& op : options.ops) {
    for (uint64_t n : options.sizes) {
      absl::StatusOr<OpPlan> p = PlanOp(op, n, options);
      if (!p.ok()) {
        std::printf("  %s %llu: %s\n", op.c_str(), static_cast<unsigned long long>(n),
                    std::string(p.status().message()).c_str());
        continue;
      }
      ShowPlan(op, p->desc, p->plan, options.planner);
    }
  }
}

}  // namespace dmls::bench
