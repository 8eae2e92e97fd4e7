#!/usr/bin/python3
"""ctest `peers.binding_torch`: the binding's torch checks (binding_cases.TORCH_CHECKS:
bf16 and fp8 torch tensors used in place, non-contiguous views, the SGLang
adapter) in the venv of scripts/make-venv.sh. Exit 77 (skipped, one line)
without the venv."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xattn.peers import peers_env  # noqa: E402

peers_env.ensure("check_binding_torch", names=("torch", "numpy"))

import torch  # noqa: E402

from binding_cases import TORCH_CHECKS  # noqa: E402

failed = 0
for fn in TORCH_CHECKS:
    try:
        fn(torch)
        print(f"ok   {fn.__name__}")
    except Exception as e:  # report every check, then fail
        failed += 1
        print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}")
print(f"binding_torch: {len(TORCH_CHECKS)} checks, {failed} failures (torch {torch.__version__})")
sys.exit(1 if failed else 0)
