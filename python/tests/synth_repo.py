"""A throw-away git repository whose commits set the speed of a tiny benchmark,
for the history run / steps / bisect tests.

Each commit holds a CMake project NONE (no compiler detection: configuring
takes a fraction of a second) with one target, xattn-bench, that "compiles"
bench.py (python3 -m py_compile, so a syntax error fails the build) and copies
it to <build>/xattn-bench with the commit's slowdown and hash baked in. The
program accepts the flags `xattn compare`/`history run`/`bisect` pass to the
real xattn-bench and writes Google-Benchmark-shaped results with synth.py's
rows and noise model, so the same loading, storing and statistics code runs.

Why synthetic times: on the shared 2-core machines the tests run on, real
timings of two identical programs differ by tens of per cent from one moment to
the next, so a test that expects a 15 % step found and nothing else would fail
now and then. The program reports time = true time * the commit's slowdown *
exp(N(0, 1 %)), seeded by the commit and a per-commit invocation count: the
numbers are the same on every run of the test (commit dates and authors are
fixed, so the hashes are too), and what is tested is the pipeline and the
statistics, not the machine.

The program imports synth.py from this folder (its path is baked in) and needs
nothing else; the tools under test run with the package on PYTHONPATH.

Every invocation appends '<commit> reps=<R> min_time=<S>' to $SYNTH_BENCH_LOG;
with $SYNTH_BENCH_KILL_AT=<commit12> the program kills its parent (the tool
under test) with SIGKILL when it runs for that commit: a killed run, on cue;
$SYNTH_BENCH_MACHINE replaces the machine name it reports (a version that
names the machine differently).
"""
import os
import subprocess

CMAKE = r"""cmake_minimum_required(VERSION 3.13)
project(synthbench NONE)
find_program(PY python3 REQUIRED)
execute_process(COMMAND git describe --always --dirty --abbrev=12
                WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                OUTPUT_VARIABLE COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE)
file(READ ${CMAKE_SOURCE_DIR}/slowdown.txt SLOWDOWN)
string(STRIP "${SLOWDOWN}" SLOWDOWN)
configure_file(bench.py ${CMAKE_BINARY_DIR}/bench.configured.py @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/xattn-bench
                   COMMAND ${PY} -m py_compile ${CMAKE_SOURCE_DIR}/bench.py
                   COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_BINARY_DIR}/bench.configured.py ${CMAKE_BINARY_DIR}/xattn-bench
                   COMMAND chmod +x ${CMAKE_BINARY_DIR}/xattn-bench
                   DEPENDS ${CMAKE_SOURCE_DIR}/bench.py)
add_custom_target(xattn-bench ALL DEPENDS ${CMAKE_BINARY_DIR}/xattn-bench)
"""

BENCH = r'''#!@PY@
"""Synthetic xattn-bench of commit @COMMIT@ (slowdown @SLOWDOWN@)."""
import argparse
import os
import re
import signal
import sys
import zlib

sys.path.insert(0, %(synth_dir)r)
import synth  # noqa: E402

COMMIT, SLOWDOWN = "@COMMIT@", float("@SLOWDOWN@")
p = argparse.ArgumentParser()
p.add_argument("--suite")
p.add_argument("--placement")
p.add_argument("--repetitions", type=int, default=5)
p.add_argument("--results-dir")
p.add_argument("--benchmark_out", required=True)
p.add_argument("--benchmark_filter")
p.add_argument("--benchmark_min_time")
a, _ = p.parse_known_args()
log = os.environ.get("SYNTH_BENCH_LOG")
count = 0
if log:
    if os.path.exists(log):
        with open(log) as f:
            count = sum(1 for line in f if line.startswith(COMMIT + " "))
    with open(log, "a") as f:
        f.write("%%s reps=%%d min_time=%%s\n" %% (COMMIT, a.repetitions, a.benchmark_min_time))
if os.environ.get("SYNTH_BENCH_KILL_AT") == COMMIT:
    os.kill(os.getppid(), signal.SIGKILL)
    sys.exit(1)
rows = synth.default_rows()
if a.benchmark_filter:
    rows = [r for r in rows if re.search(a.benchmark_filter, r[0])]
seed = zlib.crc32(("%%s %%d" %% (COMMIT, count)).encode())
synth.write(a.benchmark_out, synth.make_results(seed, reps=a.repetitions, noise=0.01, slowdown=SLOWDOWN,
                                                rows=rows, commit=COMMIT,
                                                machine=os.environ.get("SYNTH_BENCH_MACHINE", synth.MACHINE)))
'''

BROKEN = "\ndef broken(:\n"  # appended to bench.py in the commit that does not build


def git(repo, *args, env=None):
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def make(folder, n=20, step_at=12, slowdown=1.15, broken_at=9):
    """Create the repository in folder (n commits; commits from step_at on are
    slowdown times slower; commit broken_at does not build). Returns the full
    hashes, oldest first."""
    os.makedirs(folder, exist_ok=True)
    synth_dir = os.path.dirname(os.path.abspath(__file__))
    git(folder, "init", "-q", "-b", "main")
    shas = []
    for i in range(n):
        with open(os.path.join(folder, "CMakeLists.txt"), "w") as f:
            f.write(CMAKE)
        with open(os.path.join(folder, "bench.py"), "w") as f:
            f.write(BENCH % {"synth_dir": synth_dir} + (BROKEN if i == broken_at else ""))
        with open(os.path.join(folder, "slowdown.txt"), "w") as f:
            f.write("%g\n" % (slowdown if i >= step_at else 1.0))
        with open(os.path.join(folder, "version.txt"), "w") as f:
            f.write("%d\n" % i)  # every commit changes the tree, even where the speed stays
        git(folder, "add", "-A")
        date = "2026-01-01T00:%02d:00+00:00" % i
        env = dict(os.environ, GIT_AUTHOR_NAME="synth", GIT_AUTHOR_EMAIL="synth@example.org",
                   GIT_COMMITTER_NAME="synth", GIT_COMMITTER_EMAIL="synth@example.org",
                   GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        what = ("slowdown %g" % slowdown if i == step_at else "does not build" if i == broken_at
                else "back to building" if i == broken_at + 1 else "same speed")
        git(folder, "commit", "-q", "--no-gpg-sign", "-m", "commit %d: %s" % (i, what), env=env)
        shas.append(git(folder, "rev-parse", "HEAD"))
    return shas
