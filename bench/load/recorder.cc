#include "bench/load/recorder.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace dmls::load {

std::string StatusCodeName(int code) {
  static constexpr const char* kNames[] = {
      "OK",
      "CANCELLED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED",
      "NOT_FOUND",
      "ALREADY_EXISTS",
      "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
      "ABORTED",
      "OUT_OF_RANGE",
      "UNIMPLEMENTED",
      "INTERNAL",
      "UNAVAILABLE",
      "DATA_LOSS",
      "UNAUTHENTICATED"};
  if (code >= 0 && code < static_cast<int>(std::size(kNames))) {
    return kNames[code];
  }
  return absl::StrCat("CODE_", code);
}

Recorder::Recorder(int64_t window_start_ns, int64_t window_end_ns)
    : window_start_ns_(window_start_ns), window_end_ns_(window_end_ns) {}

void Recorder::Record(const Completion& c) {
  if (c.done_ns < window_start_ns_) return;
  absl::MutexLock lock(&mu_);
  if (c.done_ns >= window_end_ns_) {
    ++late_codes_[c.code];
    return;
  }
  ++requests_;
  ++codes_[c.code];
  if (c.code == 0) {
    ++ok_;
    ok_bytes_in_ += c.bytes_in;
    ok_bytes_out_ += c.bytes_out;
    latency_.Record(c.done_ns - c.due_ns);
    return;
  }
  std::vector<std::string>& messages = messages_[c.code];
  if (messages.size() < kMessagesPerCode &&
      std::find(messages.begin(), messages.end(), c.message) ==
          messages.end()) {
    messages.push_back(c.message);
  }
}

void Recorder::RecordSkipped(int64_t due_ns) {
  if (due_ns < window_start_ns_ || due_ns >= window_end_ns_) return;
  absl::MutexLock lock(&mu_);
  ++skipped_;
}

bool Recorder::WantsCheck(uint64_t limit) {
  absl::MutexLock lock(&mu_);
  if (checks_started_ >= limit) return false;
  ++checks_started_;
  return true;
}

void Recorder::RecordCheck(bool passed, const std::string& message) {
  absl::MutexLock lock(&mu_);
  ++checked_;
  if (passed) return;
  ++check_failures_;
  if (check_messages_.size() < kMessagesPerCode) {
    check_messages_.push_back(message);
  }
}

void Recorder::Fill(Report* r) {
  absl::MutexLock lock(&mu_);
  r->requests = requests_;
  r->ok = ok_;
  r->errors = requests_ - ok_;
  r->skipped = skipped_;
  const double seconds = r->duration_s > 0 ? r->duration_s : 1.0;
  r->ok_per_s = ok_ / seconds;
  r->bytes_in_per_s = ok_bytes_in_ / seconds;
  r->bytes_out_per_s = ok_bytes_out_ / seconds;
  auto ms = [](int64_t ns) { return ns / 1e6; };
  r->p50_ms = ms(latency_.Percentile(50));
  r->p90_ms = ms(latency_.Percentile(90));
  r->p99_ms = ms(latency_.Percentile(99));
  r->p999_ms = ms(latency_.Percentile(99.9));
  r->mean_ms = latency_.mean() / 1e6;
  r->min_ms = ms(latency_.min());
  r->max_ms = ms(latency_.max());
  r->status_counts.clear();
  for (const auto& [code, n] : codes_) r->status_counts[StatusCodeName(code)] = n;
  r->late_status_counts.clear();
  for (const auto& [code, n] : late_codes_) {
    r->late_status_counts[StatusCodeName(code)] = n;
  }
  r->first_errors.clear();
  for (const auto& [code, messages] : messages_) {
    r->first_errors[StatusCodeName(code)] = messages;
  }
  r->checked = checked_;
  r->check_failures = check_failures_;
  r->check_messages = check_messages_;
}

}  // namespace dmls::load
