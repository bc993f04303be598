// The one place that includes DirectX-Headers' tokenized program format
// header (official SM4/SM5 token encoding macros). It needs <winapifamily.h>
// from DirectX-Headers' wsl/stubs on Linux (PkgConfig::DirectXHeaders).
#ifndef DMLSERVE_ENGINE_DXBC_TPF_H_
#define DMLSERVE_ENGINE_DXBC_TPF_H_

#include <directx/D3D12TokenizedProgramFormat.hpp>

#endif  // DMLSERVE_ENGINE_DXBC_TPF_H_
