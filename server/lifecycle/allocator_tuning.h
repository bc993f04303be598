// TuneAllocator: glibc malloc thresholds for a server that gives its free
// memory back on its own schedule (DmlServer::WatchHealth calls
// malloc_trim every kMemoryTrimInterval).
//
// glibc's defaults trim an arena's top as soon as 128 KiB of it is free and
// raise that threshold only after a large mmapped block is freed. Small
// requests never free such a block, so each burst of them grew the heap
// (page faults in sysmalloc) and shrank it again (madvise, TLB flushes):
// on the 2-core CI machine 10-18% of a 1 KiB CELU request's server CPU
// (docs/perf/serving-cpu-2026-11-29/). TuneAllocator fixes the trim
// threshold at kTrimThresholdBytes and the mmap threshold at the largest
// value glibc's dynamic rule reaches (32 MiB), so the heap keeps its pages
// between bursts and the periodic malloc_trim returns them.
//
// Leaves everything as it is where the operator set these thresholds
// (OperatorSetThresholds) and where the C library is not glibc. Call once,
// at start, before other threads allocate.
#ifndef DMLSERVE_SERVER_LIFECYCLE_ALLOCATOR_TUNING_H_
#define DMLSERVE_SERVER_LIFECYCLE_ALLOCATOR_TUNING_H_

#include <cstdint>
#include <string>

namespace dmls::server {

inline constexpr uint64_t kTrimThresholdBytes = uint64_t{16} << 20;
inline constexpr uint64_t kMmapThresholdBytes = uint64_t{32} << 20;

// What was done, for the start-up log ("" when nothing).
std::string TuneAllocator();

// Whether the environment sets glibc's trim or mmap threshold, top pad or
// mmap count: GLIBC_TUNABLES naming glibc.malloc.trim_threshold,
// mmap_threshold, top_pad or mmap_max, or their older aliases
// MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_, MALLOC_TOP_PAD_,
// MALLOC_MMAP_MAX_ (false where the C library is not glibc).
bool OperatorSetThresholds();

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_LIFECYCLE_ALLOCATOR_TUNING_H_
