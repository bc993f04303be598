#!/usr/bin/env bash
# On the GPU machine (../shared/GPU.md): the operations features against the
# real GPU engine, end to end with dmlctl: a server with TLS, bearer tokens
# and metrics; a 64 MiB tensor uploaded, a three-step chain on it with the
# result kept resident, downloaded and compared with the same chain inline;
# a scrape of the metrics. Logs and the scrape go to $OUT.
#   bash bench/run_ops_smoke_gpu.sh
set -u
source bench/gpu_env.sh
export LD_LIBRARY_PATH=$rt
B=.gpu/build
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/pki
port=50061
metrics=9464
tls_server=()
tls_client=()
if command -v openssl >/dev/null; then
  (cd /tmp/pki &&
   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
     -days 1 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
     -keyout key.pem -out cert.pem 2>/dev/null)
  echo "gpu-smoke-token-0123456789abcdef smoke" > /tmp/pki/tokens.txt
  tls_server=(--tls_cert_file=/tmp/pki/cert.pem --tls_key_file=/tmp/pki/key.pem
              --auth_tokens_file=/tmp/pki/tokens.txt)
  tls_client=(--tls-ca=/tmp/pki/cert.pem --tls-server-name=localhost
              --token=gpu-smoke-token-0123456789abcdef)
else
  echo "no openssl on this machine: plaintext, no tokens" | tee -a "$OUT/smoke.txt"
  tls_client=(--tenant=smoke)
fi
taskset -c 0-7 $B/server/dmlserve --device=gpu --port=$port --metrics_port=$metrics \
  --metrics_address=127.0.0.1 "${tls_server[@]}" >"$OUT/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q "listening" "$OUT/server.log" && break; sleep 0.2; done
C=(taskset -c 8-15 $B/client/dmlctl --server=127.0.0.1:$port --timeout=120 "${tls_client[@]}")
{
  echo "== health"; "${C[@]}" health
  echo "== caps"; "${C[@]}" caps | grep -E '"deviceName"|"deviceMemoryCapBytes"|"memoryCapBytes"'
  echo "== a 64 MiB input"
  "${C[@]}" run client/examples/celu.json --random=1 --shape=16,1024,1024 --output=/tmp/x.npy
  H=$("${C[@]}" upload /tmp/x.npy --chunk-bytes=4M)
  echo "uploaded $H"
  cat >/tmp/chain.json <<JSON
{"steps": [
  {"operator": {"celu": {"input": {}, "output": {}, "alpha": 1.0}}, "input": {"handle": "$H"}},
  {"operator": {"mvn1": {"input": {}, "output": {}, "axes": [1, 2], "normalizeVariance": true,
                         "epsilon": 1e-05}}, "input": {"step": 0}},
  {"operator": {"threshold": {"input": {}, "output": {}, "min": -1.0}}, "input": {"step": 1},
   "keepOutput": true}]}
JSON
  K=$("${C[@]}" run /tmp/chain.json | awk '/^step 2:/ {print $3}')
  echo "chain result kept as $K"
  "${C[@]}" ls
  "${C[@]}" download "$K" --output=/tmp/y.npy
  echo "== the same chain inline (input from the file)"
  "${C[@]}" run client/examples/chain_celu_mvn1_threshold.json --input=/tmp/x.npy --output=/tmp/z.npy
  cmp /tmp/y.npy /tmp/z.npy && echo "resident chain == inline chain (bytes equal)"
  "${C[@]}" rm "$H" "$K"
  echo "== a wrong token"
  "${C[@]}" --token=wrong-token-0123456789abcdefgh caps 2>&1 | head -1
} >>"$OUT/smoke.txt" 2>&1
curl -s http://127.0.0.1:$metrics/metrics >"$OUT/metrics.txt"
kill -TERM $server; wait $server; echo "server exit $?" >>"$OUT/smoke.txt"
grep -E '^dmlserve_(requests_total|device_memory|pipeline|resident|build_info|queue_depth|in_flight)' \
  "$OUT/metrics.txt" >>"$OUT/smoke.txt"
cat "$OUT/smoke.txt"
