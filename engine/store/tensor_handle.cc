#include "engine/store/tensor_handle.h"

#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "engine/core/mutex.h"

namespace dmls::store {
namespace {

// System randomness (std::random_device reads the kernel's source on Linux).
uint32_t RandomWord() {
  static Mutex mu;
  static std::random_device device ABSL_GUARDED_BY(mu);
  MutexLock lock(&mu);
  return device();
}

// 16 bits of FNV-1a over `text`: the same in every process (a handle made
// by one replica is checked by another).
uint32_t Check(absl::string_view text) {
  uint32_t hash = 2166136261u;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return (hash ^ (hash >> 16)) & 0xffff;
}

constexpr size_t kBodyDigits = 28;  // instance (8) and randomness (20)

}  // namespace

uint32_t NewInstanceId() { return RandomWord(); }

std::string NewTensorHandle(uint32_t instance) {
  const std::string body = absl::StrFormat("%08x%08x%08x%04x", instance, RandomWord(),
                                           RandomWord(), RandomWord() & 0xffff);
  return absl::StrFormat("t-%s%04x", body, Check(body));
}

std::optional<uint32_t> HandleInstance(absl::string_view handle) {
  if (handle.size() != 2 + kBodyDigits + 4 || handle.substr(0, 2) != "t-") return std::nullopt;
  const absl::string_view body = handle.substr(2, kBodyDigits);
  uint32_t instance = 0, check = 0;
  if (handle.substr(2).find_first_not_of("0123456789abcdef") != absl::string_view::npos ||
      !absl::SimpleHexAtoi(body.substr(0, 8), &instance) ||
      !absl::SimpleHexAtoi(handle.substr(2 + kBodyDigits), &check) || check != Check(body)) {
    return std::nullopt;
  }
  return instance;
}

}  // namespace dmls::store
