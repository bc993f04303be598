#include "engine/core/payload.h"

#include <cstring>

namespace dmls {

Payload Payload::Borrowed(absl::InlinedVector<std::string_view, 2> ranges,
                          std::shared_ptr<const void> owner) {
  Payload p;
  for (std::string_view r : ranges) {
    if (r.empty()) continue;
    p.borrowed_size_ += r.size();
    p.ranges_.push_back(r);
  }
  p.owner_ = std::move(owner);
  return p;
}

size_t Payload::size() const { return owner_ ? borrowed_size_ : owned_.size(); }

std::string_view Payload::contiguous() const {
  if (!owner_) return owned_;
  return ranges_.empty() ? std::string_view() : ranges_.front();
}

absl::InlinedVector<std::string_view, 2> Payload::ranges() const {
  if (!owner_) return {std::string_view(owned_)};
  return ranges_;
}

void Payload::CopyTo(void* dst) const {
  char* out = static_cast<char*>(dst);
  if (!owner_) {
    if (!owned_.empty()) std::memcpy(out, owned_.data(), owned_.size());
    return;
  }
  for (std::string_view r : ranges_) {
    std::memcpy(out, r.data(), r.size());
    out += r.size();
  }
}

std::string_view Payload::Flatten(std::string* scratch) const {
  if (is_contiguous()) return contiguous();
  scratch->resize(borrowed_size_);
  CopyTo(scratch->data());
  return *scratch;
}

std::string Payload::ToString() const {
  std::string s;
  return std::string(Flatten(&s));
}

std::string Payload::TakeString() {
  std::string s;
  if (!owner_) {
    s = std::move(owned_);
  } else {
    s.resize(borrowed_size_);
    CopyTo(s.data());
  }
  clear();
  return s;
}

std::string& Payload::mutable_string() {
  if (owner_) owned_ = TakeString();
  return owned_;
}

void Payload::clear() {
  owned_.clear();
  ranges_.clear();
  owner_.reset();
  borrowed_size_ = 0;
}

bool operator==(const Payload& a, std::string_view b) {
  if (a.size() != b.size()) return false;
  size_t at = 0;
  for (std::string_view r : a.ranges()) {
    if (b.substr(at, r.size()) != r) return false;
    at += r.size();
  }
  return true;
}

}  // namespace dmls
