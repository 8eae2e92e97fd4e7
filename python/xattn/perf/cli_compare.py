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

from . import cli_options, comparison, gitbuild, runner
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
    cli_options.add_run_options(p)
    cli_options.add_test_options(p)
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 when any regression is found")
    p.add_argument("--control", action="store_true",
                   help="run BASE a second time in every round (A/A; rounds rotate base, head, control): a "
                        "change counts only when its median round ratio lies outside the control's range "
                        "(executables or revisions; 1.5x the run time)")
    cli_options.add_build_options(p)
    p.add_argument("--allow-mixed-machines", action="store_true",
                   help="compare results from different machines")
    p.add_argument("--results-dir", help="where to store runs and the comparison "
                   "(default $XATTN_RESULTS_DIR or <repo>/results)")
    p.add_argument("--no-store", action="store_true", help="store nothing under results/")
    p.add_argument("--continue", dest="resume_dir", metavar="DIR",
                   help="go on with the rounds of an earlier run of the same sides and settings "
                        "(the folder it named at its start): its complete rounds are kept, the rest run")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of a table")
    p.add_argument("--markdown", metavar="FILE",
                   help="append a short markdown summary to FILE (for CI, e.g. \"$GITHUB_STEP_SUMMARY\"); "
                        "a refusal or failure is summarized too")
    a = p.parse_args(argv)
    if a.resume_dir and not os.path.isdir(a.resume_dir):
        p.error("--continue %s: no such folder" % a.resume_dir)
    cli_options.check_run_options(p, a)
    cli_options.check_test_options(p, a)
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
    """Build (if revisions) and run both sides (and the control, base again,
    with --control); returns a ResultFile per side."""
    sides = []
    work = a.work_dir or os.path.join(repo or os.getcwd(), "build-compare")
    for role, (kind, value) in zip(("base", "head"), kinds):
        if kind == "rev":
            _say("building %s %s ..." % (role, value))
            sha, exe = gitbuild.build_revision(repo, value, work, a.cmake_arg, a.jobs, role)
        else:
            exe = value
        sides.append((role, exe))
    if a.control:
        sides.append(("control", sides[0][1]))
    _say("running %d interleaved rounds x %d repetitions, suite %s%s"
         % (a.reps, a.round_reps, a.suite, ", cores " + a.cores if a.cores else ""))
    os.makedirs(work, exist_ok=True)
    merged, log = runner.run_interleaved(sides, a.reps, a.round_reps, a.suite, a.cores, a.taskset,
                                         a.filter, a.bench_arg, progress=_say, workdir=work,
                                         min_time=a.min_time, baselines=a.with_baselines,
                                         resume_dir=a.resume_dir, resumable=True)
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


def _append_markdown(path, text):
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print("xattn compare: --markdown %s: %s" % (path, e.strerror), file=sys.stderr)


def _fail(a, status, msg):
    print("xattn compare: %s" % msg, file=sys.stderr)
    _append_markdown(a.markdown, "### xattn performance: not compared\n\n`xattn compare %s %s`: %s\n"
                     % (a.base, a.head, msg))
    return status


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
            if a.resume_dir:
                raise ResultsError("--continue %s: BASE and HEAD are results files; it goes on with the "
                                   "rounds of two executables or revisions" % a.resume_dir)
            if a.control:
                raise ResultsError("--control: BASE and HEAD are results files; the control runs BASE's "
                                   "executable a second time in every round, so it needs two executables "
                                   "or revisions")
            base, head = load_results(kinds[0][1]), load_results(kinds[1][1])
            control = None
        else:
            try:
                base, head, *rest = _run_sides(a, kinds, repo)
            except (gitbuild.BuildError, runner.RunError) as e:
                return _fail(a, EXIT_FAILED, str(e))
            control = rest[0] if rest else None
        cmp = comparison.compare(base, head, a.alpha, a.threshold, a.allow_mixed_machines, control)
    except ResultsError as e:
        return _fail(a, EXIT_REFUSED, str(e))
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
    _append_markdown(a.markdown, comparison.format_markdown(cmp))
    if a.fail_on_regression and cmp["summary"]["regression"] > 0:
        return EXIT_REGRESSION
    return EXIT_OK
