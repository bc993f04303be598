#include "server/telemetry/heap_stats.h"

#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#elif defined(_WIN32)
#include <windows.h>
#endif

namespace dmls::server {

#if defined(_WIN32)
namespace {

// Adds one heap's blocks to `s`: busy entries are in use, the other
// entries that are neither a region header nor an uncommitted range are
// free blocks the heap keeps.
void AddHeap(HANDLE heap, HeapStats& s) {
  if (!HeapLock(heap)) return;
  PROCESS_HEAP_ENTRY entry{};
  entry.lpData = nullptr;
  while (HeapWalk(heap, &entry)) {
    if (entry.wFlags & PROCESS_HEAP_ENTRY_BUSY) {
      s.in_use_bytes += entry.cbData;
    } else if (!(entry.wFlags & (PROCESS_HEAP_REGION | PROCESS_HEAP_UNCOMMITTED_RANGE))) {
      s.free_bytes += entry.cbData;
    }
  }
  HeapUnlock(heap);
}

}  // namespace
#endif

HeapStats ReadHeapStats() {
  HeapStats s;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  s.known = true;
  // uordblks: in use in the arenas; hblkhd: mmapped chunks (large
  // allocations), always in use; fordblks: free in the arenas.
  s.in_use_bytes = m.uordblks + m.hblkhd;
  s.free_bytes = m.fordblks;
#elif defined(_WIN32)
  // Every heap of the process: the CRT's malloc (msvcrt's heap, or the
  // process heap with the UCRT) and those of the DLLs we load.
  std::vector<HANDLE> heaps(GetProcessHeaps(0, nullptr) + 4);
  const DWORD n = GetProcessHeaps(static_cast<DWORD>(heaps.size()), heaps.data());
  if (n == 0 || n > heaps.size()) return s;  // none, or more appeared meanwhile
  s.known = true;
  for (DWORD i = 0; i < n; ++i) AddHeap(heaps[i], s);
#endif
  return s;
}

}  // namespace dmls::server
