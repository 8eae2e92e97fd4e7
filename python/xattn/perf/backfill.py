"""`xattn history run REV_RANGE`: build and measure each commit of a range.

Every commit is built like `xattn compare` builds a revision (gitbuild: one
detached worktree and one build folder per commit under the work folder, kept
and reused), then measured alone (rounds x repetitions of the suite on the same
cores, runner.bench_command) and stored as
results/<machine>/<commit>/<stamp>_history-<suite>.json.

Resuming: a commit that already has a history-<suite> file for this machine is
skipped, and each commit's file is written atomically once its measurement is
complete (results.store_json), so a killed backfill loses at most the commit it
was measuring; run the same command again to go on. A commit that does not
build is skipped and remembered (gitbuild's build-failed.json), so the next run
does not build it again.
"""
import glob
import json
import os
import subprocess
import tempfile

from . import gitbuild, runner
from ..results import commit_of, machine_of, store_json


class RangeError(Exception):
    """A revision range that names no commits; str() is one line."""


def commits_of_range(repo, rev_range, last=None, every=1, all_parents=False):
    """[(full sha, subject)] oldest first. rev_range is 'A..B' (the first-parent
    commits after A up to B, as git rev-list lists them) or one revision REV:
    that commit, or with last=N the N first-parent commits ending at REV.
    all_parents: every commit of the range (merged branches too, newest by
    commit date first, as git rev-list orders them), not only first parents.
    every=N keeps every Nth commit counting back from the newest (which is
    always kept)."""
    walk = [] if all_parents else ["--first-parent"]
    if ".." in rev_range:
        if last:
            raise RangeError("--last applies to a single revision, not to the range %r" % rev_range)
        args = ["rev-list"] + walk + [rev_range]
    else:
        if not gitbuild.resolve(rev_range, repo):
            raise RangeError("REV_RANGE %r: not a git revision of %s" % (rev_range, repo))
        args = ["rev-list"] + walk + ["-n", str(last or 1), rev_range]
    p = subprocess.run(["git"] + args, cwd=repo, capture_output=True, text=True)
    if p.returncode != 0:
        raise RangeError("REV_RANGE %r: %s" % (rev_range, (p.stderr.strip().splitlines() or ["git rev-list failed"])[-1]))
    shas = p.stdout.split()[::-1]  # oldest first
    if not shas:
        raise RangeError("REV_RANGE %r: no commits" % rev_range)
    if every > 1:
        shas = shas[::-1][::every][::-1]
    subjects = {}
    out = subprocess.run(["git", "log", "--no-walk=unsorted", "--format=%H %s"] + shas, cwd=repo,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        h, _, s = line.partition(" ")
        subjects[h] = s
    return [(h, subjects.get(h, "")) for h in shas]


def label_of(suite):
    return "history-" + suite


def measured_commits(results_dir, machine, label):
    """Commit folders (as stored: 12 hex digits, maybe '-dirty') of this machine
    that hold a file with this label."""
    done = set()
    for path in glob.glob(os.path.join(results_dir, machine, "*", "*_%s.json" % label)):
        done.add(os.path.basename(os.path.dirname(path)))
    return done


def commits_with_label(results_dir, label):
    """{commit folder: {machine}} over every machine."""
    out = {}
    for path in glob.glob(os.path.join(results_dir, "*", "*", "*_%s.json" % label)):
        commit_dir = os.path.dirname(path)
        out.setdefault(os.path.basename(commit_dir), set()).add(os.path.basename(os.path.dirname(commit_dir)))
    return out


def probe_machine(exe, opts, workdir):
    """This machine's name as xattn-bench names it (context xattn_machine), from
    one short run: one repetition of the suite at the smallest time."""
    tmp = tempfile.mkdtemp(prefix="xattn-history-probe-", dir=workdir)
    out = os.path.join(tmp, "probe.json")
    cmd = runner.bench_command(exe, out, opts["suite"], 1, opts.get("cores"), opts.get("taskset"),
                               opts.get("filter"), opts.get("bench_args", ()), min_time=0.001)
    data = runner.run_once(cmd, out, "machine probe", os.path.join(tmp, "probe.log"))
    return machine_of(data.get("context", {}))


class Backfill:
    """One `xattn history run`: commits is [(sha, subject)], opts the run settings
    (suite, rounds, reps, cores, taskset, filter, bench_args, min_time, cmake_args,
    jobs, machine), say(msg) prints progress."""

    def __init__(self, repo, commits, results_dir, work, opts, say):
        self.repo, self.commits, self.results_dir, self.work = repo, commits, results_dir, work
        self.opts, self.say = opts, say
        self.label = label_of(opts["suite"])
        self.machine = opts.get("machine")
        self.report = []  # (sha, subject, status, detail)

    def _stored_anywhere(self):
        return commits_with_label(self.results_dir, self.label)

    def _learn_machine(self):
        """The machine name, when skipping needs it: from --machine, else a probe
        with a bench already built for the range (else the newest commit's)."""
        if self.machine:
            return self.machine
        exe = None
        for sha, _ in reversed(self.commits):
            exe = gitbuild.find_executable(os.path.join(self.work, sha[:12], "build"), gitbuild.BENCH_TARGET)
            if exe:
                break
        if not exe:
            for sha, _ in reversed(self.commits):
                try:
                    _, exe = self._build(sha)
                    break
                except gitbuild.BuildError:
                    continue
        if not exe:
            raise runner.RunError("no commit of the range builds; nothing to measure")
        self.machine = probe_machine(exe, self.opts, self.work)
        self.say("this machine is %s (probe run; --machine %s skips the probe)" % (self.machine, self.machine))
        return self.machine

    def _build(self, sha):
        return gitbuild.build_revision(self.repo, sha, self.work, self.opts.get("cmake_args", ()),
                                       self.opts.get("jobs", 2), "commit", remember_failure=True)

    def _measure(self, sha, exe):
        o = self.opts
        merged, log = runner.run_interleaved([(sha[:12], exe)], o["rounds"], o["reps"], o["suite"], o.get("cores"),
                                             o.get("taskset"), o.get("filter"), o.get("bench_args", ()),
                                             workdir=self.work, min_time=o.get("min_time"),
                                             baselines=o.get("baselines", False))
        data = merged[0]
        ctx = data.get("context", {})
        data["context"]["xattn_history_run"] = json.dumps({"suite": o["suite"], "rounds": o["rounds"],
                                                           "reps": o["reps"], "filter": o.get("filter")})
        commit, machine = commit_of(ctx), machine_of(ctx)
        if not commit.startswith(sha[:12]):
            raise runner.RunError("commit %s: its xattn-bench reports commit %r (a dirty or foreign build?); "
                                  "not stored" % (sha[:12], commit))
        if self.opts.get("machine") and machine != self.opts["machine"]:
            # --machine names this machine: a version that spells the name
            # differently is stored under it, its own spelling kept beside
            self.say("commit %s: its xattn-bench names this machine %r; stored as %r (--machine)"
                     % (sha[:12], machine, self.opts["machine"]))
            ctx["xattn_machine_reported"] = machine
            ctx["xattn_machine"] = machine = self.opts["machine"]
        elif self.machine and machine != self.machine:
            raise runner.RunError("commit %s: its xattn-bench names the machine %r, not %r as the others; not "
                                  "stored (if it is this machine under another name, pass --machine %s)"
                                  % (sha[:12], machine, self.machine, self.machine))
        self.machine = machine
        return store_json(self.results_dir, machine, commit, self.label, data)

    def run(self):
        """Measure what is missing; returns the number of failed runs."""
        stored = self._stored_anywhere()
        if any(sha[:12] in stored for sha, _ in self.commits):
            self._learn_machine()
        failures = 0
        n = len(self.commits)
        for i, (sha, subject) in enumerate(self.commits):
            where = "[%d/%d] %s %s" % (i + 1, n, sha[:12], subject[:50])
            if self.machine and sha[:12] in measured_commits(self.results_dir, self.machine, self.label):
                self.say("%s: already measured on %s, skipped" % (where, self.machine))
                self.report.append((sha, subject, "measured before", ""))
                continue
            try:
                self.say("%s: building" % where)
                _, exe = self._build(sha)
            except gitbuild.BuildError as e:
                self.say("%s: does not build, skipped: %s" % (where, e))
                self.report.append((sha, subject, "does not build", str(e)))
                continue
            try:
                self.say("%s: measuring %d rounds x %d repetitions of suite %s"
                         % (where, self.opts["rounds"], self.opts["reps"], self.opts["suite"]))
                path = self._measure(sha, exe)
            except runner.RunError as e:
                failures += 1
                self.say("%s: run failed: %s" % (where, e))
                self.report.append((sha, subject, "run failed", str(e)))
                continue
            self.say("%s: stored %s" % (where, path))
            self.report.append((sha, subject, "measured", path))
        return failures
