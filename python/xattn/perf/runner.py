"""Interleaved runs of two (or three) benchmark executables.

Rounds alternate the two sides, in ABBA order (A B, B A, A B, ...): a slow
drift of the machine (other jobs, thermal state, frequency) hits both sides
alike, and each side runs first in half the rounds, so that a bias of the
first (or second) run of a round cancels instead of landing on one side.
Three sides (`xattn compare --control`: base, head and base again) rotate
(A B C, B C A, C A B, ...): each holds each place in a third of the rounds.
What the order costs on a shared 2-core VM: two runs of one binary in a fixed
order read 1.00-1.77x apart where rotated rounds of the same two read
0.96-1.02 (bench/README.md "a lesson in position bias"; drift and position
are not told apart there), and two builds of identical code ran up to ~10 %
apart (bench/README.md "the near prefetch"). Each round is one short
xattn-bench invocation with --repetitions (xattn-bench's own flag: it sets
Google Benchmark's repetitions per row); the rounds' iteration rows are merged
into one results document per side.
"""
import copy
import json
import os
import subprocess
import tempfile

from .. import children
from ..results import ResultsError, is_iteration, validate_benchmark_json


class RunError(Exception):
    """A benchmark invocation that failed; str() is one line."""


# A benchmark's own command runs OpenBLAS with its own defaults (bench/README.md):
# the test environment's overrides would make the BLAS baseline unfair.
_UNSET_FOR_BENCH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# Rows a commit comparison does not need: the OpenBLAS baseline, the fp64
# reference and the peak probe do not change with the kernels and cost most of
# the time of a small suite (--with-baselines keeps them).
SKIP_BASELINES = ["--no-baseline", "--no-peak", "--reference-max-gflop", "0"]


def bench_command(exe, out, suite=None, reps=3, cores=None, use_taskset=False,
                  bench_filter=None, extra=(), min_time=None, baselines=False):
    """One round's xattn-bench command line (its own flags, then Google Benchmark's)."""
    cmd = [exe]
    if suite:
        cmd += ["--suite", suite]
    if cores and not use_taskset:
        cmd += ["--placement", "cores=" + cores]
    cmd += ["--repetitions", str(reps), "--results-dir", "none"]
    if not baselines:
        cmd += SKIP_BASELINES
    cmd += ["--benchmark_out=" + out, "--benchmark_out_format=json"]
    if min_time:
        cmd += ["--benchmark_min_time=%g" % min_time]
    if bench_filter:
        cmd += ["--benchmark_filter=" + bench_filter]
    cmd += list(extra)
    if cores and use_taskset:
        cmd = ["taskset", "-c", cores] + cmd
    return cmd


def run_once(cmd, out, role, log):
    env = {k: v for k, v in os.environ.items() if k not in _UNSET_FOR_BENCH}
    with open(log, "a") as f:
        f.write("$ %s\n" % " ".join(cmd))
        f.flush()
        rc = children.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                          cwd=os.path.dirname(out)).returncode
    if rc != 0:
        raise RunError("%s: '%s' exited %d; output in %s" % (role, " ".join(cmd), rc, log))
    try:
        with open(out) as f:
            data = json.load(f)
        validate_benchmark_json(out, data)
    except (OSError, ValueError, ResultsError) as e:
        raise RunError("%s: no usable JSON from '%s' (%s)" % (role, " ".join(cmd), e))
    return data


def merge_rounds(rounds):
    """One results document from several runs of the same benchmark executable:
    the first run's context, every run's iteration rows, repetition_index
    renumbered per benchmark, aggregates dropped (they were per round)."""
    merged = {"context": copy.deepcopy(rounds[0].get("context", {})), "benchmarks": []}
    merged["context"]["xattn_compare_rounds"] = len(rounds)
    counts = {}
    for i, data in enumerate(rounds):
        for row in data["benchmarks"]:
            if not is_iteration(row):
                continue
            row = dict(row)
            n = counts.get(row["name"], 0)
            counts[row["name"]] = n + 1
            row["repetition_index"] = n
            row["xattn_round"] = str(i)  # a string, so it is never taken for a counter
            merged["benchmarks"].append(row)
    for row in merged["benchmarks"]:
        row["repetitions"] = counts[row["name"]]
    return merged


