// ByteWriter: a little-endian append-only byte buffer with patchable 32-bit
// slots, used to lay out the DXBC container placeholder-first (offsets and
// sizes are written as 0 and patched once known). Not thread-safe; owns its
// bytes until Take().
#ifndef DMLSERVE_ENGINE_DXBC_BYTE_WRITER_H_
#define DMLSERVE_ENGINE_DXBC_BYTE_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dmls::gpu {

class ByteWriter {
 public:
  size_t size() const { return bytes_.size(); }
  void WriteU32(uint32_t v);
  void WriteBytes(const void* data, size_t n);
  // Overwrites 4 already-written bytes at `offset` (must be in range).
  void PatchU32(size_t offset, uint32_t v);
  uint8_t* data() { return bytes_.data(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_BYTE_WRITER_H_
