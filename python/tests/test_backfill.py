#!/usr/bin/python3
"""ctest (label python): `xattn history run`, `xattn history steps` and
`xattn bisect` on a synthetic repository (synth_repo.py): 20 commits, a
planted 15 % slowdown at commit 12, commit 9 does not build.

The synthetic benchmark reports seeded times (see synth_repo.py for why):
every number here is the same on every run, so the statistical checks cannot
flake. The tests build on each other (backfill, then steps over its results,
then bisect reusing its builds) and run in order."""
import json
import math
import os
import shutil
import subprocess
import tempfile
import unittest

import synth
import synth_repo
import tools

N, STEP_AT, BROKEN_AT = 20, 12, 9


class BackfillStepsBisectTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="xattn-backfill-test-")
        cls.repo = os.path.join(cls.tmp, "repo")
        cls.shas = synth_repo.make(cls.repo, N, STEP_AT, 1.15, BROKEN_AT)
        cls.short = [s[:12] for s in cls.shas]
        cls.results = os.path.join(cls.tmp, "results")
        cls.work = os.path.join(cls.tmp, "work")
        cls.log = os.path.join(cls.tmp, "bench.log")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["git", "-C", cls.repo, "worktree", "prune"], capture_output=True)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def tool(self, name, *args, env=None):
        e = tools.env(SYNTH_BENCH_LOG=self.log, **(env or {}))
        e.pop("XATTN_RESULTS_DIR", None)
        p = subprocess.run(tools.command(name) + list(args), cwd=self.repo, capture_output=True, text=True, env=e)
        return p.returncode, p.stdout, p.stderr

    def log_lines(self):
        """[(commit12, reps)] of every synthetic bench invocation so far."""
        if not os.path.exists(self.log):
            return []
        out = []
        with open(self.log) as f:
            for line in f:
                commit, reps = line.split()[:2]
                out.append((commit, int(reps.split("=")[1])))
        return out

    def stored(self):
        """{commit12: number of history files} on the synthetic machine."""
        folder = os.path.join(self.results, synth.MACHINE)
        if not os.path.isdir(folder):
            return {}
        return {c: len([f for f in os.listdir(os.path.join(folder, c)) if f.endswith("_history-smoke.json")])
                for c in os.listdir(folder)}

    def run_backfill(self, env=None):
        return self.tool("history", "run", "HEAD", "--last", str(N), "--reps", "1", "--round-reps", "5",
                         "--results-dir", self.results, "--work-dir", self.work, env=env)

    def test_1_backfill_killed_then_resumed(self):
        kill_at = 6
        rc, out, err = self.run_backfill({"SYNTH_BENCH_KILL_AT": self.short[kill_at]})
        self.assertEqual(rc, -9, "the backfill should have been killed at commit %d: %s" % (kill_at, err))
        first = self.stored()
        self.assertEqual(set(first), set(self.short[:kill_at]), "commits stored before the kill")
        self.assertTrue(all(n == 1 for n in first.values()), first)
        before = len(self.log_lines())
        rc, out, err = self.run_backfill()
        self.assertEqual(rc, 0, err)
        # the resumed run measured only what was missing: nothing of commits 0..5
        resumed = [c for c, reps in self.log_lines()[before:] if reps > 1]
        self.assertFalse(set(resumed) & set(self.short[:kill_at]), resumed)
        self.assertIn("%d measured before" % kill_at, out)
        # backfill measured every commit that builds, once, and skipped the broken one
        done = self.stored()
        expect = set(self.short) - {self.short[BROKEN_AT]}
        self.assertEqual(set(done), expect)
        self.assertTrue(all(n == 1 for n in done.values()), done)
        self.assertIn("%s  does not build" % self.short[BROKEN_AT], out)
        self.assertIn("1 does not build", out)
        # a third run measures nothing and does not build the broken commit again
        before = len(self.log_lines())
        rc, out, err = self.run_backfill()
        self.assertEqual(rc, 0, err)
        self.assertEqual([r for r in self.log_lines()[before:] if r[1] > 1], [])
        self.assertIn("%d measured before" % (N - 1), out)
        self.assertIn("remembered in", err)

    def test_2_steps_finds_the_planted_commit_only(self):
        rc, out, err = self.tool("history", "--results", self.results, "steps", "--json")
        self.assertEqual(rc, 0, err)
        res = json.loads(out)
        self.assertEqual(len(res["commits"]), N - 1)
        self.assertEqual([c["commit"] for c in res["by_commit"]], [self.short[STEP_AT]])
        self.assertEqual(len(res["steps"]), len(synth.default_rows()))  # every benchmark has the step
        for name, found in res["steps"].items():
            self.assertEqual(len(found), 1, name)
            # gflops fall by 1 - 1/1.15 = 13 %
            self.assertAlmostEqual(found[0]["size"], 1 / 1.15 - 1, delta=0.01)
            self.assertLess(found[0]["pvalue"], 1e-6)
        rc, out, err = self.tool("history", "--results", self.results, "steps", "wl:E512")
        self.assertEqual(rc, 0, err)
        self.assertIn("step at %s" % self.short[STEP_AT], out)
        self.assertIn("1 of 1 benchmark", out)
        # the trend plot marks the step: a line between commit 11 and 12 (position 10.5: commit 9 has no results)
        plot_out = os.path.join(self.tmp, "plot")
        rc, out, err = self.tool("plot", self.results, "-o", plot_out)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(plot_out, "trend.gp")) as f:
            arrows = [l for l in f if l.startswith("set arrow") and "#d62728" in l]
        self.assertEqual(sorted(set(arrows)), ["set arrow from 10.5, graph 0 to 10.5, graph 1 nohead dt 2 lw 2 "
                                               "lc rgb '#d62728' front\n"])
        with open(os.path.join(plot_out, "index.html")) as f:
            self.assertIn("step at %s" % self.short[STEP_AT], f.read())

    def test_3_bisect_finds_the_step_skipping_the_broken_commit(self):
        before = len(self.log_lines())
        rc, out, err = self.tool("bisect", self.shas[0], self.shas[-1], "--reps", "3", "--round-reps", "3",
                                 "--results-dir", self.results, "--work-dir", self.work, "--json")
        self.assertEqual(rc, 0, err)
        res = json.loads(out)
        self.assertEqual(res["first_bad"], self.shas[STEP_AT])
        self.assertEqual(res["possible_culprits"], [self.shas[STEP_AT]])
        self.assertEqual(res["skipped"], [self.shas[BROKEN_AT]])  # the first midpoint, commit 9, does not build
        self.assertAlmostEqual(res["step_time_ratio"], 1.15, delta=0.03)
        bound = math.ceil(math.log2(N)) + 2
        self.assertLessEqual(res["measured_commits"], bound)
        measured = {c for c, _ in self.log_lines()[before:]}
        self.assertLessEqual(len(measured), bound, measured)
        self.assertEqual(len(measured), res["measured_commits"])
        self.assertNotIn(self.short[BROKEN_AT], measured)
        # every tracked benchmark of every measurement has its 3 paired round
        # ratios vs GOOD; BAD's (the first measurement) sit near the step
        for m in res["measurements"]:
            for b in m["benchmarks"]:
                self.assertEqual(b["rounds"]["n"], 3, (m["commit"], b["name"]))
        self.assertEqual(res["measurements"][0]["commit"], self.shas[-1])
        for b in res["measurements"][0]["benchmarks"]:
            self.assertAlmostEqual(b["rounds"]["median"], 1.15, delta=0.05)
        rc, text, err = self.tool("bisect", self.shas[0], self.shas[-1], "--reps", "2", "--round-reps", "3",
                                  "--no-store", "--work-dir", self.work, "--filter", "wl:E512")
        self.assertEqual(rc, 0, err)
        self.assertIn("first slow commit: %s" % self.shas[STEP_AT], text)
        self.assertIn("skipped (do not build): %s" % self.short[BROKEN_AT], text)
        self.assertRegex(text, r"p=\S+ r=1\.\d{3}\(\d\.\d\d-\d\.\d\d\)\*")

    def test_4_bisect_without_a_slowdown_says_so(self):
        rc, out, err = self.tool("bisect", self.shas[STEP_AT], self.shas[-1], "--reps", "2", "--round-reps", "3",
                                 "--no-store", "--work-dir", self.work)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("nothing to bisect", out)
        rc, out, err = self.tool("bisect", self.shas[5], self.shas[2], "--no-store", "--work-dir", self.work)
        self.assertEqual(rc, 2)
        self.assertIn("not an ancestor", err)
        # a version that spells the machine's name differently: stored under --machine, its name kept
        other = os.path.join(self.tmp, "results-renamed")
        rc, out, err = self.tool("history", "run", "HEAD", "--last", "2", "--reps", "1", "--round-reps", "2",
                                 "--results-dir", other, "--work-dir", self.work, "--machine", synth.MACHINE,
                                 env={"SYNTH_BENCH_MACHINE": "renamed-cpu-2c-00000000"})
        self.assertEqual(rc, 0, err)
        self.assertEqual(os.listdir(other), [synth.MACHINE])
        for c in self.short[-2:]:
            [name] = os.listdir(os.path.join(other, synth.MACHINE, c))
            with open(os.path.join(other, synth.MACHINE, c, name)) as f:
                ctx = json.load(f)["context"]
            self.assertEqual((ctx["xattn_machine"], ctx["xattn_machine_reported"]),
                             (synth.MACHINE, "renamed-cpu-2c-00000000"))
        rc, out, err = self.tool("history", "run", "no-such-rev", "--results-dir", self.results)
        self.assertEqual(rc, 2)
        self.assertIn("REV_RANGE 'no-such-rev'", err)



