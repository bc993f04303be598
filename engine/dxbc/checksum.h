// The DXBC container checksum: MD5's compression function over bytes
// 20..end of the container, with a non-standard final padding (DESIGN.md §3):
// the message bit length goes in the *first* word of the last block and
// (bit length / 4) | 1 in its last word, instead of MD5's trailing 64-bit
// length. Written from the MD5 definition (RFC 1321); pure functions,
// thread-safe.
#ifndef DMLSERVE_ENGINE_DXBC_CHECKSUM_H_
#define DMLSERVE_ENGINE_DXBC_CHECKSUM_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace dmls::gpu {

// Standard MD5 of `data` (used to test the compression function against
// RFC 1321 vectors). Returns the digest as 16 bytes.
std::array<uint8_t, 16> Md5(const uint8_t* data, size_t size);

// The DXBC checksum of `data` (the container bytes after the 20-byte
// magic+checksum prefix), as the four little-endian words stored at bytes
// 4..19 of the container.
std::array<uint32_t, 4> DxbcChecksum(const uint8_t* data, size_t size);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_CHECKSUM_H_
