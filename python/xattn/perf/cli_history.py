"""`xattn history`: what has been measured, where, how a benchmark moved, and
measuring a range of commits.

  xattn history list  [--machine M] [--results DIR]
  xattn history trend NAME_REGEX [--machine M | --all-machines] [--counter gflops] [--json]
  xattn history steps [NAME_REGEX] [--machine M] [--counter gflops] [--min-step PCT] [--alpha A] [--json]
  xattn history run   REV_RANGE [--last N] [--every N] [--suite smoke] [--reps N] [--round-reps R] ...

Exit status: 0 shown / measured; 2 refused (no results, several machines
without --machine or --all-machines, a bad regex, nothing matches, a range
without commits); 3 (run) a commit's run failed (the others were measured).
"""
import argparse
import json
import os
import re
import sys

from . import backfill, cli_options, gitbuild, history, runner, stats, steps
from ..results import default_results_dir


def parse_args(argv):
    p = argparse.ArgumentParser(prog="xattn history", description="Runs stored under results/ and trends across commits.")
    p.add_argument("--results", action="append", metavar="PATH",
                   help="results folder or file (repeatable; default $XATTN_RESULTS_DIR or <repo>/results)")
    sub = p.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("list", help="runs per machine and commit")
    pl.add_argument("--machine", help="only this machine (slug, or a prefix of it)")
    pt = sub.add_parser("trend", help="one benchmark's median across commits, in git-log order")
    pt.add_argument("name_regex", metavar="NAME_REGEX", help="regex searched in benchmark names")
    pt.add_argument("--machine", help="machine (slug, or a prefix of it)")
    pt.add_argument("--all-machines", action="store_true", help="show every machine (each its own table)")
    pt.add_argument("--counter", default="gflops", help="counter to follow (default gflops)")
    pt.add_argument("--merge-resolved", action="store_true",
                    help="follow a workload across commits that changed the auto-resolved isa/variant/layout "
                         "(best row per commit where several)")
    pt.add_argument("--json", action="store_true", help="print the trend as JSON")
    ps = sub.add_parser("steps", help="commits where a benchmark's median moved beyond the noise (change points)")
    ps.add_argument("name_regex", metavar="NAME_REGEX", nargs="?", default=".",
                    help="regex searched in benchmark names (default: every benchmark)")
    ps.add_argument("--machine", help="machine (slug, or a prefix of it); needed when several measured the benchmarks")
    ps.add_argument("--counter", default="gflops", help="counter to follow (default gflops; 'time': real time)")
    ps.add_argument("--label", metavar="REGEX", help="only runs whose file label matches, e.g. '^history-smoke$'")
    ps.add_argument("--min-step", type=float, default=100 * steps.DEFAULT_MIN_STEP, metavar="PCT",
                    help="smallest step reported, in %% of the median (default %g)" % (100 * steps.DEFAULT_MIN_STEP))
    ps.add_argument("--alpha", type=float, default=steps.DEFAULT_ALPHA,
                    help="significance level of the noise and U tests (default %g)" % steps.DEFAULT_ALPHA)
    ps.add_argument("--json", action="store_true", help="print the steps as JSON")
    pr = sub.add_parser("run", help="build and measure each commit of a range into results/ (backfill; resumable)")
    pr.add_argument("rev_range", metavar="REV_RANGE",
                    help="A..B (first-parent commits after A up to B) or one revision (with --last N: the N "
                         "commits ending there)")
    pr.add_argument("--last", type=int, metavar="N", help="the N first-parent commits ending at REV_RANGE")
    pr.add_argument("--all-parents", action="store_true",
                    help="every commit of the range, merged branches too (git rev-list order), "
                         "not only the first-parent line")
    pr.add_argument("--every", type=int, default=1, metavar="N",
                    help="measure every Nth commit, counting back from the newest (default 1: all)")
    pr.add_argument("--machine", help="this machine's name as xattn-bench stores it (skips the probe run "
                                      "that finds it when some commits were measured before); a commit whose "
                                      "xattn-bench spells it differently is stored under this name, its own "
                                      "kept as context xattn_machine_reported")
    pr.add_argument("--results-dir", help="where runs are stored (default $XATTN_RESULTS_DIR or <repo>/results)")
    cli_options.add_run_options(pr, reps=3, round_reps=3)
    cli_options.add_build_options(pr)
    a = p.parse_args(argv)
    if a.cmd == "run":
        cli_options.check_run_options(pr, a)
        if a.every < 1 or (a.last is not None and a.last < 1):
            pr.error("--every and --last must be at least 1")
    if a.cmd == "steps" and (a.min_step < 0 or not 0 < a.alpha < 1):
        ps.error("--min-step must be >= 0 and --alpha in (0, 1)")
    return a


