"""`xattn bisect GOOD BAD`: the first commit where benchmarks slowed down.

The candidates are the first-parent commits after GOOD up to BAD. GOOD and BAD
are measured first, interleaved (runner.run_interleaved, as `xattn compare`),
and compared (comparison.compare: Mann-Whitney U, threshold): the benchmarks
that regressed are the ones followed ("tracked"); none, and there is nothing
to bisect. Then, as git bisect does, the middle candidate between the last
known good and the first known bad commit is built and measured interleaved
with GOOD, and is bad when most tracked benchmarks

  - are a regression against GOOD by compare's rule (p < alpha and slower by
    more than the threshold), and
  - are slower by at least half of their GOOD -> BAD slowdown (in log terms):
    a commit that carries a smaller part of a larger change counts as good, so
    the search ends at the commit that holds most of it.

A candidate that does not build is skipped (the next nearest to the middle is
taken, as `git bisect skip`); when only skipped commits separate the last good
from the first bad one, all of them are reported as possible culprits.
"""
import math
import subprocess

from . import comparison, gitbuild, runner, stats
from ..results import ResultFile, commit_of, machine_of, store_json


class BisectError(Exception):
    """GOOD/BAD unusable (not related, not building, not slower); str() is one line."""


def candidates(repo, good, bad):
    """[(sha, subject)] of the first-parent commits after good up to bad, oldest first."""
    anc = subprocess.run(["git", "merge-base", "--is-ancestor", good, bad], cwd=repo)
    if anc.returncode != 0:
        raise BisectError("GOOD %s is not an ancestor of BAD %s" % (good[:12], bad[:12]))
    out = subprocess.run(["git", "log", "--first-parent", "--reverse", "--format=%H %s", "%s..%s" % (good, bad)],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    return [tuple(line.split(" ", 1)) if " " in line else (line, "") for line in out.splitlines() if line]


def middle_order(lo, hi):
    """Indices strictly between lo and hi, nearest to the middle first
    (the middle, then alternately one after and one before)."""
    mid = (lo + hi) // 2
    out = []
    for d in range(0, hi - lo):
        for i in ((mid + d, mid - d) if d else (mid,)):
            if lo < i < hi and i not in out:
                out.append(i)
    return out


class Bisect:
    """One bisection. opts: run settings (cli_options.run_settings) plus alpha,
    threshold_pct, store (bool), results_dir; say(msg) prints progress."""

    def __init__(self, repo, good, bad, work, opts, say):
        self.repo, self.work, self.opts, self.say = repo, work, opts, say
        self.good = gitbuild.resolve(good, repo)
        self.bad = gitbuild.resolve(bad, repo)
        if not self.good or not self.bad:
            raise BisectError("%s %r: not a git revision of %s" % (("GOOD", good) if not self.good else ("BAD", bad))
                              + (repo,))
        self.commits = candidates(repo, self.good, self.bad)
        if not self.commits:
            raise BisectError("no commits between GOOD %s and BAD %s" % (self.good[:12], self.bad[:12]))
        self.measurements = []  # one dict per measured commit (BAD first)
        self.skipped = []
        self.tracked = []

    def _build(self, sha, role):
        return gitbuild.build_revision(self.repo, sha, self.work, self.opts.get("cmake_args", ()),
                                       self.opts.get("jobs", 2), role, remember_failure=True)[1]

    def _store(self, data, label):
        if not self.opts.get("store"):
            return "<not stored>"
        ctx = data["context"]
        return store_json(self.opts["results_dir"], machine_of(ctx), commit_of(ctx), label, data)

    def _measure(self, sha, exe):
        """GOOD and sha interleaved; the comparison dict."""
        o = self.opts
        merged, _ = runner.run_interleaved([("good", self.good_exe), ("commit", exe)], o["rounds"], o["reps"],
                                           o["suite"], o.get("cores"), o.get("taskset"), o.get("filter"),
                                           o.get("bench_args", ()), workdir=self.work, min_time=o.get("min_time"),
                                           baselines=o.get("baselines", False))
        label = "bisect-" + o["suite"]
        files = [ResultFile(self._store(merged[0], label + "-good"), merged[0]),
                 ResultFile(self._store(merged[1], label), merged[1])]
        return comparison.compare(files[0], files[1], o["alpha"], o["threshold_pct"])

    def _verdict(self, cmp):
        """(bad?, per tracked benchmark: (name, change, pvalue, row bad?, paired round ratios))."""
        rows = {r["base_name"]: r for r in cmp["rows"]}
        detail, bad_rows = [], 0
        for name, bad_change in self.tracked:
            r = rows.get(name)
            if r is None:
                detail.append((name, None, None, False, None))
                continue
            half = math.log1p(bad_change) / 2
            row_bad = r["verdict"] == "regression" and math.log1p(r["time_change"]) >= half
            bad_rows += row_bad
            detail.append((name, r["time_change"], r["pvalue"], row_bad, r["rounds"]))
        return 2 * bad_rows > len(self.tracked), detail

    def _record(self, sha, subject, cmp, bad, detail):
        ratios = [1 + c for _, c, _, _, _ in detail if c is not None]
        m = {"commit": sha, "subject": subject, "bad": bad, "geomean_time_ratio": stats.geomean(ratios),
             "benchmarks": [{"name": n, "time_change": c, "pvalue": p, "bad": b, "rounds": rr}
                            for n, c, p, b, rr in detail],
             "summary": cmp["summary"], "samples": cmp["base"]["samples_per_benchmark"]}
        self.measurements.append(m)
        self.say("%s %s: %s (time vs GOOD, geomean of %d tracked: %+.1f%%)"
                 % (sha[:12], subject[:50], "BAD" if bad else "good", len(ratios), 100 * (m["geomean_time_ratio"] - 1)))
        return m

    def run(self):
        """Returns the result dict (see format_text)."""
        self.say("building GOOD %s and BAD %s" % (self.good[:12], self.bad[:12]))
        try:
            self.good_exe = self._build(self.good, "GOOD")
            bad_exe = self._build(self.bad, "BAD")
        except gitbuild.BuildError as e:
            raise BisectError(str(e))
        self.say("measuring BAD against GOOD (%d rounds x %d repetitions, suite %s)"
                 % (self.opts["rounds"], self.opts["reps"], self.opts["suite"]))
        cmp = self._measure(self.bad, bad_exe)
        self.tracked = [(r["base_name"], r["time_change"]) for r in cmp["rows"] if r["verdict"] == "regression"]
        if not self.tracked:
            self.measurements.append({"commit": self.bad, "subject": self.commits[-1][1], "bad": False,
                                      "geomean_time_ratio": cmp["geomean"]["time_ratio"], "benchmarks": [],
                                      "summary": cmp["summary"], "samples": cmp["base"]["samples_per_benchmark"]})
            return self._result(None, cmp)
        self._record(self.bad, self.commits[-1][1], cmp, *self._verdict(cmp))
        lo, hi = -1, len(self.commits) - 1  # index -1 is GOOD
        while True:
            pick = None
            for i in middle_order(lo, hi):
                sha = self.commits[i][0]
                if sha in self.skipped:
                    continue
                try:
                    self.say("building %s %s" % (sha[:12], self.commits[i][1][:50]))
                    exe = self._build(sha, "commit")
                except gitbuild.BuildError as e:
                    self.say("%s does not build, skipped: %s" % (sha[:12], e))
                    self.skipped.append(sha)
                    continue
                pick = (i, exe)
                break
            if pick is None:
                break
            i, exe = pick
            cmp_i = self._measure(self.commits[i][0], exe)
            bad, detail = self._verdict(cmp_i)
            self._record(self.commits[i][0], self.commits[i][1], cmp_i, bad, detail)
            if bad:
                hi = i
            else:
                lo = i
        return self._result((lo, hi), cmp)

    def _result(self, bounds, cmp_bad):
        res = {"good": self.good, "bad": self.bad, "candidates": len(self.commits), "tracked": self.tracked,
               "measured_commits": 1 + len(self.measurements), "measurements": self.measurements,
               "skipped": self.skipped, "alpha": self.opts["alpha"], "threshold_pct": self.opts["threshold_pct"],
               "suite": self.opts["suite"], "machine": cmp_bad["machine"], "first_bad": None}
        if bounds is None:
            return res
        lo, hi = bounds
        first = self.commits[hi]
        between = [c for c, _ in self.commits[lo + 1:hi]]  # all skipped
        by_commit = {m["commit"]: m for m in self.measurements}
        after = by_commit[first[0]]["geomean_time_ratio"]
        before = by_commit[self.commits[lo][0]]["geomean_time_ratio"] if lo >= 0 else 1.0
        res.update({"first_bad": first[0], "first_bad_subject": first[1],
                    "last_good": self.commits[lo][0] if lo >= 0 else self.good,
                    "possible_culprits": between + [first[0]],
                    "step_time_ratio": after / before})
        return res


def format_text(res):
    lines = []
    if res["first_bad"] is None:
        m = res["measurements"][0]
        lines.append("BAD %s is not slower than GOOD %s on any benchmark (threshold %g%%, alpha %g; geomean time "
                     "BAD/GOOD %.4f): nothing to bisect" % (res["bad"][:12], res["good"][:12], res["threshold_pct"],
                                                            res["alpha"], m["geomean_time_ratio"]))
        return "\n".join(lines)
    culprits = res["possible_culprits"]
    if len(culprits) > 1:
        lines.append("the first slow commit is one of %d (the ones before %s do not build): %s"
                     % (len(culprits), res["first_bad"][:12], " ".join(c[:12] for c in culprits)))
    lines.append("first slow commit: %s %s" % (res["first_bad"], res["first_bad_subject"]))
    lines.append("step: time x%.4f (%+.1f%%, geomean over %d tracked benchmark(s)) from %s to %s"
                 % (res["step_time_ratio"], 100 * (res["step_time_ratio"] - 1), len(res["tracked"]),
                    res["last_good"][:12], res["first_bad"][:12]))
    lines.append("measured %d commit(s) of %d candidates (GOOD included), each interleaved with GOOD; machine %s, "
                 "suite %s; a commit is bad when most tracked benchmarks are a regression vs GOOD (U test p < %g, "
                 "slower by > %g%%) and carry at least half of their GOOD->BAD slowdown"
                 % (res["measured_commits"], res["candidates"] + 1, res["machine"], res["suite"], res["alpha"],
                    res["threshold_pct"]))
    if res["skipped"]:
        lines.append("skipped (do not build): %s" % " ".join(c[:12] for c in res["skipped"]))
    lines.append("measurements (time vs GOOD per tracked benchmark, U test p, paired round ratios "
                 "commit/GOOD: median (range)):")
    for m in res["measurements"]:
        cells = ["%+.1f%% p=%s r=%s%s" % (100 * b["time_change"], "%.2g" % b["pvalue"] if b["pvalue"] is not None else "-",
                                          comparison.fmt_rounds(b["rounds"]).replace(" ", ""),
                                          "*" if b["bad"] else "")
                 if b["time_change"] is not None else "missing" for b in m["benchmarks"]]
        lines.append("  %s %-4s %s  [%s]  %s" % (m["commit"][:12], "BAD" if m["bad"] else "good",
                                                "%+.1f%%" % (100 * (m["geomean_time_ratio"] - 1)),
                                                ", ".join(cells), m["subject"][:50]))
    lines.append("tracked benchmarks (regressed GOOD->BAD): " + "; ".join("%s (%+.1f%%)" % (n, 100 * c)
                                                                          for n, c in res["tracked"]))
    return "\n".join(lines)
