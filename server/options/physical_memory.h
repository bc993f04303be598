#ifndef DMLSERVE_SERVER_OPTIONS_PHYSICAL_MEMORY_H_
#define DMLSERVE_SERVER_OPTIONS_PHYSICAL_MEMORY_H_

#include <cstdint>

namespace dmls::server {

// The machine's physical memory in bytes, or 0 when the operating system
// does not say. POSIX: sysconf pages x page size; Windows:
// GlobalMemoryStatusEx. Thread-safe (no state).
uint64_t PhysicalMemoryBytes();

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_OPTIONS_PHYSICAL_MEMORY_H_
