# Sourced by deploy/windows/run-tests.sh and run-server.sh: prepares and
# exports the environment that runs dmlserve's Windows binaries under
# Debian's Wine on lavapipe (see run-tests.sh for why each part is there).
#
#   source deploy/windows/wine-env.sh   # then: xvfb-run -a wine64 foo.exe
#
# Installs wine64, xvfb and xauth when missing (root). Unpacks Mesa 25's
# lavapipe under $DMLS_WIN_CACHE/mesa25 and creates the Wine prefix
# $DMLS_WIN_CACHE/wineprefix on first use. Returns non-zero on failure.

_dmls_cache="${DMLS_WIN_CACHE:-$HOME/.cache/dmlserve-win}"

_dmls_wine_setup() {
  local need=()
  [[ -x /usr/lib/wine/wine64 ]] || need+=(wine64)
  command -v xvfb-run >/dev/null || need+=(xvfb xauth)
  if [[ ${#need[@]} -gt 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null || return 1
  fi
  local mesa="$_dmls_cache/mesa25"
  if [[ ! -f "$mesa/lvp.json" ]]; then
    rm -rf "$mesa"; mkdir -p "$mesa/debs"
    (cd "$mesa/debs" && apt-get download -qq mesa-vulkan-drivers/bookworm-backports \
       libdrm2/bookworm-backports libdrm-amdgpu1/bookworm-backports) || return 1
    local f
    for f in "$mesa"/debs/*.deb; do dpkg -x "$f" "$mesa/root" || return 1; done
    # The ICD file names the library by absolute path: point it at ours.
    sed "s#/usr/lib/x86_64-linux-gnu/#$mesa/root/usr/lib/x86_64-linux-gnu/#" \
      "$mesa/root/usr/share/vulkan/icd.d/lvp_icd.json" >"$mesa/lvp.json"
  fi
  export LD_LIBRARY_PATH="$mesa/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export VK_DRIVER_FILES="$mesa/lvp.json" VK_ICD_FILENAMES="$mesa/lvp.json"
  export WINEPREFIX="$_dmls_cache/wineprefix" WINEARCH=win64
  export WINEDEBUG="${WINEDEBUG:--all,err+d3d12}" VKD3D_DEBUG="${VKD3D_DEBUG:-err}"
  # No debugger dialog on a crash, no Mono/Gecko install prompts.
  export WINEDLLOVERRIDES="winedbg.exe=d;mscoree=d;mshtml=d"
  if [[ ! -f "$WINEPREFIX/.dmls-ready" ]]; then
    /usr/lib/wine/wine64 wineboot -i >/dev/null 2>&1 || return 1
    # wined3d's Vulkan renderer: DXGI then describes lavapipe as Vulkan does
    # ("llvmpipe (LLVM ...)", vendor 0x10005, VK_VENDOR_ID_MESA), which
    # engine/d3d12/device.cc counts as a software adapter. The default (GL)
    # renderer guesses a GPU name for it ("NVIDIA GeForce GTX 470").
    /usr/lib/wine/wine64 reg add 'HKCU\Software\Wine\Direct3D' /v renderer \
      /d vulkan /f >/dev/null 2>&1 || return 1
    /usr/lib/wine/wineserver -w
    touch "$WINEPREFIX/.dmls-ready"
  fi
}

_dmls_wine_setup
