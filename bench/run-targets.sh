#!/usr/bin/env bash
# Measures the headline figures of xattn on this machine and prints them as
# ratios (see bench/README.md, "Targets"):
#   1. f32 and bf16 causal prefill E=2048 (H_Q 32, H_KV 8, D 128): GFLOP/s, % of peak
#   2. xattn vs the OpenBLAS baseline at causal E=4096
#   3. bidirectional and prefix-mix GFLOP/s relative to causal
#   4. 1 -> N thread scaling (N = all cores)
#   5. peak RSS of a P=32768, E=512 run vs its input size
#   6. with PEERS=1: the peers (torch SDPA, IPEX's paged attention; `xattn peers`,
#      their venvs from scripts/make-venv.sh [--ipex]) on the workloads of 1 and 3
# usage: [PEERS=1] bench/run-targets.sh [BUILD_DIR] [extra xattn-bench flags...]
# Two runs of the "targets" suite: all cores with the OpenBLAS baseline, and 1
# thread without it (for the scaling ratio). Their JSON goes to
# results/<machine>/<commit>/ like any run (labels targets-all, targets-one;
# extra flags such as --results-dir or --repetitions pass through to both);
# the RSS run writes nothing. OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset so the
# BLAS baseline runs as OpenBLAS would by default on this CPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
shift || true
bench=$build/bench/xattn-bench
extra=("$@")
[ -x "$bench" ] || { echo "run-targets: $bench not built (cmake --build $build)" >&2; exit 2; }
cores=$(nproc)
echo "== load before: $(uptime)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# run_bench NAME ARGS...: one xattn-bench run, its results file path into $out/NAME.path
run_bench() {
  local name=$1; shift
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bench" --suite targets --label "targets-$name" "$@" \
    2>&1 >/dev/null | tee "$out/$name.stderr" >&2
  local json
  json=$(sed -n 's/^xattn-bench: results in //p' "$out/$name.stderr" | tail -1)
  [ -n "$json" ] && [ -f "$json" ] || { echo "run-targets: no results file from the $name run" >&2; exit 1; }
  echo "$json" >"$out/$name.path"
}
# all cores, with the OpenBLAS baseline; then 1 thread, xattn only (scaling)
run_bench all --threads "$cores" "${extra[@]}"
if [ "$cores" -gt 1 ]; then
  run_bench one --threads 1 --no-baseline "${extra[@]}"
else
  cp "$out/all.path" "$out/one.path"
fi
echo "== load after sweep: $(uptime)"
/usr/bin/time -v "$bench" --suite prefix-mix --workloads long-p32768-e512.ref --dtypes bf16 --threads "$cores" \
  --no-baseline --no-peak --reference-max-gflop 0 --repetitions 1 --results-dir none \
  --benchmark_min_time=0.01 --benchmark_format=json >"$out/rss.json" 2>"$out/rss.txt"
echo "== load after RSS run: $(uptime)"
peers=()
if [ "${PEERS:-0}" = 1 ]; then
  # exit 77: neither venv (one line said so); a missing IPEX venv only drops the ipex rows
  if env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$build/bin/xattn" peers --suite targets \
       --workload causal-e2048,bidir-16x256,mix-spec,chat-p8192-e128 --impl "${PEERS_IMPL:-torch,ipex}" \
       --threads "$cores" --repetitions 5 --no-peak --results-dir none --out "$out/peers.json" >&2; then
    peers=("$out/peers.json")
  fi
  echo "== load after peers: $(uptime)"
fi
PYTHONPATH="$here/../python" /usr/bin/python3 -m xattn targets "$(cat "$out/all.path")" "$(cat "$out/one.path")" \
  "$out/rss.json" "$out/rss.txt" "$cores" "${peers[@]}"
