"""Child processes that end with the tool that started them.

`xattn compare`, `history run`, `bisect` and `peers` start benchmark runs and
builds that take minutes. Killed with SIGTERM or SIGKILL (a scheduler's time
limit, `kill -9`), Python exits without a word to its children, and a
benchmark left running keeps one of the machine's cores busy under whatever
runs next: typically the `--continue` of the killed compare, whose rounds it
would then slow down. On Linux each child asks the kernel for SIGTERM when
its parent dies (prctl PR_SET_PDEATHSIG): a benchmark so stopped loses only
the round it was in (which `--continue` runs again whole), and ninja stops
its compilers on it. Elsewhere children run as before.
"""
import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()  # looked up here: a preexec_fn should not load libraries


def _ending_with(parent):
    """preexec_fn for a child of `parent`: SIGTERM when it dies, and an exit at
    once if it died before the request took effect (the child was then already
    handed to another parent, which the kernel would watch instead)."""
    def request():
        if _LIBC is not None:
            _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(143)
    return request


def run(cmd, **kwargs):
    """subprocess.run(cmd, **kwargs) whose child gets SIGTERM if this process dies."""
    return subprocess.run(cmd, preexec_fn=_ending_with(os.getpid()), **kwargs)
