// libdmls_malloc_count.so: counts the calls to malloc, calloc, realloc and
// the aligned allocators of the process it is preloaded into, for
// "allocations per request" (bench/cpu_per_request.sh --allocs).
//
//   DMLS_MALLOC_COUNT_FILE=/tmp/n
//   LD_PRELOAD=build/bench/malloc_count/libdmls_malloc_count.so
//   build/server/dmlserve ...   (the three on one command line)
//
// A thread of the library rewrites the file every 50 ms with one line,
// the count so far; read it before and after a load window and divide the
// difference by the requests answered. Without the variable it only counts.
//
// Thread-safety: the count is one relaxed atomic; the hooks allocate
// nothing. The real functions are found with dlsym(RTLD_NEXT); while
// dlsym itself allocates (glibc's calloc, before the pointers are set),
// the request is served from a small static arena that free ignores.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

using MallocFn = void* (*)(size_t);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using FreeFn = void (*)(void*);
using MemalignFn = int (*)(void**, size_t, size_t);
using AlignedAllocFn = void* (*)(size_t, size_t);

std::atomic<uint64_t> g_count{0};
MallocFn g_malloc = nullptr;
CallocFn g_calloc = nullptr;
ReallocFn g_realloc = nullptr;
FreeFn g_free = nullptr;
MemalignFn g_posix_memalign = nullptr;
AlignedAllocFn g_aligned_alloc = nullptr;

// For dlsym's own allocations before the real functions are known.
alignas(16) char g_arena[8192];
size_t g_arena_used = 0;
thread_local bool t_resolving = false;

bool InArena(const void* p) {
  return p >= static_cast<const void*>(g_arena) &&
         p < static_cast<const void*>(g_arena + sizeof(g_arena));
}

void* ArenaAlloc(size_t n) {
  n = (n + 15) & ~size_t{15};
  if (g_arena_used + n > sizeof(g_arena)) return nullptr;
  void* p = g_arena + g_arena_used;
  g_arena_used += n;
  return p;
}

void Resolve() {
  if (g_free != nullptr) return;
  t_resolving = true;
  g_malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
  g_calloc = reinterpret_cast<CallocFn>(dlsym(RTLD_NEXT, "calloc"));
  g_realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
  g_posix_memalign = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "posix_memalign"));
  g_aligned_alloc = reinterpret_cast<AlignedAllocFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
  g_free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));
  t_resolving = false;
}

void Count() { g_count.fetch_add(1, std::memory_order_relaxed); }

// Rewrites the file named by DMLS_MALLOC_COUNT_FILE with the count.
void* Reporter(void* path) {
  const int fd = open(static_cast<const char*>(path), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return nullptr;
  char line[32];
  for (;;) {
    const int n = snprintf(line, sizeof(line), "%-20llu\n",
                           static_cast<unsigned long long>(g_count.load()));
    if (pwrite(fd, line, static_cast<size_t>(n), 0) != n) break;
    const timespec pause{0, 50 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  close(fd);
  return nullptr;
}

__attribute__((constructor)) void Start() {
  Resolve();
  static char path[4096];
  const char* p = getenv("DMLS_MALLOC_COUNT_FILE");
  if (p == nullptr || strlen(p) >= sizeof(path)) return;
  strcpy(path, p);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, Reporter, path) == 0) pthread_detach(thread);
}

}  // namespace

extern "C" {

// The count so far, for a program that looks it up (malloc_count_test).
__attribute__((visibility("default"))) uint64_t dmls_malloc_count() { return g_count.load(); }

void* malloc(size_t n) {
  if (g_malloc == nullptr) {
    if (t_resolving) return ArenaAlloc(n);
    Resolve();
  }
  Count();
  return g_malloc(n);
}

void* calloc(size_t count, size_t n) {
  if (g_calloc == nullptr) {
    if (t_resolving) return ArenaAlloc(count * n);  // the arena is zeroed
    Resolve();
  }
  Count();
  return g_calloc(count, n);
}

void* realloc(void* p, size_t n) {
  if (g_realloc == nullptr) Resolve();
  Count();
  if (InArena(p)) {
    void* q = g_malloc(n);
    const size_t left = static_cast<size_t>(g_arena + sizeof(g_arena) - static_cast<char*>(p));
    if (q != nullptr) memcpy(q, p, n < left ? n : left);
    return q;
  }
  return g_realloc(p, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
  if (g_posix_memalign == nullptr) Resolve();
  Count();
  return g_posix_memalign(out, align, n);
}

void* aligned_alloc(size_t align, size_t n) {
  if (g_aligned_alloc == nullptr) Resolve();
  Count();
  return g_aligned_alloc(align, n);
}

void free(void* p) {
  if (p == nullptr || InArena(p)) return;
  if (g_free == nullptr) Resolve();
  g_free(p);
}

}  // extern "C"
