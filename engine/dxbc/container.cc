#include "engine/dxbc/container.h"

#include "engine/dxbc/byte_writer.h"
#include "engine/dxbc/checksum.h"

namespace dmls::gpu {
namespace {

constexpr uint32_t FourCc(char a, char b, char c, char d) {
  return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 |
         uint32_t(uint8_t(c)) << 16 | uint32_t(uint8_t(d)) << 24;
}

// An input/output signature with no elements: element count 0, and the
// offset of the (empty) element array, 8 bytes after the chunk data start.
void WriteEmptySignature(ByteWriter& w) {
  w.WriteU32(0);
  w.WriteU32(8);
}

}  // namespace

std::vector<uint8_t> BuildContainer(const std::vector<uint32_t>& tokens) {
  constexpr uint32_t kChunkCount = 3;
  ByteWriter w;
  w.WriteU32(FourCc('D', 'X', 'B', 'C'));
  for (int i = 0; i < 4; ++i) w.WriteU32(0);  // checksum placeholder
  w.WriteU32(1);                              // container version
  const size_t total_size_at = w.size();
  w.WriteU32(0);  // total size placeholder
  w.WriteU32(kChunkCount);
  const size_t offsets_at = w.size();
  for (uint32_t i = 0; i < kChunkCount; ++i) w.WriteU32(0);

  auto begin_chunk = [&](int index, uint32_t fourcc) {
    w.PatchU32(offsets_at + 4 * index, static_cast<uint32_t>(w.size()));
    w.WriteU32(fourcc);
    const size_t size_at = w.size();
    w.WriteU32(0);
    return size_at;
  };
  auto end_chunk = [&](size_t size_at) {
    w.PatchU32(size_at, static_cast<uint32_t>(w.size() - size_at - 4));
  };

  size_t at = begin_chunk(0, FourCc('I', 'S', 'G', 'N'));
  WriteEmptySignature(w);
  end_chunk(at);
  at = begin_chunk(1, FourCc('O', 'S', 'G', 'N'));
  WriteEmptySignature(w);
  end_chunk(at);
  at = begin_chunk(2, FourCc('S', 'H', 'E', 'X'));
  for (uint32_t t : tokens) w.WriteU32(t);
  end_chunk(at);

  w.PatchU32(total_size_at, static_cast<uint32_t>(w.size()));
  std::vector<uint8_t> out = w.Take();
  StampChecksum(out);
  return out;
}

void StampChecksum(std::vector<uint8_t>& c) {
  const auto sum = DxbcChecksum(c.data() + 20, c.size() - 20);
  for (int i = 0; i < 4; ++i) {
    for (int b = 0; b < 4; ++b) {
      c[4 + 4 * i + b] = static_cast<uint8_t>(sum[i] >> (8 * b));
    }
  }
}

}  // namespace dmls::gpu
