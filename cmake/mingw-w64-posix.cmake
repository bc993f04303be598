# CMake toolchain file: Windows x86-64 with Debian's MinGW-w64 GCC, posix
# threads flavour (std::thread/std::mutex through winpthreads).
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-posix.cmake \
#         -DCMAKE_PREFIX_PATH=<prefix deploy/windows/build-deps.sh made> ...
#
# Executables are linked -static: libstdc++, libgcc and winpthreads go into
# each .exe, so a run needs no MinGW DLL beside it (Wine's or Windows' own
# system DLLs only: d3d12, dxgi, ws2_32, ...).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(DMLS_MINGW_TRIPLE x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${DMLS_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${DMLS_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${DMLS_MINGW_TRIPLE}-windres)
set(CMAKE_AR ${DMLS_MINGW_TRIPLE}-gcc-ar-posix CACHE FILEPATH "")
set(CMAKE_RANLIB ${DMLS_MINGW_TRIPLE}-gcc-ranlib-posix CACHE FILEPATH "")

# Look for libraries and headers in the MinGW sysroot and in the prefixes
# named by CMAKE_PREFIX_PATH / CMAKE_FIND_ROOT_PATH, never in the host's
# /usr (glibc headers must not reach a Windows compile). Programs (protoc,
# grpc_cpp_plugin) come from the host.
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${DMLS_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# Big objects: gRPC and the engine's test binaries exceed COFF's 2^15
# sections in some translation units.
set(CMAKE_C_FLAGS_INIT "-Wa,-mbig-obj")
set(CMAKE_CXX_FLAGS_INIT "-Wa,-mbig-obj")

# Windows system libraries at the end of every link line: the static
# OpenSSL (libcrypto's BIO sockets, crypt32 certificate store) and civetweb
# of the server's prefix come after the -lws2_32 that gRPC's targets put
# earlier, and a static archive's references resolve only against what
# follows it. The rest is CMake's default list for MinGW.
foreach(_dmls_lang C CXX)
  set(CMAKE_${_dmls_lang}_STANDARD_LIBRARIES
      "-lws2_32 -lcrypt32 -liphlpapi -lbcrypt -lkernel32 -luser32 -lgdi32 -lwinspool -lshell32 -lole32 -loleaut32 -luuid -lcomdlg32 -ladvapi32"
      CACHE STRING "" FORCE)
endforeach()
