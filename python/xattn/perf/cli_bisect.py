"""`xattn bisect GOOD BAD`: find the first commit where benchmarks slowed down
(see perfbisect.py for the method).

Exit status: 0 found; 1 BAD is not slower than GOOD (nothing to bisect); 2
refused (unknown revisions, GOOD not an ancestor of BAD, bad options); 3 GOOD or
BAD does not build, or a run failed.
"""
import argparse
import json
import os
import re
import sys

from . import cli_options, gitbuild, perfbisect, runner
from ..results import default_results_dir


def parse_args(argv):
    p = argparse.ArgumentParser(prog="xattn bisect",
                                description="Find the first commit between GOOD and BAD where the benchmarks "
                                            "slowed down, measuring midpoints interleaved with GOOD.")
    p.add_argument("good", metavar="GOOD", help="a revision with the old speed")
    p.add_argument("bad", metavar="BAD", help="a later revision (GOOD is its ancestor) that is slower")
    cli_options.add_run_options(p)
    cli_options.add_test_options(p)
    cli_options.add_build_options(p)
    p.add_argument("--results-dir", help="where the runs are stored (default $XATTN_RESULTS_DIR or <repo>/results)")
    p.add_argument("--no-store", action="store_true", help="store nothing under results/")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    a = p.parse_args(argv)
    cli_options.check_run_options(p, a)
    cli_options.check_test_options(p, a)
    if a.filter:
        try:
            re.compile(a.filter)
        except re.error as e:
            p.error("--filter %r: %s" % (a.filter, e))
    return a


def _say(msg):
    print("xattn bisect: " + msg, file=sys.stderr, flush=True)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    repo = gitbuild.toplevel()
    if not repo:
        print("xattn bisect: not inside a git repository", file=sys.stderr)
        return 2
    opts = cli_options.run_settings(a)
    opts.update({"alpha": a.alpha, "threshold_pct": a.threshold, "store": not a.no_store,
                 "results_dir": a.results_dir or default_results_dir()})
    work = a.work_dir or os.path.join(repo, "build-compare")
    try:
        job = perfbisect.Bisect(repo, a.good, a.bad, work, opts, _say)
    except perfbisect.BisectError as e:
        print("xattn bisect: %s" % e, file=sys.stderr)
        return 2
    try:
        res = job.run()
    except (perfbisect.BisectError, runner.RunError, gitbuild.BuildError) as e:
        print("xattn bisect: %s" % e, file=sys.stderr)
        return 3
    print(json.dumps(res, indent=1) if a.json else perfbisect.format_text(res))
    return 0 if res["first_bad"] else 1
