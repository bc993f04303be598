// The data dmls_bench measures on: a 24-bit linear congruential sequence of
// uniform values written as FLOAT32 or FLOAT16 into an upload buffer, and
// the copy of an upload buffer into two default-heap buffers.
#ifndef DMLSERVE_BENCH_UPLOAD_H_
#define DMLSERVE_BENCH_UPLOAD_H_

#include <cstdint>

#include "absl/status/status.h"
#include "bench/bench_device.h"
#include "engine/core/types.h"
#include "engine/d3d12/buffer_pool.h"

namespace dmls::bench {

// binary32 -> binary16 for values in [-4, 4] (normal range; truncates).
uint16_t HalfOf(float v);

// The next of a 24-bit linear congruential sequence, in [0, 1).
float NextUniform(uint32_t& seed);

// Element i of a FLOAT32 or FLOAT16 (`type`) buffer at `mapped` = v.
void PutElement(uint8_t* mapped, uint64_t i, float v, DataType type);

// Elements [first, first + count) of a FLOAT32 or FLOAT16 buffer at
// `mapped` = lo + (hi - lo) * u, u the next `count` values of NextUniform.
void FillUniform(uint8_t* mapped, uint64_t first, uint64_t count, float lo, float hi,
                 DataType type, uint32_t& seed);

// Copies bytes [0, bytes) of `upload` into `a` and [bytes, 2 * bytes) into
// `b` (both in the COMMON state, as they return to it afterwards).
absl::Status UploadPair(BenchDevice& bench, d3d12::PoolBuffer* upload, d3d12::PoolBuffer* a,
                        d3d12::PoolBuffer* b, uint64_t bytes);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_UPLOAD_H_
