#!/bin/bash
# Stop 24, visit part a: correctness of b6e32e1 on the GPU (corpus + MVN tests).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
b=.gpu/now
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; cat $b/STAGED_FROM; } > "$OUT/machine.log" 2>&1
cat "$OUT/machine.log"
start=$(date +%s)
DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data \
  timeout 400 bash -c "LD_LIBRARY_PATH=$rt $b/tests/conformance/conformance_gpu_test" > "$OUT/conformance_gpu.log" 2>&1
echo "conformance_gpu_test exit $? in $(( $(date +%s) - start )) s"; grep -E "PASSED|FAILED|tests ran" "$OUT/conformance_gpu.log" | tail -6
for t in mvn_schedule_gpu_test mvn_numerics_gpu_test; do
  s=$(date +%s)
  DMLS_KERNELS_TEST_ADAPTER=gpu timeout 120 bash -c "LD_LIBRARY_PATH=$rt $b/tests/mvn/$t" > "$OUT/$t.log" 2>&1
  echo "$t exit $? in $(( $(date +%s) - s )) s"; grep -E "PASSED|FAILED" "$OUT/$t.log" | tail -3
done
