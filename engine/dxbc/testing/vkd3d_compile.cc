#include "engine/dxbc/testing/vkd3d_compile.h"

#include <vkd3d_shader.h>

#include "absl/strings/str_cat.h"

namespace dmls::gpu::testing {

absl::Status CompileWithVkd3d(const std::vector<uint8_t>& dxbc) {
  vkd3d_shader_compile_info info = {};
  info.type = VKD3D_SHADER_STRUCTURE_TYPE_COMPILE_INFO;
  info.source.code = dxbc.data();
  info.source.size = dxbc.size();
  info.source_type = VKD3D_SHADER_SOURCE_DXBC_TPF;
  info.target_type = VKD3D_SHADER_TARGET_SPIRV_BINARY;
  info.log_level = VKD3D_SHADER_LOG_WARNING;
  vkd3d_shader_code spirv = {};
  char* messages = nullptr;
  const int rc = vkd3d_shader_compile(&info, &spirv, &messages);
  std::string text = messages ? messages : "";
  vkd3d_shader_free_messages(messages);
  if (rc < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("vkd3d_shader_compile failed: ", rc, " ", text));
  }
  vkd3d_shader_free_shader_code(&spirv);
  return absl::OkStatus();
}

}  // namespace dmls::gpu::testing
