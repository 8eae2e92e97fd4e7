"""`xattn history`: what has been measured, where, and how a benchmark moved.

  xattn history list  [--machine M] [--results DIR]
  xattn history trend NAME_REGEX [--machine M | --all-machines] [--counter gflops] [--json]

Exit status: 0 shown; 2 refused (no results, several machines without
--machine or --all-machines, a bad regex, nothing matches).
"""
import argparse
import json
import re
import sys

from . import history
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
    return p.parse_args(argv)


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
    try:
        re.compile(a.name_regex)
    except re.error as e:
        return _refuse("NAME_REGEX %r: %s" % (a.name_regex, e))
    runs = _select_machine(runs, a.machine)
    machines = history.machines_matching(runs, a.name_regex)
    if not machines:
        return _refuse("no benchmark matches %r%s" % (a.name_regex, " on machine %s" % a.machine if a.machine else ""))
    if len(machines) > 1 and not a.all_machines:
        return _refuse("%r matches runs from %d machines (%s); pick one with --machine or pass --all-machines"
                       % (a.name_regex, len(machines), ", ".join(machines)))
    out = {}
    for m in machines:
        out[m] = history.trend([r for r in runs if r.machine == m], a.name_regex, counter=a.counter,
                               merge_resolved=a.merge_resolved)
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


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    paths = a.results or [default_results_dir()]
    skipped = []
    runs = history.load_runs(paths, on_skip=lambda p, why: skipped.append((p, why)))
    for p, why in skipped:
        print("xattn history: skipping %s: %s" % (p, why), file=sys.stderr)
    if not runs:
        return _refuse("no results files under %s" % ", ".join(paths))
    return cmd_list(a, runs) if a.cmd == "list" else cmd_trend(a, runs)
