set -uo pipefail
R=$OUT/r; mkdir -p $R
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
B=.gpu/build
{ DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data ours $B/tests/conformance/conformance_gpu_test 2>&1 | grep -E "cases passed|FAIL|PASSED|FAILED" | head -40
  DMLS_KERNELS_TEST_ADAPTER=gpu ours $B/engine/dxbc/dxbc_view_base_gpu_test 2>&1 | tail -2
  DMLS_KERNELS_TEST_ADAPTER=gpu ours $B/engine/d3d12/d3d12_operators_test 2>&1 | tail -3
  DMLS_KERNELS_TEST_ADAPTER=gpu DMLS_CONFORMANCE_DATA_DIR=tests/data timeout 200 ours $B/tests/robustness/robustness_test --gtest_filter="*/0:*/1" 2>&1 | grep -E "OK|FAIL|PASSED|compared" | tail -8
} > $R/gpu_tests.log 2>&1
cat $R/gpu_tests.log
for t in float32 float16; do
  ours $B/bench/dmls_bench --device=gpu --data_type=$t --ops=identity,celu,gelu,tanh,softsign,identity,celu,gelu --sizes=128M --no_dispatch_cost --engine_requests=0 > $R/ew_$t.log 2>&1
  python3 bench/torch_anchors.py --dtype=$t > $R/torch_$t.log 2>&1
done
grep -E "^(identity|celu|gelu|tanh|softsign) " $R/ew_*.log; grep -iE "copy|layer_norm" $R/torch_*.log | head -8
for t in float32 float16; do
  for shape in 512x262143 4096x32768 65536x1024 16384x4096; do
    r=${shape%x*}; c=${shape#*x}
    for extra in "" "--mvn_no_row"; do
      echo "== $t $shape default $extra"
      ours $B/bench/dmls_bench --device=gpu --data_type=$t --ops=mvn1 --sizes=$((r * c)) --mvn_rows=$r --show_plan --no_dispatch_cost --engine_requests=0 $extra 2>&1 | grep -E "schedule|^  mvn1"
    done
  done
  python3 bench/torch_anchors.py --dtype=$t --rows=16384 --cols=4096 --elements=$((16384 * 4096)) --iters=100 2>&1 | grep -i layer_norm
done > $R/mvn_defaults.log 2>&1
cat $R/mvn_defaults.log
tar czf $OUT/run2b.tgz -C $R . && rm -rf $R
