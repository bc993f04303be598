#!/usr/bin/env bash
# Visit 1 (issue 26, session 34): workgroup shapes of the MVN kernels. An
# experiment build (.gpu/xp1: dmls_bench with DMLS_XP_<kind>_<type>=T, which
# gives the kernels of that kind and type T threads of the same total
# elements, mvn_emitter.cc XpShape) measured against its own defaults
# (no variable) at the shapes each kind runs, FLOAT16 and FLOAT32; kernel
# statistics of each; PyTorch's copy beside them. ROUNDS rounds (default 1),
# SKIP_STATS=1 to leave out the statistics and the anchors; PLAN (a file of
# kind:values:shapes[:flags] lines) and TYPES replace the defaults below.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; OUT=/tmp/logs; mkdir -p "$OUT" "$FINAL"
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt timeout 120 "$@"; }
B=${B:-.gpu/xp1}/bench/dmls_bench
TAG=${TAG:-x1}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/machine.log"
common="--device=gpu --cache_mib=50 --no_dispatch_cost --engine_requests=0 --iters=50"
# kind:values:shapes
plan="base:-:65536x1024,32768x4096,16384x8192,4096x32768,512x262143,8192x16384
SMALL:32,128:65536x1024
ROW:128,512:32768x4096
MEDIUM:256,1024:16384x8192
WIDE:512:4096x32768
PARTIAL:128,512,1024:512x262143,8192x16384
NORMALISE+APPLY:128,512:512x262143,8192x16384"
[ -n "${PLAN:-}" ] && plan=$(cat "$PLAN")
run() {  # round type kind value shape [flags]
  local round=$1 t=$2 kind=$3 v=$4 s=$5 flags=${6:-} r c ty envs=() tag
  r=${s%x*}; c=${s#*x}; ty=$([ $t = float16 ] && echo F16 || echo F32)
  if [ "$kind" != base ]; then
    for k in ${kind//+/ }; do envs+=("DMLS_XP_${k}_${ty}=$v"); done
  fi
  tag=$(echo "$flags" | tr -d ' -' | tr '=' '_')
  env "${envs[@]}" LD_LIBRARY_PATH=$rt timeout 120 $B $common --ops=mvn1 --sizes=$((r * c)) \
    --mvn_rows=$r --data_type=$t $flags > "$OUT/${TAG}r${round}_${t}_${s}_${kind}_${v}${tag:+_$tag}.log" 2>&1
}
for round in $(seq 1 ${ROUNDS:-1}); do
  for t in ${TYPES:-float16 float32}; do
    while IFS=: read -r kind values shapes flags; do
      for v in ${values//,/ }; do
        for s in ${shapes//,/ }; do run $round $t "$kind" "$v" $s "$flags"; done
      done
    done <<< "$plan"
  done
done
if [ -z "${SKIP_STATS:-}" ]; then
  while IFS=: read -r kind values shapes flags; do
    s=${shapes%%,*}; r=${s%x*}; c=${s#*x}
    for t in ${TYPES:-float16 float32}; do
      ty=$([ $t = float16 ] && echo F16 || echo F32)
      for v in ${values//,/ }; do
        envs=(); [ "$kind" != base ] && for k in ${kind//+/ }; do envs+=("DMLS_XP_${k}_${ty}=$v"); done
        env "${envs[@]}" LD_LIBRARY_PATH=$rt timeout 120 $B --kernel_stats --ops=mvn1 --cache_mib=50 \
          --sizes=$((r * c)) --mvn_rows=$r --data_type=$t $flags > "$OUT/${TAG}stats_${t}_${kind}_${v}_${s}.log" 2>&1
      done
    done
  done <<< "$plan"
  for t in float32 float16; do
    for s in 65536x1024 4096x32768 512x262143; do
      r=${s%x*}; c=${s#*x}
      timeout 120 python3 bench/torch_anchors.py --elements $((r * c)) --rows $r --cols $c --dtype $t \
        > "$OUT/${TAG}torch_${t}_${s}.log" 2>&1
    done
  done
fi
{
  echo "== dmls_bench us/exec"
  for f in "$OUT"/${TAG}r*.log; do
    echo "$(basename $f .log): $(awk '$1 ~ /^mvn1/ && $3 ~ /^[0-9]+$/ {print $7}' $f) $(grep -m1 -iE 'error|bad ' $f)"
  done
  echo "== kernel stats"
  for f in "$OUT"/${TAG}stats_*.log; do
    [ -f "$f" ] || continue
    echo "-- $(basename $f .log)"; grep -E "stats mvn1|rror|bad " $f | sed -E 's/ op=115.*variant=/ v=/; s/ dxbc .* Register/ Register/; s/; Binary Size = [0-9]+; Stack Size = [0-9]+//' 
  done
  echo "== torch"
  for f in "$OUT"/${TAG}torch_*.log; do [ -f "$f" ] && { echo "-- $(basename $f .log)"; grep -iE "copy|layer_norm" $f; }; done
} > "$OUT/${TAG}-summary.txt"
cat "$OUT/${TAG}-summary.txt"
cp "$OUT/${TAG}-summary.txt" "$FINAL/"; tar czf "$FINAL/${TAG}-logs.tgz" -C "$OUT" .
