// DispatchPlan: what the Direct3D 12 runtime must do to execute one operator,
// expressed without any D3D12 type: which kernels (by KernelKey), over which
// views of which logical buffers, with which constant block and group counts,
// in which order. Built by the planner (engine/plan/planner.h) from a
// validated OperatorDesc; executed by engine/d3d12. Plain data;
// thread-compatible. Owned by engine/dxbc.
#ifndef DMLSERVE_ENGINE_PLAN_PLAN_H_
#define DMLSERVE_ENGINE_PLAN_PLAN_H_

#include <array>
#include <cstdint>
#include <vector>

#include "engine/kernels/kernel_abi.h"
#include "engine/kernels/kernel_key.h"

namespace dmls::gpu {

// The buffers a plan refers to. kInput/kScale/kBias hold the request's
// payload bytes; kOutput is the output buffer range (for in-place execution
// the runtime makes kOutput the same GPU range as kInput); kScratch is
// plan-private device memory of DispatchPlan::scratch_bytes.
enum class BufferSlot : uint8_t { kNone, kInput, kScale, kBias, kOutput, kScratch };

struct View {
  BufferSlot buffer = BufferSlot::kNone;  // kNone: bind a null descriptor
  ViewFormat format = ViewFormat::kUnknown;
  uint64_t first_element = 0;  // in texels of `format`
  uint32_t num_elements = 0;   // <= kMaxViewTexels
};

struct Dispatch {
  KernelKey key;
  // The constant block bound at b0 (root CBV), at most kViewBasesOffset
  // bytes (the binder appends view_base).
  std::vector<uint8_t> args;
  std::array<View, 3> srv;  // t0..t2
  std::array<View, 2> uav;  // u0..u1
  // Where each slot's tensor starts inside its view, in texels of the
  // view's format: t0, t1, t2, u0, u1 (kernel_abi.h ViewBases). The planner
  // leaves them 0; a runtime that binds views over whole arenas sets them.
  // The binder writes them at kViewBasesOffset of the constant block.
  std::array<uint32_t, 5> view_base = {};
  std::array<uint32_t, 3> groups = {1, 1, 1};  // each <= kMaxDispatchGroups
  // A UAV barrier is needed before this dispatch (it reads what an earlier
  // dispatch of the plan wrote).
  bool barrier_before = false;
};

// How an MVN/MVN1 plan reduces its groups (ChooseMvnSchedule, mvn_plan.h).
struct MvnSchedule {
  enum Kind { kRow, kBlocked, kTwoPass, kCoop };
  Kind kind = kRow;
  // Groups per dispatch pair (kBlocked, kTwoPass); kCoop: the lag, groups
  // between a group's statistics and its normalisation (MvnArgs::lag).
  uint64_t block_groups = 0;
  // kRow: the KernelKey::variant bits of its workgroup size (0: kMvnThreads,
  // kMvnVariantSmallRow, kMvnVariantMediumRow, kMvnVariantWideRow).
  uint8_t row_bits = 0;
  // kBlocked, kTwoPass: a kMvnCombine dispatch combines each group's
  // partials once (PlannerOptions::mvn_combine_min_chunks).
  bool combine = false;
};

struct DispatchPlan {
  std::vector<Dispatch> dispatches;
  uint64_t scratch_bytes = 0;
  // MVN/MVN1: the schedule PlanMvn chose (to show it; the dispatches are
  // what runs). Default for other operators.
  MvnSchedule mvn_schedule;
};

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_PLAN_H_
