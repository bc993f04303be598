#include "server/testing/temp_file.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dmls::server::testing {

TempFile::TempFile(absl::string_view prefix, absl::string_view text)
    : path_(absl::StrCat(::testing::TempDir(), "/", prefix, "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
  Write(text);
}

TempFile::~TempFile() { std::remove(path_.c_str()); }

void TempFile::Write(absl::string_view text) const {
  std::ofstream(path_, std::ios::binary) << text;
}

}  // namespace dmls::server::testing
