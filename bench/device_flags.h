// ParseDeviceFlag: the --device and --adapter flags of a hand-parsed GPU
// benchmark command line (dmls_accuracy; dmls_bench has absl flags,
// bench_flags.cc). Header-only; thread-safe.
#ifndef DMLSERVE_BENCH_DEVICE_FLAGS_H_
#define DMLSERVE_BENCH_DEVICE_FLAGS_H_

#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "engine/d3d12/device.h"

namespace dmls::bench {

// Applies `key`=`value` to `device` when key is --device (auto, gpu,
// software) or --adapter (an index). Returns false when the key is neither
// (`*ok` untouched), true when it was one of them, with `*ok` false (and a
// message on stderr) for a bad value.
inline bool ParseDeviceFlag(const std::string& key, const std::string& value,
                            d3d12::DeviceOptions* device, bool* ok) {
  if (key == "--device") {
    absl::StatusOr<d3d12::DeviceOptions::Kind> kind = d3d12::ParseDeviceKind(value);
    if (!kind.ok()) {
      std::fprintf(stderr, "%s\n", std::string(kind.status().message()).c_str());
      *ok = false;
    } else {
      device->kind = *kind;
    }
    return true;
  }
  if (key == "--adapter") {
    int index = 0;
    if (!absl::SimpleAtoi(value, &index)) {
      *ok = false;
    } else {
      device->adapter_index = index;
    }
    return true;
  }
  return false;
}

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_DEVICE_FLAGS_H_
