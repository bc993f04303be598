#include "bench/upload.h"

#include <cstring>

namespace dmls::bench {

uint16_t HalfOf(float v) {
  uint32_t x;
  std::memcpy(&x, &v, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t a = x & 0x7fffffffu;
  if (a < 0x38800000u) return sign;  // below 2^-14: zero is close enough here
  return sign | static_cast<uint16_t>((a - 0x38000000u) >> 13);
}

float NextUniform(uint32_t& seed) {
  seed = seed * 1664525u + 1013904223u;
  return static_cast<float>(seed >> 8) / 16777216.0f;
}

void PutElement(uint8_t* mapped, uint64_t i, float v, DataType type) {
  if (type == DataType::kFloat16) {
    reinterpret_cast<uint16_t*>(mapped)[i] = HalfOf(v);
  } else {
    reinterpret_cast<float*>(mapped)[i] = v;
  }
}

void FillUniform(uint8_t* mapped, uint64_t first, uint64_t count, float lo, float hi,
                 DataType type, uint32_t& seed) {
  const float range = hi - lo;
  for (uint64_t i = first; i < first + count; ++i) {
    PutElement(mapped, i, lo + range * NextUniform(seed), type);
  }
}

absl::Status UploadPair(BenchDevice& bench, d3d12::PoolBuffer* upload, d3d12::PoolBuffer* a,
                        d3d12::PoolBuffer* b, uint64_t bytes) {
  return bench.RunOnce([&](ID3D12GraphicsCommandList* l) {
    D3D12_RESOURCE_BARRIER t[] = {
        d3d12::TransitionBarrier(a->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_DEST),
        d3d12::TransitionBarrier(b->resource.get(), D3D12_RESOURCE_STATE_COMMON, D3D12_RESOURCE_STATE_COPY_DEST)};
    l->ResourceBarrier(2, t);
    l->CopyBufferRegion(a->resource.get(), 0, upload->resource.get(), 0, bytes);
    l->CopyBufferRegion(b->resource.get(), 0, upload->resource.get(), bytes, bytes);
  });
}

}  // namespace dmls::bench
