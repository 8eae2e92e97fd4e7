"""Index of the runs stored under results/, and trends across commits.

Runs are grouped by machine (never mixed unless asked) and by commit; commits
are ordered as `git log` orders them (oldest first), a '-dirty' commit right
after its clean one, and commits that git does not know (another clone, 'nogit')
last, in the order of their runs' timestamps.
"""
import os
import re
import subprocess

from . import stats
from ..results import (ResultsError, classify_file, iter_json_files, load_results, row_counters, row_seconds,
                       why_not_results)


class Run:
    """One stored results file, as history sees it."""

    def __init__(self, rf):
        self.path = rf.path
        self.machine = rf.machine
        self.commit = rf.commit
        self.label = rf.label
        self.timestamp = rf.timestamp or ""
        self.file = rf


def load_runs(paths, on_skip=None):
    """Every benchmark results file under paths (compare outputs and tuner reports
    are passed over; other JSON is reported through on_skip(path, reason))."""
    runs = []
    for path in iter_json_files(paths):
        kind = classify_file(path)
        if kind != "results":
            if on_skip and kind is None:
                on_skip(path, why_not_results(path))
            continue
        try:
            runs.append(Run(load_results(path)))
        except ResultsError as e:
            if on_skip:
                on_skip(path, str(e))
    return runs


def git_commit_order(repo=None):
    """[(full hash, unix time, subject)] oldest first, from `git log --all`."""
    try:
        out = subprocess.run(["git", "log", "--all", "--topo-order", "--reverse", "--format=%H %ct %s"],
                             cwd=repo, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    order = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) >= 2:
            order.append((parts[0], int(parts[1]), parts[2] if len(parts) > 2 else ""))
    return order


def order_commits(commits, runs_by_commit, repo=None):
    """commits sorted in git-log order; returns [(commit, position or None, subject)]."""
    log = git_commit_order(repo)

    def lookup(commit):
        base = commit[:-len("-dirty")] if commit.endswith("-dirty") else commit
        base = re.sub(r"^.*-g(?=[0-9a-f]{7,}$)", "", base)  # `git describe` output
        if not re.fullmatch(r"[0-9a-f]{7,40}", base):
            return None, ""
        for i, (h, _, subject) in enumerate(log):
            if h.startswith(base):
                return i, subject
        return None, ""

    keyed = []
    for c in commits:
        pos, subject = lookup(c)
        first_ts = min(r.timestamp for r in runs_by_commit[c])
        dirty = 1 if c.endswith("-dirty") else 0
        key = (0, pos, dirty, first_ts) if pos is not None else (1, 0, 0, first_ts)
        keyed.append((key, c, pos, subject))
    keyed.sort()
    return [(c, pos, subject) for _, c, pos, subject in keyed]


def group(runs):
    """{machine: {commit: [Run]}}"""
    out = {}
    for r in runs:
        out.setdefault(r.machine, {}).setdefault(r.commit, []).append(r)
    return out


def row_value(row, counter):
    """The value of counter in a row: a user counter, or "time" for the real
    time in seconds."""
    if counter == "time":
        return row_seconds(row)
    return row_counters(row).get(counter)


def trend(runs, name_regex, repo=None, counter="gflops", merge_resolved=False, keep_samples=False):
    """For one machine's runs: {benchmark: [point per commit]} in commit order,
    over the rows whose name matches name_regex. A point is the median of the
    counter ("time": real time in seconds) over every repetition of that
    benchmark at that commit; keep_samples adds the repetitions' values
    ('samples'), which step detection needs.

    merge_resolved: follow a workload across commits that changed what "auto"
    resolves to (isa/variant/layout in the name, comparison.RESOLVED_FIELDS);
    the series is keyed by the name without those fields, and where one commit
    has several such rows (a variant sweep) the best median is taken."""
    from .comparison import unresolved_key
    rx = re.compile(name_regex)
    by_commit = {}
    for r in runs:
        by_commit.setdefault(r.commit, []).append(r)
    ordered = order_commits(list(by_commit), by_commit, repo)
    series = {}
    for commit, pos, subject in ordered:
        values = {}
        for run in by_commit[commit]:
            for name in run.file.names():
                if not rx.search(name):
                    continue
                for row in run.file.samples(name):
                    v = row_value(row, counter)
                    if v is not None:
                        values.setdefault(name, []).append(v)
        medians = {}
        for name, vals in values.items():
            key = unresolved_key(name) if merge_resolved else name
            m = (stats.median(vals), len(vals), name, vals)
            # the best row where several share a key: fastest time, highest rate
            if key not in medians or (m[0] < medians[key][0] if counter == "time" else m[0] > medians[key][0]):
                medians[key] = m
        for key, (med, n, name, vals) in medians.items():
            point = {"commit": commit, "in_git_log": pos is not None, "subject": subject,
                     "median": med, "n": n, "name": name}
            if keep_samples:
                point["samples"] = vals
            series.setdefault(key, []).append(point)
    return series


def machines_matching(runs, name_regex):
    rx = re.compile(name_regex)
    return sorted({r.machine for r in runs if any(rx.search(n) for n in r.file.names())})


def default_paths():
    from ..results import default_results_dir
    d = default_results_dir()
    return [d] if os.path.isdir(d) else []
