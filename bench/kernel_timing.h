// dmls_bench's kernel timing: one operator at one size on a BenchDevice,
// its kernels and the D3D12 copy of the same bytes (the anchor) measured on
// the same buffers, each as `iters` executions in one command list between
// two timestamp queries; and the fixed costs of a dispatch and of a submit.
// Bytes counted per execution: input read + output written.
#ifndef DMLSERVE_BENCH_KERNEL_TIMING_H_
#define DMLSERVE_BENCH_KERNEL_TIMING_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/bench_device.h"
#include "bench/bench_options.h"

namespace dmls::bench {

// One operator at one size: a row of the result table.
struct OpTiming {
  std::string op;
  uint64_t elements = 0;
  size_t dispatches = 0;
  double kernel_gbs = 0, copy_gbs = 0, kernel_us = 0, wall_gbs = 0;
  std::string error;  // non-empty: nothing was measured, and why
};

// Measures operator `name` (bench_ops.h) at `n` elements with `options`
// (iters, overlap, mvn_rows, data_type, planner; prints the plan first
// when show_plan). Inputs are uniform in [-4, 4); the output starts as
// 0xFF bytes and every element must have been written.
OpTiming MeasureOp(BenchDevice& bench, const std::string& name, uint64_t n,
                   const BenchOptions& options);

// Per-dispatch cost inside one list (a tiny CELU repeated, with and without
// barriers) and the cost of one submit + fence wait of an empty list;
// printed as "dispatch cost: ..." and "submit cost: ..." lines.
void MeasureOverheads(BenchDevice& bench);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_KERNEL_TIMING_H_
