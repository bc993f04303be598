#include "server/lifecycle/allocator_tuning.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace dmls::server {

std::string TuneAllocator() {
#ifdef __GLIBC__
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && absl::StrContains(tunables, "glibc.malloc.")) {
    return "malloc thresholds as GLIBC_TUNABLES sets them";
  }
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes)) == 0 ||
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThresholdBytes)) == 0) {
    return "malloc thresholds left at glibc's defaults (mallopt refused)";
  }
  return absl::StrCat("malloc: trim threshold ", kTrimThresholdBytes >> 20,
                      " MiB, mmap threshold ", kMmapThresholdBytes >> 20, " MiB");
#else
  return "";
#endif
}

}  // namespace dmls::server
