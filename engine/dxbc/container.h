// DXBC container assembly: wraps a SM 5.0 token stream (SHEX) with empty
// ISGN/OSGN chunks (compute shaders have no signature elements) in a `DXBC`
// container, laid out placeholder-first and then checksummed. Pure function;
// thread-safe.
#ifndef DMLSERVE_ENGINE_DXBC_CONTAINER_H_
#define DMLSERVE_ENGINE_DXBC_CONTAINER_H_

#include <cstdint>
#include <vector>

namespace dmls::gpu {

// `tokens` is the complete program: version token, length token, body.
std::vector<uint8_t> BuildContainer(const std::vector<uint32_t>& tokens);

// Recomputes the checksum of an existing container in place (bytes 4..19).
// Requires size >= 20.
void StampChecksum(std::vector<uint8_t>& container);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_CONTAINER_H_
