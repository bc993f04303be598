// ByteSize: the type of every byte-count flag of dmlserve (--max_message_bytes,
// --resident_bytes_per_principal, --gpu_memory_cap_bytes, ...), so that all
// of them read the same text: a whole number of bytes with an optional
// binary suffix K, M, G or T ("64M" = 64 MiB). One parser for all.
//
// Thread-safety: plain values and pure functions.
#ifndef DMLSERVE_SERVER_OPTIONS_BYTE_SIZE_H_
#define DMLSERVE_SERVER_OPTIONS_BYTE_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dmls::server {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// "4096", "64K", "512M", "8G", "1T"; INVALID_ARGUMENT for anything else
// (empty, negative, fractions, other suffixes, more than 2^64 - 1 bytes).
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

// The shortest text ParseByteSize reads back as `bytes` ("8G", "1000").
std::string FormatByteSize(uint64_t bytes);

// An absl flag type: ABSL_FLAG(ByteSize, name, ByteSize{default}, "...").
struct ByteSize {
  uint64_t bytes = 0;
};

bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error);
std::string AbslUnparseFlag(ByteSize size);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_OPTIONS_BYTE_SIZE_H_
