// Test helper binary: compiles the DXBC file named on the command line with
// libvkd3d-shader. Run with VKD3D_SHADER_DEBUG=trace to get vkd3d's
// disassembly on stderr (a separate process, because vkd3d reads its debug
// level once per process). Exit status 0 when the compile succeeded.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "engine/dxbc/testing/vkd3d_compile.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s shader.dxbc\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const absl::Status s = dmls::gpu::testing::CompileWithVkd3d(blob);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