def _refuse(msg):
    print("xattn history: " + msg, file=sys.stderr)
    return 2


def _select_machine(runs, machine):
    if not machine:
        return runs
    exact = [r for r in runs if r.machine == machine]
    return exact or [r for r in runs if r.machine.startswith(machine)]


def cmd_list(a, runs):
    runs = _select_machine(runs, a.machine)
    if not runs:
        return _refuse("no runs for machine %r" % a.machine)
    for machine, commits in sorted(history.group(runs).items()):
        print("machine %s: %d run(s), %d commit(s)" % (machine, sum(len(v) for v in commits.values()), len(commits)))
        for commit, pos, subject in history.order_commits(list(commits), commits):
            where = ("" if pos is not None else "  (not in git log)")
            print("  %s  %s%s" % (commit, subject[:60], where))
            for r in sorted(commits[commit], key=lambda r: r.timestamp):
                print("    %-17s %-28s %3d benchmarks  %s" % (r.timestamp or "-", r.label, len(r.file.names()), r.path))
    return 0


def cmd_trend(a, runs):
    out = _series(runs, a)
    if isinstance(out, int):
        return out
    if a.json:
        print(json.dumps({"counter": a.counter, "regex": a.name_regex, "machines": out}, indent=1))
        return 0
    for m, series in out.items():
        print("machine %s, median %s per commit (oldest first)" % (m, a.counter))
        for name, points in series.items():
            print("  %s" % name)
            prev = None
            for p in points:
                change = "" if prev is None else "  %+.1f%%" % (100.0 * (p["median"] / prev - 1)) if prev else ""
                print("    %-20s %12.4g  n=%-3d%s  %s%s" % (p["commit"], p["median"], p["n"], change,
                                                         p["subject"][:50],
                                                         "" if p["in_git_log"] else " (not in git log)"))
                prev = p["median"]
    return 0


def _series(runs, a):
    """{machine: {benchmark: points with samples}} for trend and steps, or an
    int exit status after a refusal."""
    try:
        re.compile(a.name_regex)
    except re.error as e:
        return _refuse("NAME_REGEX %r: %s" % (a.name_regex, e))
    if getattr(a, "label", None):
        try:
            label_rx = re.compile(a.label)
        except re.error as e:
            return _refuse("--label %r: %s" % (a.label, e))
        runs = [r for r in runs if label_rx.search(r.label)]
    runs = _select_machine(runs, a.machine)
    machines = history.machines_matching(runs, a.name_regex)
    if not machines:
        return _refuse("no benchmark matches %r%s" % (a.name_regex, " on machine %s" % a.machine if a.machine else ""))
    if len(machines) > 1 and not getattr(a, "all_machines", False):
        return _refuse("%r matches runs from %d machines (%s); pick one with --machine%s"
                       % (a.name_regex, len(machines), ", ".join(machines),
                          " or pass --all-machines" if a.cmd == "trend" else ""))
    return {m: history.trend([r for r in runs if r.machine == m], a.name_regex, counter=a.counter,
                             merge_resolved=getattr(a, "merge_resolved", False), keep_samples=a.cmd == "steps")
            for m in machines}


def _pct(x):
    return "%+.1f%%" % (100.0 * x)


