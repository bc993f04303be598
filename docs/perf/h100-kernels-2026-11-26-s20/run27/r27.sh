#!/usr/bin/env bash
# Session 20, run 27: the review fixes (the schedule test through dedicated views; the robustness test counting
# the mismatches its flushed result matches): the four shards (mutants
# of the corpus, huge-value MVN groups compared) on the H100, and the MVN
# schedule test once more.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
export DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data
t() { LD_LIBRARY_PATH=$rt timeout ${2:-150} .gpu/build/$1 2>&1 | grep -vE "fixme|\[info\]" ; }
t tests/robustness/robustness_test 500 > $OUT/robustness.log
t tests/mvn/mvn_schedule_gpu_test > $OUT/schedule.log
cat $OUT/device.txt; grep -hE "compared|^\[  (PASSED|FAILED)|FAILED  \]|OK \]" $OUT/robustness.log | tail -12; grep -hE "^\[  (PASSED|FAILED)" $OUT/schedule.log
