// libFuzzer target: the DXBC emitter's inputs. The input bytes become a
// KernelKey (stage, operator type, data type, layout, flags, fused
// activation, variant: any values, not only the ones the planner emits)
// and go to BuildKernel. Invariants: a key outside AllKernelKeys() is
// refused with INVALID_ARGUMENT; a key it accepts yields a container whose
// checksum verifies and that vkd3d-shader compiles to SPIR-V (each distinct
// key is built and compiled once: vkd3d-shader is slow and aborts on
// malformed input).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/container/flat_hash_set.h"

#include "engine/core/mutex.h"
#include "engine/dxbc/checksum.h"
#include "engine/kernels/kernels.h"
#include "engine/dxbc/testing/vkd3d_compile.h"

namespace {

using namespace dmls;

void Fail(const char* what) {
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t b[10] = {};
  std::memcpy(b, data, size < sizeof(b) ? size : sizeof(b));
  gpu::KernelKey key;
  key.stage = static_cast<gpu::KernelStage>(b[0] % 4);
  key.op = static_cast<OperatorType>(b[1]);
  key.data_type = static_cast<DataType>(b[2] % 16);
  key.layout = static_cast<gpu::LayoutClass>(b[3] % 3);
  key.scale_bias = b[4] & 1;
  key.normalize_variance = b[4] & 2;
  key.has_scale = b[4] & 4;
  key.has_bias = b[4] & 8;
  key.fused = static_cast<OperatorType>(b[5]);
  key.variant = b[6];

  static Mutex mu;
  static const auto* const valid = [] {
    auto* s = new absl::flat_hash_set<gpu::KernelKey, gpu::KernelKeyHash>();
    for (const gpu::KernelKey& k : gpu::AllKernelKeys()) s->insert(k);
    return s;
  }();
  static absl::flat_hash_set<gpu::KernelKey, gpu::KernelKeyHash> compiled ABSL_GUARDED_BY(mu);
  MutexLock lock(&mu);
  // A key already built, checked and compiled needs no second run (the
  // emitter is deterministic); that keeps the executions cheap.
  if (compiled.contains(key)) return 0;
  absl::StatusOr<gpu::KernelInfo> k = gpu::BuildKernel(key);
  const bool listed = valid->contains(key);
  if (!k.ok()) {
    if (listed) Fail("a listed key does not build");
    if (!absl::IsInvalidArgument(k.status())) Fail("an unlisted key failed other than INVALID_ARGUMENT");
    return 0;
  }
  if (!listed) Fail("an unlisted key built");
  const std::vector<uint8_t>& c = k->dxbc;
  if (c.size() < 20) Fail("container too small");
  const std::array<uint32_t, 4> sum = gpu::DxbcChecksum(c.data() + 20, c.size() - 20);
  if (std::memcmp(sum.data(), c.data() + 4, 16) != 0) Fail("checksum does not verify");
  compiled.insert(key);
  if (!gpu::testing::CompileWithVkd3d(c).ok()) {
    Fail("vkd3d-shader rejects a built kernel");
  }
  return 0;
}
