// The one place engine/directml includes DirectML.h from (DirectX-Headers
// 1.614, DML_TARGET_VERSION 0x6400).
//
// Linux: through DirectX-Headers' WSL adapter, for the portable operator
// mapping (op_mapping.h) and its test only; nothing on Linux calls
// DirectML.dll.
//
// Windows: after engine/d3d12/platform.h (windows.h, d3d12.h). MinGW needs
// two accommodations (docs/WINDOWS.md): DirectML.h's SAL annotations that
// MinGW's sal.h lacks are defined empty, and, since GCC ignores
// __declspec(uuid), the interface ids __uuidof needs are declared with
// __CRT_UUID_DECL (the values are DirectML.h's DML_DECLARE_INTERFACE
// strings; a wrong one makes DMLCreateDevice or a Create* call fail with
// E_NOINTERFACE, which dml_engine_test would show).
#ifndef DMLSERVE_ENGINE_DIRECTML_DML_API_H_
#define DMLSERVE_ENGINE_DIRECTML_DML_API_H_

#ifdef _WIN32
#include "engine/d3d12/platform.h"
#if defined(__MINGW32__)
#ifndef _Maybenull_
#define _Maybenull_
#endif
#ifndef _Outptr_opt_result_maybenull_
#define _Outptr_opt_result_maybenull_
#endif
#ifndef _Field_size_
#define _Field_size_(x)
#endif
#ifndef _Field_size_opt_
#define _Field_size_opt_(x)
#endif
#ifndef _Field_size_bytes_
#define _Field_size_bytes_(x)
#endif
#ifndef _Field_size_bytes_opt_
#define _Field_size_bytes_opt_(x)
#endif
#ifndef _In_reads_
#define _In_reads_(x)
#endif
#ifndef _In_reads_opt_
#define _In_reads_opt_(x)
#endif
#ifndef _In_reads_bytes_
#define _In_reads_bytes_(x)
#endif
#ifndef _In_reads_bytes_opt_
#define _In_reads_bytes_opt_(x)
#endif
#ifndef _Out_writes_bytes_
#define _Out_writes_bytes_(x)
#endif
#ifndef _Out_writes_bytes_opt_
#define _Out_writes_bytes_opt_(x)
#endif
#ifndef _Out_writes_
#define _Out_writes_(x)
#endif
#ifndef _In_range_
#define _In_range_(a, b)
#endif
#ifndef _COM_Outptr_
#define _COM_Outptr_
#endif
#ifndef _COM_Outptr_opt_
#define _COM_Outptr_opt_
#endif
#ifndef _Inout_
#define _Inout_
#endif
#endif  // __MINGW32__
#ifndef DML_TARGET_VERSION_USE_LATEST
#define DML_TARGET_VERSION_USE_LATEST 1
#endif
#include <DirectML.h>
#if defined(__MINGW32__)
__CRT_UUID_DECL(IDMLDevice, 0x6dbd6437, 0x96fd, 0x423f, 0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f)
__CRT_UUID_DECL(IDMLOperator, 0x26caae7a, 0x3081, 0x4633, 0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d)
__CRT_UUID_DECL(IDMLCompiledOperator, 0x6b15e56a, 0xbf5c, 0x4902, 0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4)
__CRT_UUID_DECL(IDMLOperatorInitializer, 0x427c1113, 0x435c, 0x469c, 0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13)
__CRT_UUID_DECL(IDMLBindingTable, 0x29c687dc, 0xde74, 0x4e3b, 0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc)
__CRT_UUID_DECL(IDMLCommandRecorder, 0xe6857a76, 0x2e3e, 0x4fdd, 0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53)
#endif  // __MINGW32__
#else   // !_WIN32
#include <wsl/winadapter.h>
#ifndef DML_TARGET_VERSION_USE_LATEST
#define DML_TARGET_VERSION_USE_LATEST 1
#endif
#include <DirectML.h>
#endif  // _WIN32

#endif  // DMLSERVE_ENGINE_DIRECTML_DML_API_H_
