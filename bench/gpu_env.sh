# Sourced by the GPU-machine scripts (bench/run_*.sh): ../shared/GPU.md step
# 2. The GL/Vulkan loader packages of .gpu/root go into /, every other
# package of .gpu/lib into /tmp/rt (so the machine's own libraries stay
# intact); $rt is where the latter's libraries are, for LD_LIBRARY_PATH.
for f in .gpu/root/*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p /tmp/rt; for f in .gpu/lib/*.deb; do dpkg -x "$f" /tmp/rt; done
export XDG_RUNTIME_DIR=/tmp
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
rt=/tmp/rt/usr/lib/x86_64-linux-gnu
