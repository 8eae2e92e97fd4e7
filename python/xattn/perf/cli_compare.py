"""`xattn compare BASE HEAD`: is HEAD faster or slower than BASE, significantly?

BASE and HEAD are two results files, or two git revisions (or two xattn-bench
executables). Revisions are checked out in their own worktrees, built in
Release, and run interleaved on the same pinned cores; both runs and the
comparison are stored under results/.

Exit status: 0 compared (no regression, or regressions without
--fail-on-regression); 1 a regression and --fail-on-regression; 2 inputs refused
(malformed or mismatched files, unknown revision); 3 a build or a run failed.
"""
import argparse
import json
import os
import sys

from . import comparison, gitbuild, runner
from ..results import ResultFile, ResultsError, commit_of, default_results_dir, load_results, \
    machine_of, store_json, validate_benchmark_json

EXIT_OK, EXIT_REGRESSION, EXIT_REFUSED, EXIT_FAILED = 0, 1, 2, 3


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="xattn compare",
        description="Compare two results files, or build and run two git revisions "
                    "interleaved, and report significant changes per benchmark.")
    p.add_argument("base", metavar="BASE", help="results file, git revision or xattn-bench executable")
    p.add_argument("head", metavar="HEAD", help="results file, git revision or xattn-bench executable")
    p.add_argument("--suite", default="smoke", help="xattn-bench suite to run for revisions (default: smoke)")
    p.add_argument("--reps", type=int, default=5, metavar="N",
                   help="rounds of interleaved runs (A B A B ...; default 5)")
    p.add_argument("--round-reps", type=int, default=3, metavar="R",
                   help="repetitions of each round (xattn-bench --repetitions; default 3): N*R samples a side")
    p.add_argument("--min-time", type=float, default=0.05, metavar="S",
                   help="--benchmark_min_time of each repetition in seconds (default 0.05; 0: bench default)")
    p.add_argument("--with-baselines", action="store_true",
                   help="also run the OpenBLAS, reference and peak rows (skipped by default: kernels only)")
    p.add_argument("--threshold", type=float, default=5.0, metavar="PCT",
                   help="slower by more than PCT %% (and significant) is a regression (default 5)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the U test (default 0.05)")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 when any regression is found")
    p.add_argument("--cores", metavar="LIST", help="pin both sides to these cores, e.g. 0,1")
    p.add_argument("--taskset", action="store_true",
                   help="pin with taskset -c instead of xattn-bench --placement cores=LIST")
    p.add_argument("--filter", metavar="REGEX", help="--benchmark_filter for the runs")
    p.add_argument("--bench-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for xattn-bench (repeatable)")
    p.add_argument("--cmake-arg", action="append", default=[], metavar="ARG",
                   help="extra CMake argument for building revisions, e.g. "
                        "--cmake-arg=-DXATTN_VARIANTS='64x64;16x256' (repeatable)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="build parallelism (default 2)")
    p.add_argument("--work-dir", help="worktrees and builds of revisions (default <repo>/build-compare)")
    p.add_argument("--allow-mixed-machines", action="store_true",
                   help="compare results from different machines")
    p.add_argument("--results-dir", help="where to store runs and the comparison "
                   "(default $XATTN_RESULTS_DIR or <repo>/results)")
    p.add_argument("--no-store", action="store_true", help="store nothing under results/")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of a table")
    a = p.parse_args(argv)
    if a.reps < 1 or a.round_reps < 1:
        p.error("--reps and --round-reps must be at least 1")
    if a.threshold < 0 or not 0 < a.alpha < 1:
        p.error("--threshold must be >= 0 and --alpha in (0, 1)")
    return a


def classify(arg, role, repo):
    """('file'|'exe'|'rev', value) for one of BASE/HEAD."""
    if os.path.isfile(arg):
        if os.access(arg, os.X_OK) and not arg.endswith(".json"):
            return "exe", os.path.abspath(arg)
        return "file", arg
    if repo and gitbuild.resolve(arg, repo):
        return "rev", arg
    raise ResultsError("%s %r: neither a results file nor a git revision%s"
                       % (role, arg, "" if repo else " (not inside a git repository)"))


def _say(msg):
    print("xattn compare: " + msg, file=sys.stderr, flush=True)


def _run_sides(a, kinds, repo):
    """Build (if revisions) and run both sides; returns two ResultFile objects."""
    sides = []
    work = a.work_dir or os.path.join(repo or os.getcwd(), "build-compare")
    for role, (kind, value) in zip(("base", "head"), kinds):
        if kind == "rev":
            _say("building %s %s ..." % (role, value))
            sha, exe = gitbuild.build_revision(repo, value, work, a.cmake_arg, a.jobs, role)
        else:
            exe = value
        sides.append((role, exe))
    _say("running %d interleaved rounds x %d repetitions, suite %s%s"
         % (a.reps, a.round_reps, a.suite, ", cores " + a.cores if a.cores else ""))
    os.makedirs(work, exist_ok=True)
    merged, log = runner.run_interleaved(sides, a.reps, a.round_reps, a.suite, a.cores, a.taskset,
                                         a.filter, a.bench_arg, progress=_say, workdir=work,
                                         min_time=a.min_time, baselines=a.with_baselines)
    files = []
    for (role, _), data in zip(sides, merged):
        path = "<%s run>" % role
        if not a.no_store:
            path = store_json(a.results_dir, machine_of(data["context"]), commit_of(data["context"]),
                              "compare-%s-%s" % (a.suite, role), data)
            _say("%s run stored: %s" % (role, path))
        validate_benchmark_json(path, data)
        files.append(ResultFile(path, data))
    return files


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    repo = gitbuild.toplevel()
    a.results_dir = a.results_dir or default_results_dir()
    try:
        kinds = [classify(a.base, "BASE", repo), classify(a.head, "HEAD", repo)]
        if {k for k, _ in kinds} & {"file"} and {k for k, _ in kinds} != {"file"}:
            raise ResultsError("BASE and HEAD must both be results files, or both revisions/executables "
                               "(got %s and %s)" % (kinds[0][0], kinds[1][0]))
        if kinds[0][0] == "file":
            base, head = load_results(kinds[0][1]), load_results(kinds[1][1])
        else:
            try:
                base, head = _run_sides(a, kinds, repo)
            except (gitbuild.BuildError, runner.RunError) as e:
                print("xattn compare: %s" % e, file=sys.stderr)
                return EXIT_FAILED
        cmp = comparison.compare(base, head, a.alpha, a.threshold, a.allow_mixed_machines)
    except ResultsError as e:
        print("xattn compare: %s" % e, file=sys.stderr)
        return EXIT_REFUSED
    if not a.no_store:
        machine = head.machine if cmp["machine"] != "mixed" else "mixed-machines"
        cmp["stored_at"] = store_json(a.results_dir, machine, head.commit,
                                      "compare-vs-%s" % base.commit, cmp)
    if a.json:
        print(json.dumps(cmp, indent=1))
    else:
        print(comparison.format_text(cmp))
        if cmp.get("stored_at"):
            print("comparison stored: %s" % cmp["stored_at"])
    if a.fail_on_regression and cmp["summary"]["regression"] > 0:
        return EXIT_REGRESSION
    return EXIT_OK