def cmd_steps(a, runs):
    out = _series(runs, a)
    if isinstance(out, int):
        return out
    machine, series = next(iter(out.items()))
    per = {name: steps.find_steps(points, a.alpha, a.min_step / 100.0) for name, points in series.items()}
    commits = []
    for points in series.values():
        for p in points:
            if p["commit"] not in commits:
                commits.append(p["commit"])
    commits = [c for c, _, _ in history.order_commits(commits, {c: [r for r in runs if r.commit == c]
                                                                for c in commits})]
    by_commit = steps.steps_by_commit(per, commits)
    too_short = sorted(n for n, pts in series.items() if len(pts) < steps.MIN_COMMITS)
    if a.json:
        for pts in series.values():
            for p in pts:
                p.pop("samples", None)
        print(json.dumps({"machine": machine, "counter": a.counter, "regex": a.name_regex,
                          "alpha": a.alpha, "min_step_pct": a.min_step, "commits": commits,
                          "steps": {n: s for n, s in per.items() if s},
                          "by_commit": [{"commit": c, "benchmarks": [n for n, _ in hits]} for c, hits in by_commit],
                          "too_few_commits": too_short}, indent=1))
        return 0
    print("machine %s: %d benchmark(s) over %d commit(s), counter %s; step = binary segmentation of per-commit "
          "medians, kept when beyond the commit-to-commit noise (z), U test p < %g and larger than %g%%"
          % (machine, len(series), len(commits), a.counter, a.alpha, a.min_step))
    if not by_commit:
        print("no steps")
    for commit, hits in by_commit:
        s0 = hits[0][1]
        sizes = sorted(s["size"] for _, s in hits)
        print("step at %s (after %s) %s: %d of %d benchmark(s), median size %s"
              % (commit, s0["previous"], s0["subject"][:60], len(hits), len(series), _pct(stats.median(sizes))))
        for name, s in hits:
            print("  %8s  %s -> %s  p=%-8s z=%5.1f (needed %.1f)  %d|%d commits  %s"
                  % (_pct(s["size"]), "%.4g" % s["before"], "%.4g" % s["after"],
                     "%.2g" % s["pvalue"], s["z"], s["z_needed"], s["commits_before"], s["commits_after"], name))
    if too_short:
        print("%d benchmark(s) measured at fewer than %d commits were not examined, e.g. %s"
              % (len(too_short), steps.MIN_COMMITS, too_short[0]))
    return 0


def _say(msg):
    print("xattn history: " + msg, file=sys.stderr, flush=True)


def cmd_run(a):
    repo = gitbuild.toplevel()
    if not repo:
        return _refuse("run: not inside a git repository")
    try:
        commits = backfill.commits_of_range(repo, a.rev_range, a.last, a.every, a.all_parents)
    except backfill.RangeError as e:
        return _refuse(str(e))
    work = a.work_dir or os.path.join(repo, "build-compare")
    opts = cli_options.run_settings(a)
    opts["machine"] = a.machine
    results_dir = a.results_dir or default_results_dir()
    _say("%d commit(s) of %s, suite %s, %d round(s) x %d repetition(s) each, results in %s"
         % (len(commits), a.rev_range, a.suite, a.reps, a.round_reps, results_dir))
    job = backfill.Backfill(repo, commits, results_dir, work, opts, _say)
    try:
        failures = job.run()
    except (runner.RunError, gitbuild.BuildError) as e:
        print("xattn history: %s" % e, file=sys.stderr)
        return 3
    counts = {}
    for _, _, status, _ in job.report:
        counts[status] = counts.get(status, 0) + 1
    print("history run %s on %s: %s" % (a.rev_range, job.machine or "?",
                                       ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items()))))
    for sha, subject, status, detail in job.report:
        print("  %s  %-16s %s" % (sha[:12], status, subject[:60]))
    return 3 if failures else 0


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.cmd == "run":
        return cmd_run(a)
    paths = a.results or [default_results_dir()]
    skipped = []
    runs = history.load_runs(paths, on_skip=lambda p, why: skipped.append((p, why)))
    if not runs:  # one line, with the first reason
        first = "; skipped %s: %s%s" % (skipped[0] + (" (and %d more)" % (len(skipped) - 1) if len(skipped) > 1 else "",)) \
            if skipped else ""
        return _refuse("no results files under %s%s" % (", ".join(paths), first))
    for p, why in skipped:
        print("xattn history: skipping %s: %s" % (p, why), file=sys.stderr)
    return {"list": cmd_list, "trend": cmd_trend, "steps": cmd_steps}[a.cmd](a, runs)
