#!/usr/bin/env bash
# The main job of the README: on a fresh Debian 12 machine, install what is
# needed, tune the kernels on the default suite, build with the tuned header,
# check the header is in use, benchmark tuned against default in one run,
# run the peers if their venv exists, and draw the plots + HTML report.
# Small enough for a laptop: on 2 cores (Sapphire Rapids class VM, load ~2) the
# release flow took 116 s with --budget 3m (the tuner finished its 14 classes in
# 101 s, decode steps included), each of the two xattn-bench runs of the default
# suite (70 rows at 1 and 2 threads, 16 of them decode steps) 268 s, the report
# 20 s: about 11 minutes with the builds done, plus about 3 minutes of builds
# on a fresh checkout, plus the peers when their venv exists.
#   scripts/sweep.sh [--suite NAME]... [--budget 6m] [--with-peers]
# Everything it measures lands under results/<machine>/<commit>/; the report
# under plots/out/<stamp>/index.html. A killed run resumes its tuning (the
# measurement cache in results/<machine>/tune-cache.jsonl) when run again.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SUITES=()
BUDGET=6m
PEERS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) SUITES+=("$2"); shift 2 ;;
    --budget) BUDGET="$2"; shift 2 ;;
    --with-peers) PEERS=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "sweep.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#SUITES[@]} -gt 0 ] || SUITES=(default)
SUITE_ARGS=()
for s in "${SUITES[@]}"; do SUITE_ARGS+=(--suite "$s"); done
STAMP=$(date -u +%Y%m%dT%H%M%SZ)

scripts/install-deps.sh
[ "$PEERS" = 1 ] && scripts/make-venv.sh

# tune -> tuned header -> release build -> header check -> tuned vs default -> xattn-bench both
tune/release.sh "${SUITE_ARGS[@]}" --budget "$BUDGET" --bench \
  --tune-build "$ROOT/build/tune" --release-build "$ROOT/build/release-tuned"

# the rest of the release build: plot/compare tools and the peers' plan tool
cmake --build "$ROOT/build/release-tuned" -j"$(nproc)" >/dev/null

if [ -x .venv/bin/python ]; then
  for s in "${SUITES[@]}"; do
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$ROOT/build/release-tuned/bin/xattn-peers" --suite "$s" \
      --threads auto --placement compact --repetitions 5 || [ $? -eq 77 ]
  done
else
  echo "sweep: peer rows (PyTorch, ONNX Runtime) skipped: create their venv with scripts/make-venv.sh, or pass --with-peers" >&2
fi

"$ROOT/build/release-tuned/bin/xattn" plot "$ROOT/results" --measure-bw -o "$ROOT/plots/out/$STAMP"
echo "sweep: report in plots/out/$STAMP/index.html"
