#include "engine/store/tensor_store.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/core/thread_name.h"
#include "engine/ops/rule_status.h"
#include "engine/store/tensor_handle.h"

namespace dmls::store {

absl::Status TensorStore::NotFound(const std::string& handle) const {
  std::optional<uint32_t> instance = HandleInstance(handle);
  if (instance.has_value() && *instance != instance_) {
    return ops::RuleStatus(
        absl::StatusCode::kNotFound, "HANDLE_LOST", "handle",
        absl::StrCat("resident tensor '", handle, "' was made by another server instance: "
                     "a replica that is gone or restarted, or one this call did not reach "
                     "(tensor_handle.h); its bytes are gone with it, upload them again"));
  }
  return ops::RuleStatus(absl::StatusCode::kNotFound, "HANDLE_NOT_FOUND", "handle",
                         absl::StrCat("no resident tensor '", handle.substr(0, 64),
                                      "' (unknown, released, expired, or not yours)"));
}

absl::StatusOr<absl::Duration> RequestedTtl(uint64_t seconds, const std::string& field) {
  if (seconds > kMaxTtlSeconds) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "TTL_TOO_LONG", field,
                           absl::StrCat(seconds, " seconds is beyond the longest time to "
                                        "live, ", kMaxTtlSeconds, " (30 days)"));
  }
  return absl::Seconds(static_cast<int64_t>(seconds));
}

TensorStore::TensorStore(Engine* engine, TensorStoreOptions options)
    : engine_(engine), options_(std::move(options)), instance_(NewInstanceId()) {
  if (options_.sweep_interval > absl::ZeroDuration()) {
    sweeper_ = std::thread([this] {
      SetThreadName("dmls-sweeper");
      SweepLoop();
    });
  }
}

TensorStore::~TensorStore() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  if (sweeper_.joinable()) sweeper_.join();
}

absl::Time TensorStore::Now() const {
  return options_.now ? options_.now() : absl::Now();
}

absl::StatusOr<std::shared_ptr<const ResidentTensor>> TensorStore::Create(
    const std::string& principal, const TensorDesc& desc, absl::Duration ttl,
    bool pending) {
  const uint64_t bytes = desc.total_tensor_size_in_bytes;
  {
    MutexLock lock(&mu_);
    const uint64_t mine = principal_bytes_[principal];
    std::string which;
    if (bytes > options_.bytes_per_principal - std::min(mine, options_.bytes_per_principal)) {
      which = absl::StrCat("your resident tensors hold ", mine, " of your ",
                           options_.bytes_per_principal, " bytes");
    } else if (bytes > options_.bytes_total - std::min(stats_.bytes, options_.bytes_total)) {
      which = absl::StrCat("the server's resident tensors hold ", stats_.bytes, " of ",
                           options_.bytes_total, " bytes");
    }
    if (!which.empty()) {
      ++stats_.quota_rejections;
      if (mine == 0) principal_bytes_.erase(principal);
      return ops::RuleStatus(
          absl::StatusCode::kResourceExhausted, "RESIDENT_QUOTA", "",
          absl::StrCat("a tensor of ", bytes, " bytes does not fit: ", which,
                       "; release some first"));
    }
    // Reserve before allocating, so that concurrent creates cannot
    // overshoot together.
    principal_bytes_[principal] += bytes;
    stats_.bytes += bytes;
  }
  auto give_back = [&] {
    MutexLock lock(&mu_);
    stats_.bytes -= bytes;
    if ((principal_bytes_[principal] -= bytes) == 0) principal_bytes_.erase(principal);
  };
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> buffer =
      engine_->AllocateResident(std::max<uint64_t>(bytes, 1), principal);
  if (!buffer.ok()) {
    give_back();
    return buffer.status();
  }
  auto tensor = std::make_shared<ResidentTensor>();
  tensor->handle = NewTensorHandle(instance_);
  tensor->principal = principal;
  tensor->desc = desc;
  tensor->buffer = std::move(*buffer);
  if (ttl <= absl::ZeroDuration()) ttl = options_.default_ttl;
  if (ttl > absl::ZeroDuration()) tensor->expires = Now() + ttl;
  MutexLock lock(&mu_);
  entries_[tensor->handle] = Entry{tensor, !pending};
  ++stats_.tensors;
  ++stats_.created;
  return std::shared_ptr<const ResidentTensor>(std::move(tensor));
}

