#!/usr/bin/env bash
# `pip install .` the way README.md says, into a fresh venv, then use it: the
# package imports, finds its own libxattn.so, and one call matches the fp64
# reference. scikit-build-core (the build backend) is not packaged in Debian 12,
# so pip takes it from PyPI (normal build isolation; no --no-build-isolation).
# Usage: scripts/check-pip-install.sh [VENV_DIR]   (default: a temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-$(mktemp -d /tmp/xattn-pip-XXXXXX)}"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input .
cd /   # not the source tree: the installed package must stand alone
"$venv/bin/python" - <<'PY'
import numpy as np
import xattn
info = xattn.info()
assert info["library"].startswith(xattn.__path__[0]), info["library"]
rng = np.random.default_rng(0)
q = rng.standard_normal((3, 4, 16), dtype=np.float32)
k, v = rng.standard_normal((2, 3, 2, 16), dtype=np.float32)
kc, vc = rng.standard_normal((2, 8, 2, 16), dtype=np.float32)
table = np.arange(8, dtype=np.int32).reshape(1, 8)
args = (q, k, v, kc, vc, table, [0], [5], [3])
o = xattn.extend_attention(*args)
assert np.abs(o - xattn.reference(*args)).max() < 1e-5
print(f"check-pip-install: xattn from {info['library']} ({info['best_isa']}): ok")
PY
