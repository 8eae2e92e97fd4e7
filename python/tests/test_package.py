"""The package's own promises: `import xattn` is cheap (no numpy, scipy or
compiled library), every command of `python3 -m xattn` resolves to a module
with main(argv), and no module searches sys.path for its siblings."""
import os
import subprocess
import sys

import tools
from xattn.__main__ import COMMANDS


def test_import_is_cheap():
    code = ("import sys, xattn, xattn.results, xattn.perf, xattn.plot, xattn.peers, xattn.cases\n"
            "heavy = sorted(m for m in ('numpy', 'scipy', 'torch') if m in sys.modules)\n"
            "print(','.join(heavy))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=tools.env())
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", "import xattn pulled in " + p.stdout


def test_every_command_has_main():
    import importlib
    for name, module in COMMANDS.items():
        mod = importlib.import_module(module)
        assert callable(getattr(mod, "main", None)), name


def test_unknown_command_is_one_line():
    p = subprocess.run([sys.executable, "-m", "xattn", "no-such"], capture_output=True, text=True, env=tools.env())
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr


def test_no_sys_path_edits():
    pkg = os.path.join(tools.PYTHON_DIR, "xattn")
    offenders = []
    for root, _, files in os.walk(pkg):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(root, f)
                with open(path) as fh:
                    if "sys.path.insert" in fh.read():
                        offenders.append(os.path.relpath(path, pkg))
    assert offenders == []


def test_checkout_library_skips_sanitizer_builds(tmp_path):
    """A source checkout with a release build and a newer ASan build: the
    binding takes the release library (loading the ASan one aborts Python), and
    with only sanitizer builds it refuses in one line naming them."""
    import time
    from xattn import api

    def lib(name, needed):
        d = tmp_path / "build" / name / "lib"
        d.mkdir(parents=True)
        p = d / "libxattn.so"
        p.write_bytes(b"\x7fELF....\x00libm.so.6\x00" + needed + b"\x00libc.so.6\x00")
        return p

    release = lib("release", b"libgomp.so.1")
    time.sleep(0.02)
    asan = lib("sanitize", b"libasan.so.8")
    os.utime(asan, (time.time() + 10, time.time() + 10))  # the newest
    assert api.checkout_library(str(tmp_path)) == str(release)
    release.unlink()
    try:
        api.checkout_library(str(tmp_path))
    except ImportError as e:
        assert "skipped sanitizer builds" in str(e) and str(asan) in str(e), e
    else:
        raise AssertionError("a checkout with only an ASan build must refuse")
