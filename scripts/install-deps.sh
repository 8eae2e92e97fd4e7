#!/usr/bin/env bash
# Installs every build, test, benchmark and plotting dependency from Debian 12's
# packages. Idempotent; run as root (or with sudo available). Python peers
# (PyTorch, ONNX Runtime) are not installed here: see scripts/make-venv.sh.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git   # toolchain
  libbenchmark-dev libbenchmark-tools                 # Google Benchmark + compare.py
  libhwloc-dev hwloc                                  # topology and binding
  libcjson-dev                                        # JSON (cases, info, results)
  libopenblas-dev                                     # BLAS baseline
  likwid                                              # optional markers, likwid-bench
  gnuplot-nox                                         # plots
  python3 python3-scipy python3-numpy python3-pytest  # the xattn Python package (python/) and its tests
  python3-dev                                         # headers for the binding's call module (python/ext)
  python3-venv                                        # scripts/make-venv.sh (peers: torch, onnxruntime)
  slurm-wlm munge                                     # fleet sweeps (scripts/fleet.sh) and their test on a local SLURM
  clang libclang-rt-14-dev                            # libFuzzer targets of the loaders (scripts/fuzz.sh)
)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: all ${#pkgs[@]} packages present" >&2
