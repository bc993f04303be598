#!/usr/bin/env bash
# On the GPU machine (../shared/GPU.md): the activation accuracy sweep
# (dmls_accuracy, FLOAT32 and every finite FLOAT16) and the accuracy
# regression tests on the hardware adapter. Logs under $OUT; see
# docs/ACCURACY.md for what the columns mean.
#   bash bench/run_accuracy_gpu.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
B=.gpu/build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/machine.log"
ours $B/bench/accuracy/dmls_accuracy --device=gpu 2>&1 | tee "$OUT/accuracy_float32.log"
ours $B/bench/accuracy/dmls_accuracy --device=gpu --data_type=float16 2>&1 \
  | tee "$OUT/accuracy_float16.log"
DMLS_KERNELS_TEST_ADAPTER=gpu ours $B/engine/d3d12/d3d12_accuracy_regression_test 2>&1 \
  | tee "$OUT/accuracy_regression_test.log"
