// HeapStats: what the process's C allocator holds, for the metrics
// endpoint (dmlserve_process_heap_bytes). "In use" is memory handed out
// and not yet freed, and grows with a leak; "free" is memory the allocator
// keeps after it was freed (glibc's arenas hold on to part of a burst of
// large calls), which shows in RSS but is not lost. Telling the two apart
// is what RSS alone cannot do.
//
// glibc only (mallinfo2); elsewhere `known` is false. Thread-safe: glibc
// locks each arena while it walks it.
#ifndef DMLSERVE_SERVER_TELEMETRY_HEAP_STATS_H_
#define DMLSERVE_SERVER_TELEMETRY_HEAP_STATS_H_

#include <cstdint>

namespace dmls::server {

struct HeapStats {
  bool known = false;
  uint64_t in_use_bytes = 0;  // allocated, in arenas and mmapped chunks
  uint64_t free_bytes = 0;    // freed but still held in the arenas
};

HeapStats ReadHeapStats();

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_TELEMETRY_HEAP_STATS_H_
