// Text forms of the quantities dmls_load reads and prints: byte sizes
// ("64KiB", "4MiB", "1000") and byte rates. Pure functions: thread-safe.
#ifndef DMLSERVE_BENCH_LOAD_UNITS_H_
#define DMLSERVE_BENCH_LOAD_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dmls::load {

// A non-negative integer with an optional binary suffix: K/KiB, M/MiB,
// G/GiB (powers of 1024; "KB" is accepted as 1024 too, since tensor sizes
// are binary everywhere in this project). INVALID_ARGUMENT otherwise.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

// The shortest exact binary form: 1024 -> "1KiB", 1536 -> "1536B".
std::string FormatByteSize(uint64_t bytes);

// A rate for the human table: "12.3 MB/s" (decimal units, as network and
// memory bandwidth are usually quoted).
std::string FormatByteRate(double bytes_per_second);

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_UNITS_H_
