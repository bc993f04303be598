set -uo pipefail
source bench/gpu_env.sh
ours() { LD_LIBRARY_PATH=$rt "$@"; }
B=.gpu/build/bench/dmls_bench
python3 bench/torch_anchors.py --dtype=float16 2>&1 | grep -E "^copy"
for t in float16 float32; do
  for op in celu threshold clip relu sigmoid tanh identity gelu; do
    ours $B --device=gpu --data_type=$t --ops=$op --sizes=128M --no_dispatch_cost --engine_requests=0 2>&1 | grep -E "^$op " | sed "s/^/$t /"
  done
done
python3 bench/torch_anchors.py --dtype=float16 2>&1 | grep -E "^copy"
python3 bench/torch_anchors.py --dtype=float32 2>&1 | grep -E "^copy"
