#include "engine/dxbc/checksum.h"

#include <cmath>
#include <cstring>

namespace dmls::gpu {
namespace {

// Per-round left-rotation amounts (RFC 1321 §3.4).
constexpr uint32_t kShift[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

// T[i] = floor(2^32 * |sin(i + 1)|), computed rather than tabulated.
struct SineTable {
  uint32_t t[64];
  SineTable() {
    for (int i = 0; i < 64; ++i) {
      t[i] = static_cast<uint32_t>(
          std::floor(4294967296.0 * std::fabs(std::sin(static_cast<double>(i + 1)))));
    }
  }
};
const SineTable& Sines() {
  static const SineTable table;
  return table;
}

uint32_t Rotl(uint32_t x, uint32_t c) { return (x << c) | (x >> (32 - c)); }

struct Md5State {
  uint32_t a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;

  void Block(const uint8_t* p) {
    uint32_t m[16];
    for (int i = 0; i < 16; ++i) {
      m[i] = uint32_t{p[4 * i]} | uint32_t{p[4 * i + 1]} << 8 |
             uint32_t{p[4 * i + 2]} << 16 | uint32_t{p[4 * i + 3]} << 24;
    }
    const uint32_t* t = Sines().t;
    uint32_t A = a, B = b, C = c, D = d;
    for (int i = 0; i < 64; ++i) {
      uint32_t f;
      int g;
      if (i < 16) {
        f = (B & C) | (~B & D);
        g = i;
      } else if (i < 32) {
        f = (D & B) | (~D & C);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = B ^ C ^ D;
        g = (3 * i + 5) % 16;
      } else {
        f = C ^ (B | ~D);
        g = (7 * i) % 16;
      }
      const uint32_t next = B + Rotl(A + f + t[i] + m[g], kShift[i]);
      A = D;
      D = C;
      C = B;
      B = next;
    }
    a += A;
    b += B;
    c += C;
    d += D;
  }
};

void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

std::array<uint8_t, 16> Md5(const uint8_t* data, size_t size) {
  Md5State s;
  size_t full = size / 64 * 64;
  for (size_t i = 0; i < full; i += 64) s.Block(data + i);
  uint8_t tail[128] = {};
  const size_t left = size - full;
  std::memcpy(tail, data + full, left);
  tail[left] = 0x80;
  const size_t tail_len = left < 56 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(size) * 8;
  PutU32(tail + tail_len - 8, static_cast<uint32_t>(bits));
  PutU32(tail + tail_len - 4, static_cast<uint32_t>(bits >> 32));
  for (size_t i = 0; i < tail_len; i += 64) s.Block(tail + i);
  std::array<uint8_t, 16> out;
  PutU32(out.data(), s.a);
  PutU32(out.data() + 4, s.b);
  PutU32(out.data() + 8, s.c);
  PutU32(out.data() + 12, s.d);
  return out;
}

std::array<uint32_t, 4> DxbcChecksum(const uint8_t* data, size_t size) {
  Md5State s;
  const size_t full = size / 64 * 64;
  for (size_t i = 0; i < full; i += 64) s.Block(data + i);
  const size_t left = size - full;
  const uint32_t bits = static_cast<uint32_t>(size * 8);
  const uint32_t last_word = (bits >> 2) | 1;  // 2 * byte length, odd
  uint8_t block[64] = {};
  if (left >= 56) {
    // The leftover plus the 0x80 marker fill one block; the lengths go in an
    // extra block of their own.
    std::memcpy(block, data + full, left);
    block[left] = 0x80;
    s.Block(block);
    std::memset(block, 0, sizeof(block));
    PutU32(block, bits);
    PutU32(block + 60, last_word);
    s.Block(block);
  } else {
    PutU32(block, bits);
    std::memcpy(block + 4, data + full, left);
    block[4 + left] = 0x80;
    PutU32(block + 60, last_word);
    s.Block(block);
  }
  return {s.a, s.b, s.c, s.d};
}

}  // namespace dmls::gpu
