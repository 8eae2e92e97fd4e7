#!/usr/bin/env bash
# The test command of the README and of CI: installs dependencies, builds the
# Release tree and runs the whole ctest suite, then an AddressSanitizer +
# UndefinedBehaviorSanitizer build on the reduced suite, libFuzzer targets for
# every loader under the same sanitizers (scripts/fuzz.sh), then the likwid-marker
# build's own tests, then the fleet test on a one-node SLURM started on
# localhost (needs root; fails, never skips, when SLURM cannot start). Any
# failure stops it with a non-zero exit.
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    Release build and suite only, no peers venv
# The peer tests (PyTorch, ONNX Runtime; ctest label peers) need the venv of
# scripts/make-venv.sh (about 1.5 min and 2.4 GB from PyPI); when it cannot be
# made they skip with a line that says so, and everything else still runs.
# Last, `pip install .` into a fresh venv (scripts/check-pip-install.sh; the
# build backend comes from PyPI, skipped with a line when PyPI is out of reach).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc)

scripts/install-deps.sh
if [ "$quick" = 0 ]; then
  scripts/make-venv.sh || echo "test.sh: peers venv could not be created; the peer tests will skip" >&2
fi

step() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

step "Release build"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$jobs"
step "Release tests"
ctest --test-dir build/release --output-on-failure -j"$jobs"
[ "$quick" = 1 ] && exit 0

step "ASan+UBSan build"
cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DXATTN_SANITIZE=address,undefined -DXATTN_BUILD_BENCH=OFF >/dev/null
cmake --build build/sanitize -j"$jobs"
step "ASan+UBSan tests (label sanitize)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/sanitize --output-on-failure -j"$jobs" -L sanitize

step "fuzz every loader: case folder, suite, tune cache, a killed bench run's temp file (libFuzzer + ASan/UBSan, 20 s each; scripts/fuzz.sh)"
scripts/fuzz.sh

step "fleet test: local SLURM, two machines, requeue, merged header (tests/fleet/test_fleet.sh)"
tests/fleet/test_fleet.sh

step "likwid marker build"
cmake -S . -B build/likwid -G Ninja -DCMAKE_BUILD_TYPE=Release -DXATTN_LIKWID=ON \
  -DXATTN_BUILD_TUNE=OFF -DXATTN_VARIANTS="64x64;16x256" >/dev/null
cmake --build build/likwid -j"$jobs"
step "likwid marker tests (label likwid)"
ctest --test-dir build/likwid --output-on-failure -j"$jobs" -L likwid

step "pip install . into a fresh venv (build backend scikit-build-core from PyPI)"
if ! scripts/check-pip-install.sh; then
  if /usr/bin/python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/scikit-build-core/", timeout=20)' 2>/dev/null; then
    echo "test.sh: pip install . failed with PyPI reachable" >&2; exit 1
  fi
  echo "test.sh: pip install . skipped: PyPI (scikit-build-core) is out of reach" >&2
fi
