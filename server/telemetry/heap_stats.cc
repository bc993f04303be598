#include "server/telemetry/heap_stats.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace dmls::server {

HeapStats ReadHeapStats() {
  HeapStats s;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  s.known = true;
  // uordblks: in use in the arenas; hblkhd: mmapped chunks (large
  // allocations), always in use; fordblks: free in the arenas.
  s.in_use_bytes = m.uordblks + m.hblkhd;
  s.free_bytes = m.fordblks;
#endif
  return s;
}

}  // namespace dmls::server
