// Payload: one tensor's bytes as a request carries them into the engine:
// either a std::string the payload owns, or read-only byte ranges that live
// in someone else's memory (a received gRPC message's slices: message_codec.h's
// ParseRequestWithPayloads), kept alive by an owner handle. The engine reads
// a payload once, straight into where it needs the bytes (upload memory, a
// working buffer): CopyTo or ranges(). Where the bytes are one range (an
// owned string, a message received in one slice) contiguous() and Flatten()
// hand them out without any copy.
//
// Ownership: a payload owns its string, or holds a share of its owner (for a
// received message: a vector of gRPC slice references, each slice
// reference-counted by gRPC independently of the call and its ByteBuffer).
// The borrowed bytes stay valid until the payload and every copy of it are
// destroyed or clear()ed; holders that are done with the bytes (the GPU
// runner, once they are in upload memory) clear() so that the received
// memory is let go early. Copying a payload never copies borrowed bytes (the
// copy shares the owner); copying an owned payload copies its string.
// Views handed out (contiguous(), ranges(), Flatten()) are valid while the
// payload is, unmodified.
//
// Thread-safety: thread-compatible. Const methods may run concurrently on
// one payload; copies (sharing an owner) may be used and destroyed on
// different threads. The bytes themselves are never written through a
// borrowed payload (mutable_string() makes an owned copy first).
#ifndef DMLSERVE_ENGINE_CORE_PAYLOAD_H_
#define DMLSERVE_ENGINE_CORE_PAYLOAD_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace dmls {

class Payload {
 public:
  Payload() = default;
  // Owns `bytes` (moved in: no copy). Implicit, so that callers holding a
  // string (tests, chains, KServe) keep writing `request.input = bytes`.
  Payload(std::string bytes) : owned_(std::move(bytes)) {}  // NOLINT
  Payload(const char* bytes) : owned_(bytes) {}             // NOLINT

  // Borrows `ranges`, in order, kept alive by `owner` (must not be null).
  static Payload Borrowed(absl::InlinedVector<std::string_view, 2> ranges,
                          std::shared_ptr<const void> owner);

  size_t size() const;
  bool empty() const { return size() == 0; }
  // Whether the bytes live in the owner's memory (Borrowed), not in a string
  // of the payload's own.
  bool borrowed() const { return owner_ != nullptr; }
  // Whether the bytes are one range (always for an owned string).
  bool is_contiguous() const { return !owner_ || ranges_.size() <= 1; }
  // The bytes as one range; only when is_contiguous().
  std::string_view contiguous() const;
  // The bytes, in order, as ranges (one for an owned string).
  absl::InlinedVector<std::string_view, 2> ranges() const;
  // Writes the size() bytes to `dst` (which must have room for them).
  void CopyTo(void* dst) const;
  // The bytes as one range: contiguous() when is_contiguous(), else
  // gathered into `*scratch` (the one copy of a payload that arrived in
  // several pieces). Valid while the payload and `*scratch` are.
  std::string_view Flatten(std::string* scratch) const;
  // A copy of the bytes as a string.
  std::string ToString() const;
  // The bytes as a string: moved out when owned, else a copy. Leaves the
  // payload empty.
  std::string TakeString();
  // The bytes as an owned string to edit in place (callers that build a
  // payload: tests, tools); a borrowed payload becomes an owned copy first.
  std::string& mutable_string();
  // Empties the payload (releasing its owner).
  void clear();

  friend bool operator==(const Payload& a, std::string_view b);

 private:
  std::string owned_;  // the bytes when owner_ is null
  absl::InlinedVector<std::string_view, 2> ranges_;  // the bytes otherwise
  std::shared_ptr<const void> owner_;
  size_t borrowed_size_ = 0;
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_PAYLOAD_H_
