// dmls_bench's results as text on stdout: one progress line per operator
// and size as it is measured, and the table of all of them at the end. The
// GPU-machine scripts grep both (bench/run_*.sh, docs/perf/**: "^ *OP ",
// "^OP"): keep their format.
#ifndef DMLSERVE_BENCH_RESULT_TABLE_H_
#define DMLSERVE_BENCH_RESULT_TABLE_H_

#include <vector>

#include "bench/kernel_timing.h"

namespace dmls::bench {

// "  OP  ELEMENTS  kernel X GB/s  copy Y GB/s", or the row's error.
void PrintProgressLine(const OpTiming& row);

// The header and a line per row (op, elements, dispatches, kernel GB/s,
// copy GB/s, of copy, us/exec, wall GB/s). Returns the rows with an error.
int PrintResultTable(const std::vector<OpTiming>& rows);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_RESULT_TABLE_H_
