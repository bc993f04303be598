set -uo pipefail
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
B=.gpu/build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/machine.log"
ours .gpu/before/dmls_accuracy --device=gpu > "$OUT/accuracy_before_float32.log" 2>&1
ours .gpu/before/dmls_accuracy --device=gpu --data_type=float16 > "$OUT/accuracy_before_float16.log" 2>&1
bash bench/run_accuracy_gpu.sh > /dev/null 2>&1
{ DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data ours $B/tests/conformance/conformance_gpu_test 2>&1 | tail -5
  DMLS_KERNELS_TEST_ADAPTER=gpu ours $B/engine/dxbc/dxbc_view_base_gpu_test 2>&1 | tail -3
  DMLS_KERNELS_TEST_ADAPTER=gpu ours $B/engine/d3d12/d3d12_operators_test 2>&1 | tail -5; } > "$OUT/gpu_tests.log" 2>&1
bash bench/run_fp16_gpu.sh > "$OUT/fp16_run.log" 2>&1
tail -3 "$OUT"/accuracy_*.log "$OUT/gpu_tests.log"
