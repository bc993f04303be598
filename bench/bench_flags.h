// dmls_bench's command line: absl flags (bench_flags.cc, one per
// BenchOptions field, same names, defaults and meanings as the hand parser
// it replaced) read into BenchOptions.
#ifndef DMLSERVE_BENCH_BENCH_FLAGS_H_
#define DMLSERVE_BENCH_BENCH_FLAGS_H_

#include "absl/status/statusor.h"
#include "bench/bench_options.h"

namespace dmls::bench {

// Parses argv with absl::ParseCommandLine and returns the options. absl ends
// the process itself for --help (and its other usage flags), an unknown flag
// or a value its flag's type cannot hold; the error returned is a value out
// of its flag's range or a stray positional argument (the caller prints its
// message and exits 2). Call once, from main.
absl::StatusOr<BenchOptions> ParseBenchCommandLine(int argc, char** argv);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_BENCH_FLAGS_H_
