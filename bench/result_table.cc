#include "bench/result_table.h"

#include <cstdio>

namespace dmls::bench {

void PrintProgressLine(const OpTiming& r) {
  if (r.error.empty()) {
    std::printf("  %-10s %12llu  kernel %9.1f GB/s  copy %9.1f GB/s\n",
                r.op.c_str(), static_cast<unsigned long long>(r.elements),
                r.kernel_gbs, r.copy_gbs);
  } else {
    std::printf("  %-10s %12llu  error: %s\n", r.op.c_str(),
                static_cast<unsigned long long>(r.elements), r.error.c_str());
  }
}

int PrintResultTable(const std::vector<OpTiming>& rows) {
  std::printf("\n%-10s %12s %10s %12s %12s %8s %12s %12s\n", "op", "elements",
              "dispatches", "kernel GB/s", "copy GB/s", "of copy", "us/exec",
              "wall GB/s");
  int errors = 0;
  for (const OpTiming& r : rows) {
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
  return errors;
}

}  // namespace dmls::bench
