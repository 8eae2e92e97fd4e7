"""How the tests run the package's commands.

command("compare") is the build tree's wrapper $XATTN_BIN_DIR/xattn-compare when
ctest gives XATTN_BIN_DIR (so the wrappers are tested too), else
`python3 -m xattn compare`; env() puts this source tree's package first on
PYTHONPATH either way, so `cd python && python3 -m pytest` needs no build."""
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(TESTS)
TESTDATA = os.path.join(TESTS, "testdata")


def command(name):
    bindir = os.environ.get("XATTN_BIN_DIR")
    wrapper = os.path.join(bindir, "xattn-" + name) if bindir else None
    if wrapper and os.access(wrapper, os.X_OK):
        return [wrapper]
    return [sys.executable, "-m", "xattn", name]


def env(**extra):
    e = dict(os.environ, **extra)
    e["PYTHONPATH"] = PYTHON_DIR + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def run_or_skip(cmd):
    """Runs a peers command, echoing its output; exits 77 (ctest: skipped) when
    it did (no venv), fails the test on any other error; returns the output."""
    import subprocess
    from xattn.peers import peers_env
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(proc.stdout, end="")
    if proc.returncode == peers_env.SKIP_CODE:
        sys.exit(peers_env.SKIP_CODE)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}")
    return proc.stdout
