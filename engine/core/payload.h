// Payload: one tensor's bytes as a request carries them into the engine:
// either a std::string the payload owns, or read-only byte ranges that live
// in someone else's memory (e.g. a received gRPC message's slices), kept
// alive by an owner handle for as long as the payload (or a copy) exists.
// The engine reads a payload once, straight into where it needs the bytes
// (upload memory, a working buffer): CopyTo. Where the bytes are one range
// (an owned string, a message received in one slice) contiguous() hands
// them out without any copy.
//
// Ownership: owns its string or shares its owner; copies share the owner
// (the borrowed bytes are never copied by copying a Payload; an owned
// string is). Thread-compatible; the bytes themselves are read-only.
#ifndef DMLSERVE_ENGINE_CORE_PAYLOAD_H_
#define DMLSERVE_ENGINE_CORE_PAYLOAD_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"

namespace dmls {

class Payload {
 public:
  Payload() = default;
  // Owns `bytes` (moved in: no copy). Implicit, so that callers holding a
  // string (tests, chains, KServe) keep writing `request.input = bytes`.
  Payload(std::string bytes) : owned_(std::move(bytes)) {}  // NOLINT
  Payload(const char* bytes) : owned_(bytes) {}             // NOLINT

  // Borrows `ranges`, in order, kept alive by `owner` (must not be null).
  static Payload Borrowed(absl::InlinedVector<absl::string_view, 2> ranges,
                          std::shared_ptr<const void> owner);

  size_t size() const;
  bool empty() const { return size() == 0; }
  // Whether the bytes are one range (always for an owned string).
  bool is_contiguous() const { return !owner_ || ranges_.size() <= 1; }
  // The bytes as one range; only when is_contiguous().
  absl::string_view contiguous() const;
  // The bytes, in order, as ranges (one for an owned string).
  absl::InlinedVector<absl::string_view, 2> ranges() const;
  // Writes the size() bytes to `dst` (which must have room for them).
  void CopyTo(void* dst) const;
  // The bytes as a string: moved out when owned, else a copy. Leaves the
  // payload empty.
  std::string TakeString();
  // Empties the payload (releasing its owner).
  void clear();

  friend bool operator==(const Payload& a, absl::string_view b);

 private:
  std::string owned_;  // the bytes when owner_ is null
  absl::InlinedVector<absl::string_view, 2> ranges_;  // the bytes otherwise
  std::shared_ptr<const void> owner_;
  size_t borrowed_size_ = 0;
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_PAYLOAD_H_
