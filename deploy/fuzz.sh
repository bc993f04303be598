#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with Debian's clang under
# AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz/, seeds
# their corpora from tests/fuzz/corpus (copied, so runs never modify the
# committed seeds), and runs each for a number of executions or seconds.
#   bash deploy/fuzz.sh                 # 1,000,000 executions per target
#   bash deploy/fuzz.sh --runs=10000000
#   bash deploy/fuzz.sh --seconds=600 --targets=fuzz_request
# Prints each target's final libFuzzer stats line; exits non-zero when a
# target finds a crash, a leak or a broken invariant (the reproducer is
# left in build-fuzz/, see libFuzzer's output).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1000000 seconds=0 targets="fuzz_request fuzz_kernel" jobs=1
for a in "$@"; do
  case $a in
    --runs=*) runs=${a#*=} ;;
    --seconds=*) seconds=${a#*=} ;;
    --targets=*) targets=${a#*=}; targets=${targets//,/ } ;;
    *) echo "unknown argument $a"; exit 2 ;;
  esac
done
command -v clang++ > /dev/null || apt-get install -y clang
dir=build-fuzz
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1"
cmake -S . -B $dir -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DDMLSERVE_BUILD_TESTS=OFF -DDMLSERVE_FUZZ=ON > $dir.configure.log
cmake --build $dir -j2 --target $targets > $dir.build.log
status=0
for t in $targets; do
  corpus=$dir/corpus-$t
  mkdir -p $corpus
  seeds=tests/fuzz/corpus/${t#fuzz_}
  [ -d "$seeds" ] && cp -n "$seeds"/* $corpus/ 2>/dev/null || true
  limit=(-runs=$runs)
  [ "$seconds" != 0 ] && limit=(-max_total_time=$seconds)
  echo "== $t"
  (cd $dir && ASAN_OPTIONS=detect_leaks=1 ./tests/fuzz/$t "${limit[@]}" -max_len=4096 \
     -print_final_stats=1 corpus-$t) > $dir/$t.log 2>&1 || status=1
  grep -E "^Done|stat::number_of_executed_units|stat::peak_rss|==[0-9]+== ERROR|invariant" \
    $dir/$t.log || true
done
exit $status
