set -uo pipefail
R=$OUT/r; mkdir -p $R
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
B=.gpu/build
OUT=$R/mvn timeout 300 bash bench/run_mvn_gpu.sh > $R/mvn_run.log 2>&1
cat $R/mvn/summary.txt
OUT=$R/acc bash bench/run_accuracy_gpu.sh > /dev/null 2>&1
grep -E "^\|" $R/acc/accuracy_float32.log $R/acc/accuracy_float16.log | awk -F'|' '$10+0>0 || $11+0>0 {print}'
tail -3 $R/acc/accuracy_regression_test.log
tar czf $OUT/run2a.tgz -C $R . && rm -rf $R
