// kernel_hash_tool: prints the number of kernels, their total DXBC bytes and
// an FNV-1a 64-bit hash over every kernel BuildKernel makes, in
// AllKernelKeys order (each kernel's group size, then its container bytes).
// Two builds that print the same line emit byte-identical kernels; commits
// that must not change a kernel quote it. Usage: kernel_hash_tool (about a
// minute: it builds all 28,481 kernels).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/kernels/kernels.h"

namespace {

class Fnv1a64 {
 public:
  void Add(uint8_t byte) {
    hash_ ^= byte;
    hash_ *= 1099511628211ull;
  }
  void AddWord(uint32_t word) {
    for (int i = 0; i < 4; ++i) Add(static_cast<uint8_t>(word >> (8 * i)));
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 1469598103934665603ull;
};

}  // namespace

int main(int argc, char** argv) {
  const bool each = argc > 1 && std::strcmp(argv[1], "--each") == 0;
  Fnv1a64 hash;
  uint64_t bytes = 0;
  const std::vector<dmls::gpu::KernelKey> keys = dmls::gpu::AllKernelKeys();
  for (const dmls::gpu::KernelKey& key : keys) {
    absl::StatusOr<dmls::gpu::KernelInfo> kernel = dmls::gpu::BuildKernel(key);
    if (!kernel.ok()) {
      std::fprintf(stderr, "%s: %s\n", key.DebugString().c_str(),
                   kernel.status().ToString().c_str());
      return 1;
    }
    hash.AddWord(kernel->threads_per_group);
    for (uint8_t b : kernel->dxbc) hash.Add(b);
    if (each) {
      Fnv1a64 one;
      one.AddWord(kernel->threads_per_group);
      for (uint8_t b : kernel->dxbc) one.Add(b);
      std::printf("%016llx %s\n", static_cast<unsigned long long>(one.value()),
                  key.DebugString().c_str());
    }
    bytes += kernel->dxbc.size();
  }
  std::printf("%zu kernels, %llu bytes, fnv1a64 %016llx\n", keys.size(),
              static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(hash.value()));
  return 0;
}
