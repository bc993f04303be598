// Runs under LD_PRELOAD=libdmls_malloc_count.so (CMakeLists.txt): 1,000
// mallocs and 10 callocs must raise the library's count by at least that
// many (the loop's own vector and stdio may add a few), and the file named
// by DMLS_MALLOC_COUNT_FILE must come to show a count at least as high.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main() {
  using CountFn = uint64_t (*)();
  auto count = reinterpret_cast<CountFn>(dlsym(RTLD_DEFAULT, "dmls_malloc_count"));
  if (count == nullptr) {
    std::fprintf(stderr, "dmls_malloc_count not found: run under LD_PRELOAD\n");
    return 1;
  }
  std::vector<void*> blocks(1010);
  const uint64_t before = count();
  for (int i = 0; i < 1000; ++i) blocks[i] = std::malloc(16 + i);
  for (int i = 0; i < 10; ++i) blocks[1000 + i] = std::calloc(4, 8);
  const uint64_t after = count();
  for (void* p : blocks) std::free(p);
  if (after - before != 1010) {
    std::fprintf(stderr, "counted %llu allocations, made 1010\n",
                 static_cast<unsigned long long>(after - before));
    return 1;
  }
  const char* path = std::getenv("DMLS_MALLOC_COUNT_FILE");
  if (path == nullptr) return 0;
  for (int i = 0; i < 100; ++i) {  // the reporter writes every 50 ms
    usleep(20 * 1000);
    std::FILE* f = std::fopen(path, "r");
    unsigned long long shown = 0;
    const bool read = f != nullptr && std::fscanf(f, "%llu", &shown) == 1;
    if (f != nullptr) std::fclose(f);
    if (read && shown >= after) return 0;
  }
  std::fprintf(stderr, "%s never showed a count of %llu\n", path,
               static_cast<unsigned long long>(after));
  return 1;
}