void TensorStore::Publish(const std::string& handle) {
  MutexLock lock(&mu_);
  auto it = entries_.find(handle);
  if (it != entries_.end()) it->second.published = true;
}

void TensorStore::Abandon(const std::string& handle) {
  MutexLock lock(&mu_);
  auto it = entries_.find(handle);
  if (it != entries_.end()) EraseLocked(it);
}

absl::StatusOr<std::shared_ptr<const ResidentTensor>> TensorStore::Replace(
    const std::string& target, const std::string& version) {
  std::shared_ptr<const ResidentTensor> old;  // freed outside mu_
  MutexLock lock(&mu_);
  auto v = entries_.find(version);
  if (v == entries_.end()) return NotFound(version);
  auto t = entries_.find(target);
  if (t == entries_.end() || !t->second.published || t->second.tensor->expires <= Now()) {
    EraseLocked(v);
    return NotFound(target);
  }
  auto replaced = std::make_shared<ResidentTensor>(*t->second.tensor);
  replaced->buffer = v->second.tensor->buffer;
  old = std::exchange(t->second.tensor, replaced);
  EraseLocked(v);
  return std::shared_ptr<const ResidentTensor>(std::move(replaced));
}

void TensorStore::EraseLocked(std::map<std::string, Entry>::const_iterator it) {
  const ResidentTensor& t = *it->second.tensor;
  const uint64_t bytes = t.desc.total_tensor_size_in_bytes;
  stats_.bytes -= bytes;
  --stats_.tensors;
  auto p = principal_bytes_.find(t.principal);
  if (p != principal_bytes_.end() && (p->second -= bytes) == 0) principal_bytes_.erase(p);
  entries_.erase(it);
}

std::map<std::string, TensorStore::Entry>::const_iterator TensorStore::FindLocked(
    const std::string& principal, const std::string& handle) const {
  auto it = entries_.find(handle);
  if (it == entries_.end() || !it->second.published ||
      it->second.tensor->principal != principal || it->second.tensor->expires <= Now()) {
    return entries_.end();
  }
  return it;
}

absl::StatusOr<std::shared_ptr<const ResidentTensor>> TensorStore::Find(
    const std::string& principal, const std::string& handle) const {
  MutexLock lock(&mu_);
  auto it = FindLocked(principal, handle);
  if (it == entries_.end()) return NotFound(handle);
  return it->second.tensor;
}

absl::Status TensorStore::Release(const std::string& principal,
                                  const std::string& handle) {
  MutexLock lock(&mu_);
  auto it = FindLocked(principal, handle);
  if (it == entries_.end()) return NotFound(handle);
  EraseLocked(it);
  return absl::OkStatus();
}

std::vector<std::shared_ptr<const ResidentTensor>> TensorStore::List(
    const std::string& principal) const {
  const absl::Time now = Now();
  std::vector<std::shared_ptr<const ResidentTensor>> out;
  MutexLock lock(&mu_);
  for (const auto& [handle, e] : entries_) {
    if (e.published && e.tensor->principal == principal && e.tensor->expires > now) {
      out.push_back(e.tensor);
    }
  }
  return out;
}

uint64_t TensorStore::PrincipalBytes(const std::string& principal) const {
  MutexLock lock(&mu_);
  auto it = principal_bytes_.find(principal);
  return it == principal_bytes_.end() ? 0 : it->second;
}

size_t TensorStore::Sweep() {
  const absl::Time now = Now();
  std::vector<std::shared_ptr<const ResidentTensor>> dropped;  // freed outside mu_
  MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->second.tensor->expires <= now) {
      dropped.push_back(it->second.tensor);
      EraseLocked(it);
      ++stats_.expired;
    }
    it = next;
  }
  return dropped.size();
}

void TensorStore::SweepLoop() {
  mu_.Lock();
  while (!stopping_) {
    wake_.WaitFor(&mu_, options_.sweep_interval);
    if (stopping_) break;
    mu_.Unlock();
    Sweep();
    mu_.Lock();
  }
  mu_.Unlock();
}

TensorStoreStats TensorStore::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace dmls::store
