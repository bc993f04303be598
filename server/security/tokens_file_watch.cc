#include "server/security/tokens_file_watch.h"

#include <utility>

#ifdef _WIN32
#include <windows.h>
#else
#include <sys/stat.h>
#endif

#include "engine/core/thread_name.h"

namespace dmls::server {

absl::Status ReloadTokensAndLog(TokenAuthenticator& tokens,
                                absl::string_view trigger,
                                spdlog::logger& logger) {
  absl::Status reloaded = tokens.Reload();
  if (reloaded.ok()) {
    logger.info("{}: reloaded the tokens file ({} tokens)", std::string(trigger),
                tokens.token_count());
  } else {
    logger.error("{}: {}; keeping the tokens in use", std::string(trigger),
                 std::string(reloaded.message()));
  }
  return reloaded;
}

FileStamp StampOf(const std::string& path) {
  FileStamp stamp;
#ifdef _WIN32
  // std::filesystem (MinGW's libstdc++) and _stat64 give whole seconds.
  WIN32_FILE_ATTRIBUTE_DATA data;
  if (!GetFileAttributesExA(path.c_str(), GetFileExInfoStandard, &data)) {
    return stamp;
  }
  stamp.exists = true;
  stamp.size = (static_cast<uint64_t>(data.nFileSizeHigh) << 32) | data.nFileSizeLow;
  stamp.write_time = static_cast<int64_t>(
      (static_cast<uint64_t>(data.ftLastWriteTime.dwHighDateTime) << 32) |
      data.ftLastWriteTime.dwLowDateTime);
#else
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return stamp;
  stamp.exists = true;
  stamp.size = static_cast<uint64_t>(st.st_size);
  stamp.write_time = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                     st.st_mtim.tv_nsec;
#endif
  return stamp;
}

TokensFileWatch::TokensFileWatch(std::shared_ptr<TokenAuthenticator> tokens,
                                 TokensFileWatchOptions options,
                                 std::shared_ptr<spdlog::logger> logger)
    : tokens_(std::move(tokens)),
      options_(std::move(options)),
      logger_(std::move(logger)) {
  const FileStamp loaded = StampOf(options_.path);
  thread_ = std::thread([this, loaded] {
    SetThreadName("dmls-tokens");
    Run(loaded);
  });
}

void TokensFileWatch::Run(FileStamp seen) {
  MutexLock lock(&mu_);
  while (Sleep(options_.interval)) {
    const FileStamp now = StampOf(options_.path);
    if (now == seen) continue;
    // Still being written when it changes again: look at the next turn.
    if (!Sleep(options_.settle)) break;
    if (StampOf(options_.path) != now) continue;
    seen = now;
    ++reloads_;
    ReloadTokensAndLog(*tokens_, "tokens file changed", *logger_).IgnoreError();
  }
}

TokensFileWatch::~TokensFileWatch() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    cv_.Signal();
  }
  thread_.join();
}

bool TokensFileWatch::Sleep(absl::Duration d) {
  const absl::Time until = absl::Now() + d;
  while (!stop_ && absl::Now() < until) cv_.WaitUntil(&mu_, until);
  return !stop_;
}

uint64_t TokensFileWatch::reloads() const {
  MutexLock lock(&mu_);
  return reloads_;
}

}  // namespace dmls::server