class RangeTest(unittest.TestCase):
    """Which commits `history run` takes from a range, on a history with a merge
    (no builds: backfill.commits_of_range only)."""

    def test_first_parent_and_all_parents(self):
        from xattn.perf import backfill
        repo = tempfile.mkdtemp(prefix="xattn-range-test-")
        try:
            g = lambda *a: synth_repo.git(repo, "-c", "user.name=t", "-c", "user.email=t@t", *a)
            g("init", "-q", "-b", "main")
            for name in ("a", "b"):
                g("commit", "-q", "--allow-empty", "-m", name)
            g("checkout", "-q", "-b", "side", "HEAD~1")
            g("commit", "-q", "--allow-empty", "-m", "side")
            g("checkout", "-q", "main")
            g("merge", "-q", "--no-ff", "-m", "merge side", "side")
            g("commit", "-q", "--allow-empty", "-m", "c")
            subjects = lambda cs: [s for _, s in cs]
            self.assertEqual(subjects(backfill.commits_of_range(repo, "main", last=3)), ["b", "merge side", "c"])
            self.assertEqual(subjects(backfill.commits_of_range(repo, "main~2..main")), ["merge side", "c"])
            self.assertEqual(subjects(backfill.commits_of_range(repo, "main~2..main", all_parents=True)),
                             ["side", "merge side", "c"])
            # every 2nd counting back from the newest of a, b, merge side, c
            self.assertEqual(subjects(backfill.commits_of_range(repo, "main", last=4, every=2)), ["b", "c"])
            with self.assertRaises(backfill.RangeError):
                backfill.commits_of_range(repo, "main..main")
        finally:
            shutil.rmtree(repo, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
