#include "engine/dxbc/byte_writer.h"

#include <cassert>
#include <cstring>
#include <utility>

namespace dmls::gpu {

void ByteWriter::WriteU32(uint32_t v) {
  const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                        static_cast<uint8_t>(v >> 16),
                        static_cast<uint8_t>(v >> 24)};
  bytes_.insert(bytes_.end(), b, b + 4);
}

void ByteWriter::WriteBytes(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  bytes_.insert(bytes_.end(), p, p + n);
}

void ByteWriter::PatchU32(size_t offset, uint32_t v) {
  assert(offset + 4 <= bytes_.size());
  for (int i = 0; i < 4; ++i) bytes_[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace dmls::gpu
