#include "client/read_file.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace dmls::client {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

}  // namespace dmls::client
