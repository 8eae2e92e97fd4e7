"""Git worktrees and Release builds of a revision, for `xattn compare BASE HEAD`.

Each revision gets <work>/<sha12>/src (a detached `git worktree`) and
<work>/<sha12>/build (its own CMake build folder). Both are kept between runs so
that comparing the same revision again only rebuilds what changed; remove
<work> and run `git worktree prune` to reclaim the space.
"""
import json
import os
import shutil
import subprocess

from .. import children


class BuildError(Exception):
    """A revision that cannot be checked out, configured or built; str() is one line."""


# Only the benchmark is needed: skip the test suite and the tuner to keep it quick.
DEFAULT_CMAKE_ARGS = ["-DCMAKE_BUILD_TYPE=Release", "-DXATTN_BUILD_TESTS=OFF",
                      "-DXATTN_BUILD_TUNE=OFF"]
BENCH_TARGET = "xattn-bench"


def _git(args, cwd, check=True):
    p = subprocess.run(["git"] + args, cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise BuildError("git %s: %s" % (" ".join(args), (p.stderr.strip().splitlines() or ["failed"])[-1]))
    return p.stdout.strip()


def toplevel(cwd=None):
    try:
        return _git(["rev-parse", "--show-toplevel"], cwd)
    except (BuildError, OSError):
        return None


def resolve(rev, cwd=None):
    """Full commit hash of rev, or None when it names no commit."""
    try:
        p = subprocess.run(["git", "rev-parse", "--verify", "--quiet", rev + "^{commit}"],
                           cwd=cwd, capture_output=True, text=True)
    except OSError:
        return None
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None


def prepare_worktree(repo, sha, work):
    """A clean detached worktree of sha under work/<sha12>/src (reused if present)."""
    src = os.path.join(work, sha[:12], "src")
    if os.path.isdir(src):
        head = _git(["rev-parse", "HEAD"], src, check=False)
        if head == sha and not _git(["status", "--porcelain", "--untracked-files=no"], src, check=False):
            return src
        _git(["worktree", "remove", "--force", src], repo, check=False)
        shutil.rmtree(src, ignore_errors=True)
    os.makedirs(os.path.dirname(src), exist_ok=True)
    _git(["worktree", "prune"], repo, check=False)
    _git(["worktree", "add", "--detach", "--force", src, sha], repo)
    return src


def _error_line(path):
    """The first line of a build log that says 'error' (CMake and gcc put the
    cause there), else its last line."""
    try:
        with open(path, "r", errors="replace") as f:
            lines = [l.strip() for l in f if l.strip()]
    except OSError:
        return ""
    for l in lines:
        if "error" in l.lower():
            return l
    return lines[-1] if lines else ""


def build_bench(src, build, cmake_args=(), jobs=2, log=None, what="revision"):
    """Configure and build xattn-bench in build/; returns the executable's path."""
    log = log or os.path.join(build, "compare-build.log")
    os.makedirs(build, exist_ok=True)
    steps = [
        ["cmake", "-S", src, "-B", build] + DEFAULT_CMAKE_ARGS + list(cmake_args),
        ["cmake", "--build", build, "-j", str(jobs), "--target", BENCH_TARGET],
    ]
    with open(log, "a") as f:
        for cmd in steps:
            f.write("$ %s\n" % " ".join(cmd))
            f.flush()
            rc = children.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
            if rc != 0:
                raise BuildError("%s: '%s' failed (exit %d): %s (log %s)"
                                 % (what, " ".join(cmd[:3]), rc, _error_line(log), log))
    exe = find_executable(build, BENCH_TARGET)
    if not exe:
        raise BuildError("%s: built, but no %s executable under %s" % (what, BENCH_TARGET, build))
    return exe


def find_executable(build, name):
    for root, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if d != "CMakeFiles"]
        if name in files:
            path = os.path.join(root, name)
            if os.access(path, os.X_OK):
                return path
    return None


def build_revision(repo, rev, work, cmake_args=(), jobs=2, role="revision", remember_failure=False):
    """(sha, path of xattn-bench) for a revision, building it if needed.

    remember_failure: a failed build leaves <work>/<sha12>/build-failed.json
    (the error and the CMake arguments), and a later call with the same
    arguments raises the remembered error at once instead of building again
    (history backfill and bisect skip such commits; delete the file or use other
    arguments to retry)."""
    sha = resolve(rev, repo)
    if not sha:
        raise BuildError("%s %r: not a git revision of %s" % (role, rev, repo))
    marker = os.path.join(work, sha[:12], "build-failed.json")
    if remember_failure:
        known = failed_before(marker, cmake_args)
        if known:
            raise BuildError("%s (remembered in %s)" % (known, marker))
    try:
        src = prepare_worktree(repo, sha, work)
        build = os.path.join(work, sha[:12], "build")
        exe = build_bench(src, build, cmake_args, jobs, what="%s %s (%s)" % (role, rev, sha[:12]))
    except BuildError as e:
        if remember_failure:
            _write_marker(marker, cmake_args, str(e))
        raise
    return sha, exe


def failed_before(marker, cmake_args):
    """The remembered error line of a failed build with these CMake arguments, or None."""
    try:
        with open(marker) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("cmake_args") != list(cmake_args):
        return None
    return str(data.get("error", "build failed"))


def _write_marker(marker, cmake_args, error):
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    tmp = marker + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"cmake_args": list(cmake_args), "error": error}, f)
    os.replace(tmp, marker)
