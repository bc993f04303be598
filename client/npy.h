// Reader and writer for NumPy .npy files (format versions 1.0 and 2.0).
//
// Only what dmlctl needs: little-endian (or byte-order-free) integer and
// float element types, C order. The element bytes are kept raw, so FLOAT16
// data round-trips bit-exactly without any conversion. Plain value types and
// free functions: thread-compatible.
#ifndef DMLSERVE_CLIENT_NPY_H_
#define DMLSERVE_CLIENT_NPY_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dmls::client {

// One array. `descr` is the NumPy type string, normalised to the
// little-endian form ("<f4", "<f2", "<i1", "<u1", "<i2", "<u2", "<i4",
// "<u4", "<i8", "<u8"). `data` holds product(shape) elements in C order.
// A 0-d array has an empty shape and one element.
struct NpyArray {
  std::string descr;
  std::vector<uint64_t> shape;
  std::string data;

  uint64_t ElementCount() const;
};

// Bytes per element of a normalised descr, or 0 when it is not supported.
uint32_t NpyElementSize(absl::string_view descr);

// Parses the bytes of a .npy file. Rejects big-endian data, Fortran order,
// unsupported types and a data section shorter than the header promises.
absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes);

// Serialises `array` as a version 1.0 file (2.0 when the header needs it).
// Fails when descr is unsupported or data does not match the shape.
absl::StatusOr<std::string> SerializeNpy(const NpyArray& array);

absl::StatusOr<NpyArray> ReadNpyFile(const std::string& path);
absl::Status WriteNpyFile(const std::string& path, const NpyArray& array);

}  // namespace dmls::client

#endif  // DMLSERVE_CLIENT_NPY_H_
