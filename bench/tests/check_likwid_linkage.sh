#!/bin/sh
# ctest: liblikwid is linked into xattn-bench exactly when XATTN_LIKWID is ON.
# usage: check_likwid_linkage.sh BINARY ON|OFF
bin=$1; want=$2
if ldd "$bin" | grep -q liblikwid; then have=ON; else have=OFF; fi
echo "XATTN_LIKWID=$want, liblikwid linked: $have"
ldd "$bin" | grep -i likwid
[ "$have" = "$want" ] || { echo "FAIL: expected liblikwid linked = $want"; exit 1; }
if [ "$want" = ON ]; then
  # the marker build must run where counters are absent (no likwid-perfctr):
  # LIKWID_MARKER_INIT without perfctr's environment is a no-op
  "$bin" --suite smoke --workloads causal-e48 --dtypes f32 --threads 1 --variants all --layouts all --no-baseline --no-peak \
    --reference-max-gflop 0 --repetitions 1 --results-dir none --benchmark_min_time=0.01 >/dev/null || {
    echo "FAIL: marker build does not run without likwid-perfctr"; exit 1; }
  echo "marker build ran without likwid-perfctr"
fi
