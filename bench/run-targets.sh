#!/usr/bin/env bash
# Measures the headline figures of xattn on this machine and prints them as
# ratios (see bench/README.md, "Targets"):
#   1. f32 and bf16 causal prefill E=2048 (H_Q 32, H_KV 8, D 128): GFLOP/s, % of peak
#   2. xattn vs the OpenBLAS baseline at causal E=4096
#   3. bidirectional and prefix-mix GFLOP/s relative to causal
#   4. 1 -> N thread scaling (N = all cores)
#   5. peak RSS of a P=32768, E=512 run vs its input size
# usage: bench/run-targets.sh [BUILD_DIR] [extra xattn-bench flags...]
# The sweep's JSON goes to results/<machine>/<commit>/ like any run (label
# "targets"; extra flags such as --results-dir pass through); the RSS run
# writes nothing. OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset so the
# BLAS baseline runs as OpenBLAS would by default on this CPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
shift || true
bench=$build/bench/xattn-bench
[ -x "$bench" ] || { echo "run-targets: $bench not built (cmake --build $build)" >&2; exit 2; }
cores=$(nproc)
threads="1,$cores"
[ "$cores" -eq 1 ] && threads=1
echo "== load before: $(uptime)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bench" --suite targets --threads "$threads" \
  --label targets "$@" 2>&1 >/dev/null | tee "$out/stderr" >&2
json=$(sed -n 's/^xattn-bench: results in //p' "$out/stderr" | tail -1)
[ -n "$json" ] && [ -f "$json" ] || { echo "run-targets: no results file (see above)" >&2; exit 1; }
echo "== load after sweep: $(uptime)"
/usr/bin/time -v "$bench" --suite prefix-mix --workloads long-p32768-e512.ref --dtypes bf16 --threads "$cores" \
  --no-baseline --no-peak --reference-max-gflop 0 --repetitions 1 --results-dir none \
  --benchmark_min_time=0.01 --benchmark_format=json >"$out/rss.json" 2>"$out/rss.txt"
echo "== load after RSS run: $(uptime)"
/usr/bin/python3 "$here/summarize_targets.py" "$json" "$out/rss.json" "$out/rss.txt" "$cores"
