#include "server/lifecycle/allocator_tuning.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace dmls::server {

bool OperatorSetThresholds() {
#ifdef __GLIBC__
  // glibc's own names for what TuneAllocator sets: the tunables and their
  // older environment aliases.
  for (const char* alias : {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_",
                            "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"}) {
    if (std::getenv(alias) != nullptr) return true;
  }
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables == nullptr) return false;
  for (const char* name : {"glibc.malloc.trim_threshold", "glibc.malloc.mmap_threshold",
                           "glibc.malloc.top_pad", "glibc.malloc.mmap_max"}) {
    if (absl::StrContains(tunables, name)) return true;
  }
#endif
  return false;
}

std::string TuneAllocator() {
#ifdef __GLIBC__
  if (OperatorSetThresholds()) return "malloc thresholds as the environment sets them";
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
