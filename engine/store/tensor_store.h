// TensorStore: the server's resident tensors -- handle, owner, descriptor,
// the engine buffer that holds the bytes, expiry -- and the byte quotas per
// principal and for the whole server.
//
// Handles are "t-" and 32 hex digits from the system's random device (128
// bits): unguessable. A tensor belongs to the principal that created it
// (principal.h); Find, Release and List with any other principal behave as
// if it did not exist (NOT_FOUND, HANDLE_NOT_FOUND), so handles cannot be
// probed. Create reserves the tensor's bytes from both quotas before the
// engine allocates them (RESOURCE_EXHAUSTED, RESIDENT_QUOTA); they go back
// when the tensor is released, expires, or (for a pending tensor) is
// abandoned. The engine memory itself goes back when the last user of the
// buffer (a chain in flight, say) lets go.
//
// Pending tensors: an upload creates its tensor pending -- invisible,
// counted against the quotas -- and publishes it only when the whole
// upload has arrived (Publish); a failed or abandoned upload calls Abandon.
//
// Expiry: a tensor with a time to live disappears from Find/List once it
// has passed, and a sweeper thread releases expired tensors every
// `sweep_interval`.
//
// Ownership: borrows the engine (which must outlive the store); owns the
// entries; shares buffers with whoever holds them. Thread-safe.
#ifndef DMLSERVE_ENGINE_STORE_TENSOR_STORE_H_
#define DMLSERVE_ENGINE_STORE_TENSOR_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "engine/core/tensor_desc.h"

namespace dmls::store {

struct TensorStoreOptions {
  // Bytes of resident tensors one principal may hold (pending uploads
  // included).
  uint64_t bytes_per_principal = uint64_t{8} << 30;
  // Bytes of resident tensors of all principals together.
  uint64_t bytes_total = uint64_t{16} << 30;
  // Time to live of a tensor created without one; zero: no expiry.
  absl::Duration default_ttl = absl::Hours(1);
  // How often expired tensors are released; zero: only lazily.
  absl::Duration sweep_interval = absl::Seconds(1);
  // The clock (tests inject one); default absl::Now.
  std::function<absl::Time()> now;
};

// One tensor. Immutable after creation except through the engine's
// writes to its buffer.
struct ResidentTensor {
  std::string handle;
  std::string principal;
  TensorDesc desc;
  std::shared_ptr<ResidentBuffer> buffer;
  absl::Time expires = absl::InfiniteFuture();
};

struct TensorStoreStats {
  uint64_t tensors = 0;   // published and pending
  uint64_t bytes = 0;     // reserved by them
  uint64_t created = 0;
  uint64_t expired = 0;
  uint64_t quota_rejections = 0;
};

// The longest time to live a caller may ask for (ttl_seconds,
// keep_output_ttl_seconds): 30 days. The server's own default
// (--resident_ttl_seconds) is not bound by it.
inline constexpr uint64_t kMaxTtlSeconds = uint64_t{30} * 24 * 3600;

// A requested time to live as Create takes it (0: the default), or
// INVALID_ARGUMENT TTL_TOO_LONG at `field` above kMaxTtlSeconds.
absl::StatusOr<absl::Duration> RequestedTtl(uint64_t seconds, const std::string& field);

class TensorStore {
 public:
  TensorStore(Engine* engine, TensorStoreOptions options);
  ~TensorStore();
  TensorStore(const TensorStore&) = delete;
  TensorStore& operator=(const TensorStore&) = delete;

  // A zero-filled tensor of desc.total_tensor_size_in_bytes bytes, owned by
  // `principal`, published at once unless `pending`. `ttl` zero: the
  // default. RESOURCE_EXHAUSTED (RESIDENT_QUOTA) over a quota; the engine's
  // error when it has no memory.
  absl::StatusOr<std::shared_ptr<const ResidentTensor>> Create(
      const std::string& principal, const TensorDesc& desc, absl::Duration ttl,
      bool pending);
  void Publish(const std::string& handle);
  // Forgets a pending (or published) tensor and gives its quota back.
  void Abandon(const std::string& handle);
  // All-or-nothing overwrites (WriteTensor on an existing tensor): the
  // published tensor `target` takes the buffer of `version` (a pending
  // tensor of the same size, written in full) and keeps its handle, owner
  // and expiry; `version` is forgotten, its quota given back. Calls that
  // found `target` before keep the old bytes. NOT_FOUND (HANDLE_NOT_FOUND)
  // when either is gone meanwhile (released or expired): `version` is
  // forgotten then too.
  absl::StatusOr<std::shared_ptr<const ResidentTensor>> Replace(const std::string& target,
                                                                const std::string& version);

  // `principal`'s published, unexpired tensor; NOT_FOUND otherwise.
  absl::StatusOr<std::shared_ptr<const ResidentTensor>> Find(
      const std::string& principal, const std::string& handle) const;
  absl::Status Release(const std::string& principal, const std::string& handle);
  // `principal`'s published, unexpired tensors, ordered by handle.
  std::vector<std::shared_ptr<const ResidentTensor>> List(
      const std::string& principal) const;
  // Bytes `principal` holds (pending included).
  uint64_t PrincipalBytes(const std::string& principal) const;

  // Releases every expired tensor now; returns how many.
  size_t Sweep();

  TensorStoreStats stats() const;
  const TensorStoreOptions& options() const { return options_; }

 private:
  struct Entry {
    std::shared_ptr<const ResidentTensor> tensor;
    bool published = false;
  };
  absl::Time Now() const;
  // NOT_FOUND for `handle`: HANDLE_LOST for a handle of another instance,
  // else HANDLE_NOT_FOUND.
  absl::Status NotFound(const std::string& handle) const;
  // Removes `it`, giving its bytes back. mu_ held.
  void EraseLocked(std::map<std::string, Entry>::const_iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `principal`'s published, unexpired entry for `handle`, or end().
  std::map<std::string, Entry>::const_iterator FindLocked(
      const std::string& principal, const std::string& handle) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SweepLoop();

  Engine* const engine_;
  const TensorStoreOptions options_;
  // In this store's handles (tensor_handle.h).
  const uint32_t instance_;

  mutable Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> principal_bytes_ ABSL_GUARDED_BY(mu_);
  TensorStoreStats stats_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  CondVar wake_;
  std::thread sweeper_;
};

}  // namespace dmls::store

#endif  // DMLSERVE_ENGINE_STORE_TENSOR_STORE_H_
