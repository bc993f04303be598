// TempFile: a file of the running test in its temp directory, for tests of
// code that reads files (tokens files, TLS material). Test-only.
#ifndef DMLSERVE_SERVER_TESTING_TEMP_FILE_H_
#define DMLSERVE_SERVER_TESTING_TEMP_FILE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace dmls::server::testing {

// ::testing::TempDir()/PREFIX_TESTNAME, written with `text` at once and
// removed when the TempFile goes. Thread-compatible.
class TempFile {
 public:
  TempFile(absl::string_view prefix, absl::string_view text);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }
  // Replaces the contents (binary: the size is text.size() on Windows too).
  void Write(absl::string_view text) const;

 private:
  std::string path_;
};

}  // namespace dmls::server::testing

#endif  // DMLSERVE_SERVER_TESTING_TEMP_FILE_H_
