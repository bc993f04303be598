// ChunkCursor: where the next chunk of a chunked transfer must start, and
// the rules every chunk meets (WriteTensor and ExecuteChunked): chunks
// arrive in order, without overlap, gap or excess, and cover the range.
// Plain value; thread-compatible.
#ifndef DMLSERVE_SERVER_RPC_CHUNK_CURSOR_H_
#define DMLSERVE_SERVER_RPC_CHUNK_CURSOR_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"

namespace dmls::server {

class ChunkCursor {
 public:
  ChunkCursor() = default;
  // Chunks must cover [begin, end).
  ChunkCursor(uint64_t begin, uint64_t end) : next_(begin), end_(end) {}

  // Takes a chunk of `size` bytes at `offset`; INVALID_ARGUMENT
  // (CHUNK_OVERLAP, CHUNK_OUT_OF_ORDER, CHUNK_EXCESS) at `field` otherwise.
  absl::Status Accept(uint64_t offset, uint64_t size, const std::string& field) {
    if (offset < next_) {
      return Error("CHUNK_OVERLAP", field + ".offset",
                   absl::StrCat("a chunk at ", offset, " overlaps bytes already sent "
                                "(the next chunk starts at ", next_, ")"));
    }
    if (offset > next_) {
      return Error("CHUNK_OUT_OF_ORDER", field + ".offset",
                   absl::StrCat("a chunk at ", offset, " leaves a gap: the next chunk "
                                "starts at ", next_));
    }
    if (size > end_ - next_) {
      return Error("CHUNK_EXCESS", field + ".data",
                   absl::StrCat("the chunk ends at ", offset + size, ", past the end at ",
                                end_));
    }
    next_ += size;
    return absl::OkStatus();
  }
  // OK once the range is covered; CHUNK_MISSING otherwise.
  absl::Status Complete(const std::string& field) const {
    if (next_ == end_) return absl::OkStatus();
    return Error("CHUNK_MISSING", field,
                 absl::StrCat("the chunks ended at byte ", next_, " of ", end_));
  }

  static absl::Status Error(std::string rule, std::string field, std::string message) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, std::move(rule),
                           std::move(field), std::move(message));
  }

 private:
  uint64_t next_ = 0;
  uint64_t end_ = 0;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_CHUNK_CURSOR_H_
