"""Finding the peers' Python environment (.venv made by scripts/make-venv.sh).

The peer tools may be started with any python3: when torch or onnxruntime is
missing they re-execute themselves with the venv's python, and when there is
no usable venv they print ONE line saying how to make it and exit with
SKIP_CODE, which ctest (SKIP_RETURN_CODE) and the sweep read as "skipped".
Standard library only: this module must import without the venv.
"""
import importlib.util
import os
import sys

SKIP_CODE = 77
# python/xattn/peers/peers_env.py -> the repository (meaningful in a source checkout;
# an installed tree sets XATTN_VENV).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
INSTALL_HINT = "create it with scripts/make-venv.sh (PyPI: torch, onnxruntime, onnx, numpy)"


# Intel Extension for PyTorch needs its own torch (2.8.0): a second venv,
# scripts/make-venv.sh --ipex.
IPEX_MODULES = ("torch", "intel_extension_for_pytorch", "numpy")
IPEX_HINT = "create it with scripts/make-venv.sh --ipex (PyPI: torch 2.8.0, intel-extension-for-pytorch 2.8.0)"


def venv_dir():
    """$XATTN_VENV, else <repo>/.venv."""
    return os.environ.get("XATTN_VENV") or os.path.join(REPO, ".venv")


def ipex_venv_dir():
    """$XATTN_VENV_IPEX, else <repo>/.venv-ipex."""
    return os.environ.get("XATTN_VENV_IPEX") or os.path.join(REPO, ".venv-ipex")


def ipex_python():
    """The IPEX venv's python, or None (with the line saying why) when it is not usable here."""
    py = os.path.join(ipex_venv_dir(), "bin", "python")
    if not os.path.exists(py):
        return None, f"no {ipex_venv_dir()}: {IPEX_HINT}"
    return py, ""


def missing_modules(names=("torch", "onnxruntime", "onnx", "numpy")):
    return [n for n in names if importlib.util.find_spec(n) is None]


def ensure(tool, module=None, names=("torch", "onnxruntime", "onnx", "numpy"), venv=None, hint=INSTALL_HINT):
    """Returns when this interpreter has every module in names; else re-executes
    the calling module (`python -m module`, or the script when module is None)
    with the venv's python, or exits SKIP_CODE with one line. PYTHONPATH is
    inherited, so the venv's python finds this package where the caller did."""
    missing = missing_modules(names)
    if not missing:
        return
    venv = venv or venv_dir()
    py = os.path.join(venv, "bin", "python")
    here = os.path.realpath(sys.prefix)
    if os.path.exists(py) and os.path.realpath(os.path.dirname(os.path.dirname(py))) != here:
        os.execv(py, [py] + (["-m", module] + sys.argv[1:] if module else sys.argv))
    where = venv if os.path.exists(py) else f"no {venv}"
    print(f"{tool}: peers skipped ({where}; missing {', '.join(missing)}): {hint}",
          file=sys.stderr, flush=True)
    sys.exit(SKIP_CODE)
