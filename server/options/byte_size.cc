#include "server/options/byte_size.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace dmls::server {
namespace {

// The suffixes, largest first.
constexpr std::array<std::pair<char, int>, 4> kSuffixes = {
    {{'T', 40}, {'G', 30}, {'M', 20}, {'K', 10}}};

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  absl::string_view digits = text;
  int shift = 0;
  if (!digits.empty()) {
    for (const auto& [suffix, bits] : kSuffixes) {
      if (digits.back() == suffix) {
        shift = bits;
        digits.remove_suffix(1);
        break;
      }
    }
  }
  uint64_t value = 0;
  // SimpleAtoi takes a sign and spaces; a byte count is digits only.
  const bool only_digits =
      !digits.empty() && digits.find_first_not_of("0123456789") == absl::string_view::npos;
  if (!only_digits || !absl::SimpleAtoi(digits, &value) || value > (UINT64_MAX >> shift)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a byte count is digits with an optional K, M, G or T (binary) "
        "suffix, such as 8G, up to 2^64 - 1 bytes; got \"", text, "\""));
  }
  return value << shift;
}

std::string FormatByteSize(uint64_t bytes) {
  for (const auto& [suffix, bits] : kSuffixes) {
    const uint64_t unit = uint64_t{1} << bits;
    if (bytes != 0 && bytes % unit == 0) return absl::StrCat(bytes / unit, std::string(1, suffix));
  }
  return absl::StrCat(bytes);
}

bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error) {
  absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    *error = std::string(bytes.status().message());
    return false;
  }
  size->bytes = *bytes;
  return true;
}

std::string AbslUnparseFlag(ByteSize size) { return FormatByteSize(size.bytes); }

}  // namespace dmls::server
