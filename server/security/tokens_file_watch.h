// Reloading the bearer tokens file (token_auth.h) while the server runs.
// Two triggers take one path, ReloadTokensAndLog, with the same log lines:
// SIGHUP (POSIX, server/main.cc) and TokensFileWatch, which polls the file
// and works on every platform (Windows has no SIGHUP).
//
// TokensFileWatch: a thread that looks at the file's modification time and
// size every `interval`. When they differ from what it last saw and then
// stay the same for `settle` (so that a file being rewritten is not read
// half-way: an empty tokens file is valid and would refuse every caller),
// it reloads. A file that fails to load (missing, a bad line) keeps the
// tokens in use, is logged as an error once, and is tried again at its next
// change. The time stamp is the file system's: 100 ns on Windows (NTFS,
// Wine), nanoseconds on Linux file systems that keep them; a rewrite that
// keeps both the size and the time stamp is not seen (send SIGHUP, or
// touch the file).
//
// Ownership: shares the TokenAuthenticator and the logger; owns its thread,
// which the destructor stops and joins. Thread-safety: the watch thread is
// the only one that reloads through it; create and destroy on one thread.
#ifndef DMLSERVE_SERVER_SECURITY_TOKENS_FILE_WATCH_H_
#define DMLSERVE_SERVER_SECURITY_TOKENS_FILE_WATCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/core/mutex.h"
#include "server/security/token_auth.h"
#include "spdlog/logger.h"

namespace dmls::server {

// Reloads `tokens` and logs the outcome, prefixed by `trigger` ("SIGHUP",
// "tokens file changed"): info with the token count, or error with the
// cause and "keeping the tokens in use". Returns the reload's status.
absl::Status ReloadTokensAndLog(TokenAuthenticator& tokens,
                                absl::string_view trigger,
                                spdlog::logger& logger);

// What identifies one version of a file: whether it exists, its size and
// its last write time in the file system's own units. Equal stamps are
// taken to be the same contents.
struct FileStamp {
  bool exists = false;
  uint64_t size = 0;
  int64_t write_time = 0;
  bool operator==(const FileStamp& o) const {
    return exists == o.exists && size == o.size && write_time == o.write_time;
  }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
};
FileStamp StampOf(const std::string& path);

struct TokensFileWatchOptions {
  std::string path;  // the tokens file (--auth_tokens_file)
  absl::Duration interval = absl::Seconds(2);
  // How long a changed stamp must stay the same before the file is read.
  absl::Duration settle = absl::Milliseconds(100);
};

class TokensFileWatch {
 public:
  // Starts the thread; the stamp it compares with is taken now (the file as
  // `tokens` last loaded it, when called right after that load).
  TokensFileWatch(std::shared_ptr<TokenAuthenticator> tokens,
                  TokensFileWatchOptions options,
                  std::shared_ptr<spdlog::logger> logger);
  ~TokensFileWatch();
  TokensFileWatch(const TokensFileWatch&) = delete;
  TokensFileWatch& operator=(const TokensFileWatch&) = delete;

  // Reloads attempted so far (successful or not). Thread-safe.
  uint64_t reloads() const;

 private:
  // The thread: polls from `seen`, the stamp of the file as loaded.
  void Run(FileStamp seen);
  // Waits `d` or until stopped; false when stopped.
  bool Sleep(absl::Duration d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<TokenAuthenticator> tokens_;
  const TokensFileWatchOptions options_;
  const std::shared_ptr<spdlog::logger> logger_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t reloads_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_SECURITY_TOKENS_FILE_WATCH_H_
