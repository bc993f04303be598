#include "bench/bench_options.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace dmls::bench {

bool ParseSize(absl::string_view s, uint64_t* out) {
  uint64_t mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) mult = 1ull << 10;
  if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) mult = 1ull << 20;
  if (!s.empty() && (s.back() == 'G' || s.back() == 'g')) mult = 1ull << 30;
  if (mult != 1) s.remove_suffix(1);
  uint64_t v = 0;
  if (!absl::SimpleAtoi(std::string(s), &v) || v == 0) return false;
  *out = v * mult;
  return true;
}

std::string FormatSize(uint64_t n) {
  static constexpr struct {
    int shift;
    char suffix;
  } kUnits[] = {{30, 'G'}, {20, 'M'}, {10, 'K'}};
  for (const auto& u : kUnits) {
    const uint64_t unit = 1ull << u.shift;
    if (n != 0 && n % unit == 0) return absl::StrCat(n / unit, std::string(1, u.suffix));
  }
  return absl::StrCat(n);
}

absl::StatusOr<std::vector<uint64_t>> ParseSizeList(absl::string_view text) {
  std::vector<uint64_t> sizes;
  for (absl::string_view s : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    uint64_t n;
    if (!ParseSize(s, &n)) {
      return absl::InvalidArgumentError(absl::StrCat("bad size '", s, "'"));
    }
    sizes.push_back(n);
  }
  return sizes;
}

std::string FormatSizeList(const std::vector<uint64_t>& sizes) {
  return absl::StrJoin(sizes, ",", [](std::string* out, uint64_t n) {
    out->append(FormatSize(n));
  });
}

absl::StatusOr<std::vector<uint32_t>> ParseMaxBatchList(absl::string_view text) {
  std::vector<uint32_t> values;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--engine_max_batch=", text, ": a list of positive integers ('",
          part, "' is not one)"));
    }
    values.push_back(v);
  }
  return values;
}

absl::StatusOr<DataType> ParseDataType(absl::string_view text) {
  if (text == "float32") return DataType::kFloat32;
  if (text == "float16") return DataType::kFloat16;
  return absl::InvalidArgumentError("--data_type: float32 or float16");
}

absl::string_view DataTypeFlagValue(DataType type) {
  return type == DataType::kFloat16 ? "float16" : "float32";
}

}  // namespace dmls::bench
