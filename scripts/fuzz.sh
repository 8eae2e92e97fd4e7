#!/usr/bin/env bash
# Fuzzes every C loader of the tools (case folder, workload suite, tune cache,
# a killed bench run's temp file)
# with libFuzzer under ASan + UBSan for a bounded time each: builds fuzz/ with
# clang into BUILD_DIR (default build/fuzz; only the loaders and libxattn with
# one variant), writes the seed corpora (the targets write their own valid
# seeds, the suites come from bench/suites) and runs each target for
# XATTN_FUZZ_SECONDS (default 20) seconds, nproc targets at a time. A crash, a
# sanitizer report, a leak or a refusal that is not one line fails the script;
# the input that did it is kept under BUILD_DIR/artifacts/. The results-file
# loader is Python: it is fuzzed by python/tests/test_results_fuzz.py (ctest
# python.results_fuzz).
# usage: scripts/fuzz.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/fuzz}
secs=${XATTN_FUZZ_SECONDS:-20}
command -v clang >/dev/null || { echo "fuzz: clang not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DXATTN_SANITIZE=address,undefined -DXATTN_FUZZ=ON -DXATTN_VARIANTS=64x64 \
  -DXATTN_BUILD_BENCH=OFF -DXATTN_BUILD_TUNE=OFF -DXATTN_BUILD_TESTS=OFF >/dev/null
# the build's own output is kept and shown only when it fails (ninja prints errors on stdout)
if ! cmake --build "$build" -j"$(nproc)" --target fuzz_case_folder fuzz_suite fuzz_tune_cache fuzz_salvage >"$build/build.log" 2>&1; then
  grep -v '^\[' "$build/build.log" | tail -40 >&2
  echo "fuzz: building the fuzz targets failed (log: $build/build.log)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/artifacts"
# one target: its corpus, its run, its log; the targets run $(nproc) at a time
# (each is one process: on 2 cores two of them take the time of one)
fuzz_one() {
  local t=$1 corpus="$work/$1"
  mkdir -p "$corpus"
  [ "$t" = suite ] && cp "$root"/bench/suites/*.json "$corpus/"
  (cd "$work" && XATTN_FUZZ_SEEDS="$corpus" "$build/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=65536 \
     -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "$corpus" 2>"$work/$t.log")
}
targets=(case_folder suite tune_cache salvage)
par=$(nproc)
for ((i = 0; i < ${#targets[@]}; i += par)); do
  batch=("${targets[@]:i:par}")
  pids=()
  for t in "${batch[@]}"; do
    echo "== fuzz_$t: ${secs}s" >&2
    fuzz_one "$t" &
    pids+=($!)
  done
  for k in "${!batch[@]}"; do
    t=${batch[$k]}
    if ! wait "${pids[$k]}"; then
      wait # the batch's other targets finish before the script stops
      tail -40 "$work/$t.log" >&2
      echo "fuzz: fuzz_$t failed; the input is in $build/artifacts/" >&2
      exit 1
    fi
    printf 'fuzz_%s: ' "$t" >&2
    grep -E "^stat::number_of_executed_runs|^Done" "$work/$t.log" | tr '\n' ' ' >&2
    echo >&2
  done
done
echo "fuzz: all targets ran ${secs}s each without a finding" >&2