PLAN_SCHEMA = "xattn-compare-rounds-1"
PLAN_FILE = "plan.json"


def _round_plan(sides, cmd_of):
    """What makes the rounds of a folder comparable: each side's role and its
    round command (the output file left out)."""
    return {"schema": PLAN_SCHEMA, "sides": [[role, cmd_of(exe, "ROUND.json")] for role, exe in sides]}


def _kept_round(tmp, r, sides):
    """The results of round r when every side of it finished (a valid file
    each), else None: a round is reused whole or run again whole, so that its
    sides stay paired in time."""
    got = []
    for role, _ in sides:
        path = os.path.join(tmp, "round%d-%s.json" % (r, role))
        try:
            with open(path) as f:
                data = json.load(f)
            validate_benchmark_json(path, data)
        except (OSError, ValueError, ResultsError):
            return None
        got.append(data)
    return got


def run_interleaved(sides, rounds, reps, suite=None, cores=None, use_taskset=False,
                    bench_filter=None, extra=(), progress=None, workdir=None, min_time=None,
                    baselines=False, resume_dir=None, resumable=False):
    """sides: [(role, exe), ...], two or three. Returns [merged results dict per side].

    The rounds go to a folder of their own beside a plan of their commands;
    resume_dir names such a folder of an earlier, killed or shorter, run of
    the same commands: its complete rounds are kept and only the rest are run
    (ResultsError when its commands differ). resumable: the caller offers that
    (`xattn compare --continue`), so progress and a failure name the folder."""
    def cmd_of(exe, out):
        return bench_command(exe, out, suite, reps, cores, use_taskset, bench_filter, extra, min_time, baselines)

    plan = _round_plan(sides, cmd_of)
    if resume_dir:
        tmp = os.path.abspath(resume_dir)  # the rounds run in their folder (run_once's cwd)
        try:
            with open(os.path.join(tmp, PLAN_FILE)) as f:
                old = json.load(f)
        except (OSError, ValueError) as e:
            raise ResultsError("--continue %s: not the rounds folder of an xattn compare run (%s: %s)"
                               % (tmp, PLAN_FILE, getattr(e, "strerror", None) or e))
        if old != plan:
            raise ResultsError("--continue %s: its rounds ran other commands (%s); give the same sides, suite, "
                               "--round-reps, --filter, --bench-arg, --min-time and cores"
                               % (tmp, " / ".join(" ".join(c) for _, c in old.get("sides", [])) or "none"))
    else:
        tmp = os.path.abspath(tempfile.mkdtemp(prefix="xattn-compare-", dir=workdir))
        with open(os.path.join(tmp, PLAN_FILE), "w") as f:
            json.dump(plan, f, indent=1)
    if progress and resumable:
        progress("rounds in %s (a killed run goes on with --continue %s)" % (tmp, tmp))
    log = os.path.join(tmp, "runs.log")
    collected = [[] for _ in sides]
    for r in range(rounds):
        kept = _kept_round(tmp, r, sides) if resume_dir else None
        if kept:
            if progress:
                progress("round %d/%d: kept from the earlier run" % (r + 1, rounds))
            for i, data in enumerate(kept):
                collected[i].append(data)
            continue
        order = list(enumerate(sides))
        k = r % len(order)  # rotated: two sides alternate (ABBA), three take turns at each place
        order = order[k:] + order[:k]
        for i, (role, exe) in order:
            out = os.path.join(tmp, "round%d-%s.json" % (r, role))
            if os.path.exists(out):  # a side of a round that did not finish: run again
                os.remove(out)
            if progress:
                progress("round %d/%d: %s" % (r + 1, rounds, role))
            try:
                collected[i].append(run_once(cmd_of(exe, out), out, role, log))
            except RunError as e:
                if not resumable:
                    raise
                raise RunError("%s; the rounds before it are kept: --continue %s runs the rest" % (e, tmp))
    merged = [merge_rounds(c) for c in collected]
    # the sides of one interleaved run: their rounds are paired in time
    # (comparison.round_ratios pairs rounds only between such sides)
    for m in merged:
        m["context"]["xattn_interleave_run"] = os.path.basename(tmp)
    return merged, log
