#include "engine/core/thread_name.h"

#include <string>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace dmls {

void SetThreadName(absl::string_view name) {
#if defined(__linux__)
  // The kernel takes at most 15 bytes and a NUL; longer names fail whole.
  const std::string n(name.substr(0, 15));
  pthread_setname_np(pthread_self(), n.c_str());
#else
  (void)name;
#endif
}

}  // namespace dmls
