// Report: the result of one dmls_load run, as a human table (stdout) and
// as JSON (--json) with the same fields. Plain value type;
// thread-compatible.
#ifndef DMLSERVE_BENCH_LOAD_REPORT_H_
#define DMLSERVE_BENCH_LOAD_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dmls::load {

struct Report {
  // What ran.
  std::string target;
  std::string rpc;   // "unary" or "stream"
  std::string mode;  // "closed" (concurrency) or "open" (rate)
  uint32_t concurrency = 0;       // closed loop
  double rate = 0;                // open loop: requests/s asked for
  uint32_t max_outstanding = 0;   // open loop
  uint32_t connections = 0;
  uint32_t streams = 0;           // stream only
  std::string payload;            // "celu DATA_TYPE_FLOAT32 [256]"
  uint64_t request_bytes = 0;     // payload bytes per request
  uint64_t expected_output_bytes = 0;
  double warmup_s = 0;
  double duration_s = 0;          // the measured window

  // What happened in the window (requests completing inside it).
  uint64_t requests = 0;  // answered, any status
  uint64_t ok = 0;
  uint64_t errors = 0;    // requests - ok
  uint64_t skipped = 0;   // open loop: due while max_outstanding were out
  double ok_per_s = 0;    // "rps": successful requests per second
  double bytes_in_per_s = 0;   // payload bytes of successful requests
  double bytes_out_per_s = 0;  // output bytes of successful responses

  // Latency of the successful requests (due -> answer), milliseconds.
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0;
  double mean_ms = 0, min_ms = 0, max_ms = 0;

  // Status name ("OK", "RESOURCE_EXHAUSTED", ...) -> count.
  std::map<std::string, uint64_t> status_counts;
  // Status name -> its first distinct error messages (a few).
  std::map<std::string, std::vector<std::string>> first_errors;

  // Requests answered after the window, during the drain, by status, and
  // how long the drain took (the end of the window to the last answer).
  // DEADLINE_EXCEEDED here means the server never answered in --timeout.
  std::map<std::string, uint64_t> late_status_counts;
  double drain_s = 0;

  // Stream responses whose request_id matched no request.
  uint64_t unmatched_responses = 0;
  // --check: responses validated and those that failed, with messages.
  uint64_t checked = 0;
  uint64_t check_failures = 0;
  std::vector<std::string> check_messages;
};

// A few aligned lines for a person.
std::string FormatReportTable(const Report& report);

// One JSON object (pretty-printed), the Report's fields by the names above
// ("latency_ms": {"p50": ..}).
std::string ReportToJson(const Report& report);

// `text` as a JSON string literal, quotes included.
std::string JsonQuote(const std::string& text);

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_REPORT_H_
