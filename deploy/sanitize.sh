#!/usr/bin/env bash
# The unit tests under sanitizers, each build in its own directory:
#   bash deploy/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer:
#                                  # the unit tests of every module (build-asan/)
#   bash deploy/sanitize.sh tsan   # ThreadSanitizer: the scheduler, the GPU
#                                  # runtime (batches, completion, resident
#                                  # executor) and the server's tests (build-tsan/)
# Exits non-zero when a test fails or a sanitizer reports. System libraries
# (abseil, gRPC, vkd3d, Mesa) are not instrumented; the code under test locks
# with dmls::Mutex (engine/core/mutex.h), a std::mutex that TSan sees.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-asan}
case $mode in
  asan)
    # -fno-sanitize=vptr: vkd3d implements the D3D12 COM interfaces in C, so
    # UBSan's dynamic-type check rejects every call on them (ID3D12Device).
    flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    dir=build-asan
    # The unit tests of every module (the sweeps over corpora, the
    # conformance and robustness tests and the e2e suite run elsewhere).
    targets="core_test ops_test cpu_test sched_test store_test server_test server_mapping_test
             dxbc_emitter_test dxbc_planner_test d3d12_runtime_test d3d12_operators_test
             client_tensor_util_test client_npy_test bench_load_test"
    tests_exclude="e2e|Robustness|Conformance|bench|smoke|NOT_BUILT|python|dmlctl"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 ;;
  tsan)
    flags="-fsanitize=thread -fno-omit-frame-pointer"
    dir=build-tsan
    targets="sched_test store_test d3d12_runtime_test d3d12_operators_test server_test"
    tests_exclude=""
    export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" ;;
  *) echo "usage: $0 asan|tsan"; exit 2 ;;
esac
cmake -S . -B $dir -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="${flags%% *}" > $dir.configure.log
cmake --build $dir -j2 --target $targets > $dir.build.log
log=$dir.test.log
status=0
if [ "$mode" = asan ]; then
  ctest --test-dir $dir -j2 --timeout 900 -E "$tests_exclude" --output-on-failure > $log 2>&1 || status=1
  grep -E "tests passed|tests failed" $log
  grep -A30 "The following tests FAILED" $log || true
else
  : > $log
  for t in engine/sched/sched_test engine/store/store_test engine/d3d12/d3d12_runtime_test \
           "engine/d3d12/d3d12_operators_test --gtest_filter=Resident*" server/server_test; do
    set -- $t
    bin=$1; shift
    echo "== $bin $*" >> $log
    $dir/$bin "$@" >> $log 2>&1 || status=1
    echo "$bin: $(grep -E '^\[  (PASSED|FAILED) ' $log | tail -1)"
  done
fi
if grep -qE "ERROR: (Address|Undefined|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:" $log; then
  echo "sanitizer reports:"
  grep -E "ERROR: (Address|Undefined)Sanitizer|WARNING: ThreadSanitizer|runtime error:" $log | sort | uniq -c | head -20
  status=1
fi
exit $status
