// dmls_bench's plan printing (--show_plan, --plan_only): a plan's
// dispatches with their views and, for MVN1, the schedule the planner chose
// and why it reads as it does. The lines are parsed by the GPU-machine
// scripts (bench/run_mvn_gpu.sh, docs/perf/**: "plan ", "mvn schedule"):
// keep their format. Writes to stdout; stateless.
#ifndef DMLSERVE_BENCH_PLAN_REPORT_H_
#define DMLSERVE_BENCH_PLAN_REPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bench/bench_options.h"
#include "engine/core/operator_desc.h"
#include "engine/plan/planner.h"
#include "engine/plan/planner_options.h"

namespace dmls::bench {

// Prints `plan` of operator `name` (`op`): its dispatches (the first 4 and
// the last 2 of a long plan) and, for MVN1, the schedule, with the cache
// size `planner` planned it for.
void ShowPlan(const std::string& name, const OperatorDesc& op, const gpu::DispatchPlan& plan,
              const gpu::PlannerOptions& planner);

// Operator `op` (bench_ops.h) of `n` elements as `options` shape it
// (mvn_rows, data_type), and its plan under `options.planner`.
struct OpPlan {
  OperatorDesc desc;
  gpu::DispatchPlan plan;
};
absl::StatusOr<OpPlan> PlanOp(const std::string& op, uint64_t n, const BenchOptions& options);

// --plan_only: the plan of every operator at every size of `options`,
// without a device; an operator that does not plan prints its error.
void PrintPlans(const BenchOptions& options);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_PLAN_REPORT_H_
