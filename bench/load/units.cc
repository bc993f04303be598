#include "bench/load/units.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dmls::load {

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  const absl::string_view original = text;
  text = absl::StripAsciiWhitespace(text);
  size_t digits = 0;
  while (digits < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  uint64_t value = 0;
  if (digits == 0 || !absl::SimpleAtoi(text.substr(0, digits), &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad byte size '", original, "' (want e.g. 64KiB)"));
  }
  const std::string suffix = absl::AsciiStrToLower(text.substr(digits));
  int shift = 0;
  if (suffix.empty() || suffix == "b") {
    shift = 0;
  } else if (suffix == "k" || suffix == "kib" || suffix == "kb") {
    shift = 10;
  } else if (suffix == "m" || suffix == "mib" || suffix == "mb") {
    shift = 20;
  } else if (suffix == "g" || suffix == "gib" || suffix == "gb") {
    shift = 30;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("bad byte size suffix in '", original,
                     "' (want B, KiB, MiB or GiB)"));
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) {
    return absl::InvalidArgumentError(
        absl::StrCat("byte size '", original, "' is too large"));
  }
  return value << shift;
}

std::string FormatByteSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrCat(bytes, kUnits[unit]);
}

std::string FormatByteRate(double bytes_per_second) {
  static constexpr const char* kUnits[] = {"B/s", "kB/s", "MB/s", "GB/s",
                                           "TB/s"};
  int unit = 0;
  while (unit < 4 && bytes_per_second >= 1000.0) {
    bytes_per_second /= 1000.0;
    ++unit;
  }
  return absl::StrFormat("%.3g %s", bytes_per_second, kUnits[unit]);
}

}  // namespace dmls::load
