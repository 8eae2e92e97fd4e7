#!/usr/bin/env bash
# Creates .venv/ (ignored by git) with the peers that bench/peers/ compares xattn
# against: PyTorch (CPU use of PyPI's torch wheel) and ONNX Runtime (CPU), plus
# onnx (to build the Attention model) and numpy. Only PyPI is used.
#
# Why torch is installed the way it is: PyPI's only linux x86_64 torch wheel is
# the CUDA build. Its CPU kernels are the same as the CPU-only build's, but its
# shared libraries link (DT_NEEDED) against CUDA runtime libraries, so `import
# torch` needs them even on a machine without a GPU. Its declared dependencies
# add ~1.3 GB that a CPU run never loads (triton, cusolver, nvjitlink, nvtx,
# cccl headers, cuda-bindings). So torch and the NVIDIA packages that hold its
# load-time libraries are installed with --no-deps, at the exact versions torch
# pins, and everything else normally. ~4.2 GB installed instead of ~5.5 GB.
# `pip check` reports torch's unused CUDA extras as missing (expected); the
# installs run with --no-warn-conflicts and the venv is checked by using it.
#
# --ipex makes the second venv instead (default <repo>/.venv-ipex, ignored by
# git too): Intel Extension for PyTorch 2.8.0, which needs exactly torch 2.8.0
# (its CUDA 12.8 wheel, installed the same way: the NVIDIA wheels whose
# libraries its libraries load at import, nothing else).
#
# Usage: scripts/make-venv.sh [--ipex] [VENV_DIR]   (default: <repo>/.venv, <repo>/.venv-ipex)
# Re-running is cheap: a stamp records the pins; a matching venv is kept.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flavor=peers
if [ "${1:-}" = --ipex ]; then flavor=ipex; shift; fi

# torch's pure-python dependencies (both flavors)
torch_py_deps=(filelock==4.3.1 typing_extensions==4.16.0 sympy==1.14.0 networkx==3.6.1
               jinja2==3.1.6 fsspec==2026.9.0 "setuptools>=77.0.3")
if [ "$flavor" = peers ]; then
  venv="${1:-$repo/.venv}"
  # Pins. torch 2.15.0 requires exactly these NVIDIA wheel versions.
  torch_nodeps=(
    torch==2.15.0
    nvidia-cuda-runtime==13.2.86 nvidia-cuda-nvrtc==13.2.86 nvidia-cuda-cupti==13.2.86
    nvidia-cublas==13.4.1.3 nvidia-cufft==12.2.0.57 nvidia-cufile==1.17.1.22
    nvidia-cusparse==12.7.10.12 nvidia-cudnn-cu13==9.26.0.51
    nvidia-cusparselt-cu13==0.8.1 nvidia-nccl-cu13==2.30.7 nvidia-nvshmem-cu13==3.7.2
  )
  with_deps=(numpy==2.4.6 onnx==1.23.2 onnxruntime==1.32.0 "${torch_py_deps[@]}")
  check_py='
import torch, torch.nn.functional as F, onnx, onnxruntime, numpy
q = torch.randn(1, 2, 4, 8)
F.scaled_dot_product_attention(q, q, q, is_causal=True)
print(f"make-venv: torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, "
      f"onnx {onnx.__version__}, numpy {numpy.__version__}: ok")'
else
  venv="${1:-$repo/.venv-ipex}"
  # Pins: the versions torch 2.8.0's METADATA requires, for the libraries that
  # libtorch_cpu/libtorch_cuda/libtorch_python load (DT_NEEDED: cudart, cupti,
  # cublas(Lt), cufft, curand, cufile, cusparse, cusparseLt, cudnn, nccl) and
  # nvjitlink, which cusparse 12.5 loads. Left out: triton, cusolver, nvrtc,
  # nvtx (loaded only by CUDA linear algebra / NVRTC users, never on a CPU run).
  torch_nodeps=(
    torch==2.8.0
    nvidia-cuda-runtime-cu12==12.8.90 nvidia-cuda-cupti-cu12==12.8.90
    nvidia-cublas-cu12==12.8.4.1 nvidia-cufft-cu12==11.3.3.83 nvidia-curand-cu12==10.3.9.90
    nvidia-cufile-cu12==1.13.1.3 nvidia-cusparse-cu12==12.5.8.93 nvidia-nvjitlink-cu12==12.8.93
    nvidia-cudnn-cu12==9.10.2.21 nvidia-cusparselt-cu12==0.7.1 nvidia-nccl-cu12==2.27.3
  )
  # IPEX, its own dependencies (psutil, numpy, packaging) and Intel OpenMP, the
  # runtime its launcher (ipexrun) preloads when it finds it (libiomp5.so)
  with_deps=(intel-extension-for-pytorch==2.8.0 intel-openmp==2026.2.0 numpy==2.4.6 psutil==7.2.2 packaging==26.4
             "${torch_py_deps[@]}")
  # checked by use: one paged decode step, as python/xattn/peers/peer_ipex.py calls it
  check_py='
import torch, numpy, intel_extension_for_pytorch as ipex
from intel_extension_for_pytorch.llm.modules import PagedAttention
q = torch.randn(1, 4, 8); kc = torch.randn(2, 2, 16, 8); out = torch.empty_like(q)
PagedAttention.single_query_cached_kv_attention(out, q, kc, kc, torch.tensor([0, 0, 1, 1], dtype=torch.int32),
    1.0, torch.tensor([[0, 1]], dtype=torch.int32), torch.tensor([20], dtype=torch.int32), 16, 20, None)
print(f"make-venv: torch {torch.__version__}, intel-extension-for-pytorch {ipex.__version__}, "
      f"numpy {numpy.__version__}: ok")'
fi
stamp_text="${torch_nodeps[*]} | ${with_deps[*]}"
stamp="$venv/.xattn-peers-stamp"

check() {
  "$venv/bin/python" -c "$check_py"
}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ] && check 2>/dev/null; then
  exit 0
fi

# Debian's python (needs python3-venv) or, failing that, the python3 on PATH.
py=""
for cand in /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 10)' 2>/dev/null; then
    py="$cand"; break
  fi
done
[ -n "$py" ] || { echo "make-venv: no python3 >= 3.10 with the venv module (apt-get install python3-venv)" >&2; exit 1; }

start=$(date +%s)
rm -rf "$venv"
"$py" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-warn-conflicts)
"${pip[@]}" --no-deps "${torch_nodeps[@]}"
"${pip[@]}" "${with_deps[@]}"
check
printf '%s' "$stamp_text" >"$stamp"
echo "make-venv: $venv ready in $(( $(date +%s) - start )) s, $(du -sh "$venv" | cut -f1)" >&2
