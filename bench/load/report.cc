#include "bench/load/report.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/load/units.h"

namespace dmls::load {
namespace {

// Finite numbers only: JSON has no NaN or inf.
std::string Num(double v) {
  if (!std::isfinite(v)) return "null";
  return absl::StrFormat("%.10g", v);
}

}  // namespace

std::string JsonQuote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

std::string FormatReportTable(const Report& r) {
  std::string load =
      r.mode == "open"
          ? absl::StrFormat("rate %s/s (max %u outstanding)", Num(r.rate),
                            r.max_outstanding)
          : absl::StrFormat("concurrency %u", r.concurrency);
  std::string out = absl::StrFormat(
      "target      %s\n"
      "load        %s, %s, %u connection(s)%s\n"
      "payload     %s, %s in, %s out expected\n"
      "window      %.3g s after %.3g s warm-up\n"
      "requests    %u answered: %u ok, %u errors%s\n"
      "throughput  %.1f ok/s, in %s, out %s\n"
      "latency ms  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
      "(mean %.3f, min %.3f, max %.3f)\n",
      r.target, r.rpc, load, r.connections,
      r.rpc == "stream" ? absl::StrFormat(", %u stream(s)", r.streams) : "",
      r.payload, FormatByteSize(r.request_bytes),
      FormatByteSize(r.expected_output_bytes), r.duration_s, r.warmup_s,
      r.requests, r.ok, r.errors,
      r.mode == "open" ? absl::StrFormat(", %u skipped", r.skipped) : "",
      r.ok_per_s, FormatByteRate(r.bytes_in_per_s),
      FormatByteRate(r.bytes_out_per_s), r.p50_ms, r.p90_ms, r.p99_ms,
      r.p999_ms, r.mean_ms, r.min_ms, r.max_ms);
  std::vector<std::string> counts;
  for (const auto& [name, n] : r.status_counts) {
    counts.push_back(absl::StrCat(name, " ", n));
  }
  absl::StrAppend(&out, "status      ",
                  counts.empty() ? "-" : absl::StrJoin(counts, ", "), "\n");
  for (const auto& [name, messages] : r.first_errors) {
    for (const std::string& m : messages) {
      absl::StrAppend(&out, "error       ", name, ": ", m, "\n");
    }
  }
  std::vector<std::string> late;
  for (const auto& [name, n] : r.late_status_counts) {
    late.push_back(absl::StrCat(name, " ", n));
  }
  absl::StrAppend(&out, "drain       ", absl::StrFormat("%.3g s", r.drain_s),
                  late.empty() ? "" : absl::StrCat(", answered then: ",
                                                   absl::StrJoin(late, ", ")),
                  "\n");
  if (r.unmatched_responses > 0) {
    absl::StrAppend(&out, "unmatched   ", r.unmatched_responses,
                    " responses with an unknown request_id\n");
  }
  if (r.checked > 0 || r.check_failures > 0) {
    absl::StrAppend(&out, "check       ", r.checked, " checked, ",
                    r.check_failures, " failed\n");
    for (const std::string& m : r.check_messages) {
      absl::StrAppend(&out, "check       ", m, "\n");
    }
  }
  return out;
}

std::string ReportToJson(const Report& r) {
  std::vector<std::string> f;
  auto add = [&f](const char* name, const std::string& value) {
    f.push_back(absl::StrCat("  ", JsonQuote(name), ": ", value));
  };
  add("target", JsonQuote(r.target));
  add("rpc", JsonQuote(r.rpc));
  add("mode", JsonQuote(r.mode));
  add("concurrency", absl::StrCat(r.concurrency));
  add("rate", Num(r.rate));
  add("max_outstanding", absl::StrCat(r.max_outstanding));
  add("connections", absl::StrCat(r.connections));
  add("streams", absl::StrCat(r.streams));
  add("payload", JsonQuote(r.payload));
  add("request_bytes", absl::StrCat(r.request_bytes));
  add("expected_output_bytes", absl::StrCat(r.expected_output_bytes));
  add("warmup_s", Num(r.warmup_s));
  add("duration_s", Num(r.duration_s));
  add("requests", absl::StrCat(r.requests));
  add("ok", absl::StrCat(r.ok));
  add("errors", absl::StrCat(r.errors));
  add("skipped", absl::StrCat(r.skipped));
  add("ok_per_s", Num(r.ok_per_s));
  add("bytes_in_per_s", Num(r.bytes_in_per_s));
  add("bytes_out_per_s", Num(r.bytes_out_per_s));
  add("latency_ms",
      absl::StrFormat("{\"p50\": %s, \"p90\": %s, \"p99\": %s, \"p99.9\": %s, "
                      "\"mean\": %s, \"min\": %s, \"max\": %s}",
                      Num(r.p50_ms), Num(r.p90_ms), Num(r.p99_ms),
                      Num(r.p999_ms), Num(r.mean_ms), Num(r.min_ms),
                      Num(r.max_ms)));
  std::vector<std::string> counts;
  for (const auto& [name, n] : r.status_counts) {
    counts.push_back(absl::StrCat(JsonQuote(name), ": ", n));
  }
  add("status_counts", absl::StrCat("{", absl::StrJoin(counts, ", "), "}"));
  std::vector<std::string> errors;
  for (const auto& [name, messages] : r.first_errors) {
    std::vector<std::string> quoted;
    for (const std::string& m : messages) quoted.push_back(JsonQuote(m));
    errors.push_back(absl::StrCat(JsonQuote(name), ": [",
                                  absl::StrJoin(quoted, ", "), "]"));
  }
  add("first_errors", absl::StrCat("{", absl::StrJoin(errors, ", "), "}"));
  std::vector<std::string> late;
  for (const auto& [name, n] : r.late_status_counts) {
    late.push_back(absl::StrCat(JsonQuote(name), ": ", n));
  }
  add("late_status_counts", absl::StrCat("{", absl::StrJoin(late, ", "), "}"));
  add("drain_s", Num(r.drain_s));
  add("unmatched_responses", absl::StrCat(r.unmatched_responses));
  add("checked", absl::StrCat(r.checked));
  add("check_failures", absl::StrCat(r.check_failures));
  std::vector<std::string> checks;
  for (const std::string& m : r.check_messages) checks.push_back(JsonQuote(m));
  add("check_messages", absl::StrCat("[", absl::StrJoin(checks, ", "), "]"));
  return absl::StrCat("{\n", absl::StrJoin(f, ",\n"), "\n}\n");
}

}  // namespace dmls::load
