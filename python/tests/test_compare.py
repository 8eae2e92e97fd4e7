#!/usr/bin/python3
"""ctest (label python): `xattn compare` on synthetic and stored results files.

Every case runs the real command (tools.command) and checks its exit status, its verdicts and what it
stored; nothing here measures speed."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import synth
import tools
from xattn import results
from xattn.perf import comparison

HERE = tools.TESTS
TESTDATA = tools.TESTDATA
COMPARE = tools.command("compare")


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xattn-compare-test-")
        self.results = os.path.join(self.tmp, "results")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        synth.write(path, data)
        return path

    def run_compare(self, *args):
        p = subprocess.run(COMPARE + ["--results-dir", self.results] + list(args),
                           capture_output=True, text=True, cwd=self.tmp, env=tools.env())
        return p.returncode, p.stdout, p.stderr

    def stored_compare(self):
        files = [f for f in glob.glob(os.path.join(self.results, "**", "*.json"), recursive=True)
                 if results.classify_file(f) == "compare"]
        self.assertEqual(len(files), 1, files)
        return results.load_compare(files[0])

    # ---- verdicts ---------------------------------------------------------------
    def test_identical_runs_no_significant_change(self):
        a = self.write("a.json", synth.make_results(11, reps=10, noise=0.01))
        b = self.write("b.json", synth.make_results(12, reps=10, noise=0.01, commit="bbbbbbbbbbbb"))
        rc, out, err = self.run_compare(a, b, "--fail-on-regression")
        self.assertEqual(rc, 0, err)
        cmp = self.stored_compare()
        self.assertEqual(len(cmp["rows"]), len(synth.default_rows()))
        for r in cmp["rows"]:
            self.assertEqual(r["verdict"], "unchanged", r["name"])
            self.assertLess(abs(r["time_change"]), 0.05)
        self.assertAlmostEqual(cmp["geomean"]["time_ratio"], 1.0, delta=0.02)
        self.assertIn("0 regression(s)", out)

    def test_same_file_against_itself(self):
        a = self.write("a.json", synth.make_results(13, reps=6))
        rc, out, err = self.run_compare(a, a, "--no-store", "--json")
        self.assertEqual(rc, 0, err)
        cmp = json.loads(out)
        for r in cmp["rows"]:
            self.assertEqual(r["time_change"], 0.0)
            self.assertGreater(r["pvalue"], 0.5)
            self.assertEqual(r["verdict"], "unchanged")

    def test_slowdown_20pct_is_regression(self):
        a = self.write("a.json", synth.make_results(21, reps=10))
        b = self.write("b.json", synth.make_results(22, reps=10, slowdown=1.2, commit="cccccccccccc",
                                                    ))
        rc, out, err = self.run_compare(a, b)
        self.assertEqual(rc, 0, "without --fail-on-regression the exit status is 0: " + err)
        self.assertIn("REGRESSION", out)
        shutil.rmtree(self.results)
        rc, out, err = self.run_compare(a, b, "--fail-on-regression")
        self.assertEqual(rc, 1, err)
        cmp = self.stored_compare()
        self.assertEqual(cmp["summary"]["regression"], len(cmp["rows"]))
        for r in cmp["rows"]:
            self.assertLess(r["pvalue"], 0.05)
            self.assertAlmostEqual(r["time_change"], 0.2, delta=0.03)
            g = r["counters"]["gflops"]
            self.assertAlmostEqual(g["head"] / g["base"], 1 / 1.2, delta=0.03)
        self.assertAlmostEqual(cmp["geomean"]["time_ratio"], 1.2, delta=0.02)

    def test_one_slow_benchmark_among_many(self):
        a = self.write("a.json", synth.make_results(31, reps=10))
        b = self.write("b.json", synth.make_results(32, reps=10, slowdown=1.2, slow_only="wl:E2048"))
        rc, out, err = self.run_compare(a, b, "--fail-on-regression", "--no-store", "--json")
        self.assertEqual(rc, 1, err)
        verdicts = {r["fields"]["wl"]: r["verdict"] for r in json.loads(out)["rows"]}
        self.assertEqual(verdicts.pop("E2048"), "regression")
        self.assertEqual(set(verdicts.values()), {"unchanged"})

    def test_rows_renamed_by_a_changed_resolution_are_paired(self):
        # a commit that makes "auto" pick another ISA renames every row (isa:...)
        a = self.write("a.json", synth.make_results(71, reps=8))
        head = synth.make_results(72, reps=8, slowdown=1.2)
        for row in head["benchmarks"]:
            row["name"] = row["run_name"] = row["name"].replace("isa:avx512", "isa:amx")
        b = self.write("b.json", head)
        rc, out, err = self.run_compare(a, b, "--fail-on-regression", "--no-store", "--json")
        self.assertEqual(rc, 1, err)
        cmp = json.loads(out)
        self.assertEqual(len(cmp["rows"]), len(synth.default_rows()))
        for r in cmp["rows"]:
            self.assertEqual(r["resolved_change"], "isa:avx512->amx")
            self.assertEqual(r["verdict"], "regression")
        rc, out, err = self.run_compare(a, b, "--no-store")
        self.assertIn("paired across a changed resolution", out)

    def test_speedup_is_improvement_not_regression(self):
        a = self.write("a.json", synth.make_results(41, reps=10))
        b = self.write("b.json", synth.make_results(42, reps=10, slowdown=0.8))
        rc, out, err = self.run_compare(a, b, "--fail-on-regression", "--no-store", "--json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["summary"]["improvement"], len(synth.default_rows()))

    def test_noise_level_change_not_flagged(self):
        a = self.write("a.json", synth.make_results(51, reps=10, noise=0.01))
        b = self.write("b.json", synth.make_results(52, reps=10, noise=0.01, slowdown=1.02))
        rc, out, err = self.run_compare(a, b, "--fail-on-regression", "--no-store", "--json")
        self.assertEqual(rc, 0, err)
        cmp = json.loads(out)
        self.assertEqual(cmp["summary"]["regression"], 0)
        # the change is real (2%) and measured as such; it is only below the threshold
        self.assertAlmostEqual(cmp["geomean"]["time_ratio"], 1.02, delta=0.01)
        # with a 1% threshold the same files are a regression
        rc, out, err = self.run_compare(a, b, "--fail-on-regression", "--no-store", "--threshold", "1")
        self.assertEqual(rc, 1, err)

    def test_too_few_repetitions_warns_and_never_flags(self):
        a = self.write("a.json", synth.make_results(61, reps=3))
        b = self.write("b.json", synth.make_results(62, reps=3, slowdown=1.5))
        rc, out, err = self.run_compare(a, b, "--fail-on-regression", "--no-store")
        self.assertEqual(rc, 0, err)
        self.assertIn("WARNING: only 3 repetitions", out)

    # ---- stored fixtures ----------------------------------------------------------
    def test_stored_fixtures(self):
        f = lambda n: os.path.join(TESTDATA, n)  # noqa: E731
        rc, _, err = self.run_compare(f("base.json"), f("same.json"), "--fail-on-regression", "--no-store")
        self.assertEqual(rc, 0, err)
        rc, out, err = self.run_compare(f("base.json"), f("slow20.json"), "--fail-on-regression", "--no-store")
        self.assertEqual(rc, 1, err)
        self.assertIn("REGRESSION", out)

    # ---- refused inputs -------------------------------------------------------------
    def assertRefused(self, args, words):
        rc, out, err = self.run_compare(*args)
        self.assertEqual(rc, 2, out + err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        for w in words:
            self.assertIn(w, lines[0])
        self.assertFalse(os.path.exists(self.results), "nothing is stored for refused inputs")

    def test_ci_gate_markdown_summary(self):
        """The CI one-liner's summary (README 'A performance gate for CI'): appended,
        written for a regression, a clean run and a refusal alike."""
        md = os.path.join(self.tmp, "summary.md")
        rc, out, err = self.run_compare(os.path.join(TESTDATA, "base.json"), os.path.join(TESTDATA, "slow20.json"),
                                        "--no-store", "--fail-on-regression", "--markdown", md)
        self.assertEqual(rc, 1, err)
        with open(md) as f:
            text = f.read()
        self.assertTrue(text.startswith("### xattn performance: **4 regression(s)**\n"), text)
        self.assertEqual(text.count("| REGRESSION |"), 4)
        self.assertIn("head `cccccccccccc` vs base `aaaaaaaaaaaa`", text)
        rc, out, err = self.run_compare(os.path.join(TESTDATA, "base.json"), os.path.join(TESTDATA, "same.json"),
                                        "--no-store", "--fail-on-regression", "--markdown", md)
        self.assertEqual(rc, 0, err)
        rc, out, err = self.run_compare(os.path.join(TESTDATA, "base.json"), os.path.join(TESTDATA, "not-json.json"),
                                        "--no-store", "--markdown", md)
        self.assertEqual(rc, 2)
        with open(md) as f:
            parts = f.read().split("### xattn performance: ")
        self.assertEqual(len(parts), 4, parts)  # appended three times
        self.assertTrue(parts[2].startswith("no regression"), parts[2])
        self.assertNotIn("|", parts[2])
        self.assertTrue(parts[3].startswith("not compared"), parts[3])
        self.assertIn("not JSON", parts[3])

    def test_refuses_malformed_and_mismatched(self):
        f = lambda n: os.path.join(TESTDATA, n)  # noqa: E731
        base = f("base.json")
        self.assertRefused([base, f("not-json.json")], ["not-json.json", "not JSON"])
        self.assertRefused([f("not-benchmark.json"), base], ["not-benchmark.json", "no 'benchmarks' list"])
        self.assertRefused([base, f("disjoint.json")], ["no benchmark names in common"])
        self.assertRefused([base, f("other-machine.json")], ["different machines", "--allow-mixed-machines"])
        self.assertRefused([base, os.path.join(self.tmp, "missing.json")], ["missing.json", "neither"])
        bad_row = synth.make_results(1, reps=2)
        del bad_row["benchmarks"][1]["real_time"]
        self.assertRefused([base, self.write("bad-row.json", bad_row)], ["benchmarks[1]", "real_time"])
        rc, out, err = self.run_compare(base, f("other-machine.json"), "--allow-mixed-machines", "--no-store")
        self.assertEqual(rc, 0, err)

    def test_refuses_nonfinite_and_nonpositive_times(self):
        # issue 12: one NaN sample in a 3x slower head printed "unchanged" and
        # passed --fail-on-regression; negative or zero times read as huge
        # improvements. Such a row is refused by name, never compared.
        base = self.write("base.json", synth.make_results(1, reps=6))
        for bad, shown in ((float("nan"), "nan"), (float("inf"), "inf"), (-3.0, "-3"), (0.0, "0")):
            head = synth.make_results(2, reps=6, slowdown=3.0, commit="bbbbbbbbbbbb")
            head["benchmarks"][4]["real_time"] = bad
            path = self.write("head-%s.json" % shown, head)
            self.assertRefused([base, path, "--fail-on-regression"],
                               ["benchmarks[4]", head["benchmarks"][4]["name"], "real_time", shown])
        self.assertEqual(comparison._fmt_p(float("nan")), "nan")

    # ---- interleaved runs of two executables -------------------------------------------
    def fake_sides(self, slowdowns):
        """One executable per (role, slowdown): fake_bench.py as that side."""
        fake = os.path.join(HERE, "fake_bench.py")
        exes = []
        for role, slow in slowdowns:
            exe = os.path.join(self.tmp, "bench-" + role)
            with open(exe, "w") as fh:
                fh.write("#!/bin/sh\nexec %s %s --role %s --slowdown %s \"$@\"\n"
                         % (sys.executable, fake, role, slow))
            os.chmod(exe, 0o755)
            exes.append(exe)
        return exes

    def test_interleaved_runs_of_two_executables(self):
        log = os.path.join(self.tmp, "bench.log")
        exes = self.fake_sides((("A", 1.0), ("B", 1.25)))
        env = tools.env(FAKE_BENCH_LOG=log)
        p = subprocess.run(COMPARE + [exes[0], exes[1], "--results-dir", self.results,
                            "--suite", "smoke", "--reps", "4", "--round-reps", "3", "--cores", "0,1",
                            "--work-dir", os.path.join(self.tmp, "work"), "--fail-on-regression"],
                           capture_output=True, text=True, env=env, cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        with open(log) as fh:
            calls = fh.read().split("\n")[:-1]
        self.assertEqual([c.split()[0] for c in calls], ["A", "B", "B", "A"] * 2,
                         "rounds interleave A B, B A: each side first in half of them")
        for c in calls:
            self.assertIn("suite=smoke placement=cores=0,1 reps=3 results-dir=none min_time=0.05", c)
        stored = sorted(glob.glob(os.path.join(self.results, "**", "*.json"), recursive=True))
        kinds = [results.classify_file(s) for s in stored]
        self.assertEqual(sorted(kinds), ["compare", "results", "results"])
        for s in stored:
            self.assertRegex(os.path.relpath(s, self.results),
                             r"^synthetic-xeon-2c-00c0ffee/fake[AB]/\d{8}T\d{6}Z_compare-[A-Za-z0-9-]+\.json$")
            if results.classify_file(s) == "results":
                rf = results.load_results(s)
                for n in rf.names():
                    self.assertEqual(len(rf.samples(n)), 12, "4 rounds x 3 repetitions")
        cmp = self.stored_compare()
        self.assertEqual(cmp["summary"]["regression"], len(cmp["rows"]))
        # the sides of one interleaved run: every row has its 4 paired round
        # ratios, near the fake's 1.25 slowdown (1 % noise a sample)
        for r in cmp["rows"]:
            self.assertEqual(r["rounds"]["n"], 4, r["name"])
            self.assertGreater(r["rounds"]["min"], 1.15, r["name"])
            self.assertLess(r["rounds"]["max"], 1.35, r["name"])
        self.assertIn("rounds h/b", p.stdout)

    def test_control_runs_base_again_and_rotates(self):
        """--control: base's executable a third time a round, the sides rotating;
        a 1.25x slowdown lies far outside the A/A ratios and stays a regression."""
        log = os.path.join(self.tmp, "bench.log")
        exes = self.fake_sides((("A", 1.0), ("B", 1.25)))
        p = subprocess.run(COMPARE + [exes[0], exes[1], "--control", "--results-dir", self.results,
                            "--suite", "smoke", "--reps", "3", "--round-reps", "3",
                            "--work-dir", os.path.join(self.tmp, "work"), "--fail-on-regression"],
                           capture_output=True, text=True, env=tools.env(FAKE_BENCH_LOG=log), cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        with open(log) as fh:
            roles = [c.split()[0] for c in fh.read().split("\n")[:-1]]
        # base head control | head control base | control base head (control is A's executable)
        self.assertEqual(roles, ["A", "B", "A", "B", "A", "A", "A", "A", "B"])
        stored = sorted(glob.glob(os.path.join(self.results, "**", "*.json"), recursive=True))
        self.assertEqual(sorted(results.classify_file(s) for s in stored), ["compare", "results", "results", "results"])
        self.assertEqual(len([s for s in stored if s.endswith("_compare-smoke-control.json")]), 1, stored)
        cmp = self.stored_compare()
        self.assertIsNotNone(cmp["control"])
        self.assertEqual(cmp["summary"]["regression"], len(cmp["rows"]))
        self.assertEqual(cmp["summary"]["within_control"], 0)
        for r in cmp["rows"]:
            self.assertEqual(r["control_rounds"]["n"], 3, r["name"])
            self.assertLess(abs(r["control_rounds"]["median"] - 1.0), 0.05, r["name"])
            self.assertFalse(r["within_control"], r["name"])
        self.assertIn("A/A c/b", p.stdout)

    def test_control_keeps_a_change_inside_its_spread_unchanged(self):
        # base steady; head 8 % slower in every round (the U test flags it);
        # the control (base's code again) moved 0.90-1.12 between rounds
        def doc(factors, run="run1"):
            d = synth.make_results(5, reps=1)
            name = d["benchmarks"][0]["name"]
            d["benchmarks"] = [{"name": name, "run_name": name, "run_type": "iteration", "time_unit": "ms",
                                "real_time": f * (1.0 + 0.001 * i), "xattn_round": str(r)}
                               for r, f in enumerate(factors) for i in range(3)]
            d["context"]["xattn_interleave_run"] = run
            return results.ResultFile("x.json", d)
        base, head = doc([1.0] * 4), doc([1.08] * 4)
        wide = comparison.compare(base, head, control=doc([0.90, 1.12, 0.95, 1.10]))
        r = wide["rows"][0]
        self.assertLess(r["pvalue"], 0.05)
        self.assertEqual((r["verdict"], r["without_control"], r["within_control"]), ("unchanged", "regression", True))
        self.assertEqual(wide["summary"]["within_control"], 1)
        self.assertIn("unchanged (A/A)", comparison.format_text(wide))
        self.assertIn("A/A control", comparison.format_markdown(wide))
        narrow = comparison.compare(base, head, control=doc([0.99, 1.01, 1.0, 1.0]))
        r = narrow["rows"][0]
        self.assertEqual((r["verdict"], r["within_control"]), ("regression", False))
        self.assertNotIn("without_control", r)
        self.assertEqual(comparison.compare(base, head)["rows"][0]["verdict"], "regression", "no control: U test")
        with self.assertRaises(results.ResultsError):  # a control from another run pairs no rounds
            comparison.compare(base, head, control=doc([1.0] * 4, run="run2"))

    def test_control_needs_runs_not_files(self):
        a = self.write("a.json", synth.make_results(11, reps=5))
        b = self.write("b.json", synth.make_results(12, reps=5, commit="bbbbbbbbbbbb"))
        self.assertRefused([a, b, "--control"], ["--control", "results files"])

    def test_killed_run_goes_on_with_continue(self):
        exes = self.fake_sides((("A", 1.0), ("B", 1.25)))
        log = os.path.join(self.tmp, "bench.log")
        args = COMPARE + [exes[0], exes[1], "--results-dir", self.results, "--suite", "smoke", "--reps", "4",
                          "--round-reps", "3", "--work-dir", os.path.join(self.tmp, "work")]
        # the 4th run (round 2's second side, A) dies without results
        p = subprocess.run(args, capture_output=True, text=True, cwd=self.tmp,
                           env=tools.env(FAKE_BENCH_LOG=log, FAKE_BENCH_FAIL_AT="4"))
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("--continue", p.stderr)
        folder = p.stderr.split("rounds in ")[1].split(" ")[0]
        self.assertTrue(os.path.isfile(os.path.join(folder, "round1-head.json")), "round 2's first side finished")
        self.assertEqual(glob.glob(os.path.join(self.results, "**", "*.json"), recursive=True), [])
        # other settings: refused in one line, nothing run
        with open(log) as fh:
            before = fh.read()
        p = subprocess.run(args[:-4] + ["--round-reps", "2", "--continue", folder], capture_output=True, text=True,
                           cwd=self.tmp, env=tools.env(FAKE_BENCH_LOG=log))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--continue %s: its rounds ran other commands" % folder, p.stderr)
        with open(log) as fh:
            self.assertEqual(fh.read(), before)
        # the same settings (the folder named relative to the working folder):
        # round 1 kept, round 2 run again whole (its sides stay paired in
        # time), rounds 3 and 4 run
        p = subprocess.run(args + ["--continue", os.path.relpath(folder, self.tmp)], capture_output=True,
                           text=True, cwd=self.tmp, env=tools.env(FAKE_BENCH_LOG=log))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("round 1/4: kept from the earlier run", p.stderr)
        with open(log) as fh:
            calls = fh.read()[len(before):].split("\n")[:-1]
        self.assertEqual([c.split()[0] for c in calls], ["B", "A", "A", "B", "B", "A"])
        for s in glob.glob(os.path.join(self.results, "**", "*.json"), recursive=True):
            if results.classify_file(s) == "results":
                rf = results.load_results(s)
                for n in rf.names():
                    self.assertEqual(len(rf.samples(n)), 12, "4 rounds x 3 repetitions")
        cmp = self.stored_compare()
        for r in cmp["rows"]:
            self.assertEqual(r["rounds"]["n"], 4, r["name"])
            self.assertGreater(r["rounds"]["min"], 1.15, r["name"])
        # results files and --continue: refused
        p = subprocess.run(COMPARE + [os.path.join(TESTDATA, "base.json"), os.path.join(TESTDATA, "same.json"),
                                      "--continue", folder], capture_output=True, text=True, cwd=self.tmp,
                           env=tools.env())
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--continue", p.stderr)

    def test_killed_run_takes_its_benchmark_along(self):
        # a compare killed with SIGKILL mid-round left its xattn-bench running
        # to the round's end, beside (and slowing) the --continue that follows
        exes = self.fake_sides((("A", 1.0), ("B", 1.25)))
        log, pidfile = os.path.join(self.tmp, "bench.log"), os.path.join(self.tmp, "bench.pid")
        p = subprocess.Popen(COMPARE + [exes[0], exes[1], "--suite", "smoke", "--reps", "4", "--no-store",
                                        "--work-dir", os.path.join(self.tmp, "work")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.tmp,
                             env=tools.env(FAKE_BENCH_LOG=log, FAKE_BENCH_HANG_AT="3", FAKE_BENCH_PIDFILE=pidfile))
        bench = None
        try:
            deadline = time.time() + 60
            while not os.path.exists(pidfile) and p.poll() is None and time.time() < deadline:
                time.sleep(0.05)
            self.assertTrue(os.path.exists(pidfile), "the 3rd run (round 2) started and hangs")
            with open(pidfile) as fh:
                bench = int(fh.read())
            self.assertTrue(alive(bench))
            p.kill()
            p.wait()
            deadline = time.time() + 10
            while alive(bench) and time.time() < deadline:
                time.sleep(0.05)
            self.assertFalse(alive(bench), "the killed compare's benchmark still runs")
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            if bench is not None and alive(bench):
                os.kill(bench, signal.SIGKILL)


def alive(pid):
    """Whether pid runs (a zombie, dead but not reaped by its new parent, does not)."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class UnitTest(unittest.TestCase):
    def test_store_never_overwrites(self):
        tmp = tempfile.mkdtemp()
        try:
            p1 = results.store_json(tmp, "m", "c", "lbl", {"a": 1}, stamp="20260101T000000Z")
            p2 = results.store_json(tmp, "m", "c", "lbl", {"a": 2}, stamp="20260101T000000Z")
            self.assertNotEqual(p1, p2)
            for path, want in ((p1, {"a": 1}), (p2, {"a": 2})):
                with open(path) as fh:
                    self.assertEqual(json.load(fh), want)
            self.assertEqual(sorted(os.listdir(os.path.join(tmp, "m", "c"))),
                             ["20260101T000000Z_lbl-1.json", "20260101T000000Z_lbl.json"])
        finally:
            shutil.rmtree(tmp)

    def test_round_ratios_cancel_a_drift_between_rounds(self):
        # the machine's speed moves 3x between rounds; head is 10 % slower in
        # every round: the pooled samples overlap, the paired ratios do not
        drift = [1.0, 2.0, 0.7, 1.5]
        def rows(factor, tag=True):
            out = []
            for r, d in enumerate(drift):
                for i in range(3):
                    row = {"name": "x", "run_type": "iteration", "real_time": factor * d * (1.0 + 0.001 * i),
                           "time_unit": "ms"}
                    if tag:
                        row["xattn_round"] = str(r)
                    out.append(row)
            return out
        rr = comparison.round_ratios(rows(1.0), rows(1.1))
        self.assertEqual(rr["n"], 4)
        for k in ("median", "min", "max"):
            self.assertAlmostEqual(rr[k], 1.1, places=9)
        self.assertIsNone(comparison.round_ratios(rows(1.0, tag=False), rows(1.1)))
        one = [r for r in rows(1.1) if r["xattn_round"] == "2"]
        self.assertIsNone(comparison.round_ratios(rows(1.0), one), "one common round: no ratio range")
        # files: paired only when both sides carry the same interleaved run
        def doc(factor, run):
            d = synth.make_results(5, reps=1)
            d["benchmarks"] = [dict(r, name=d["benchmarks"][0]["name"], run_name=d["benchmarks"][0]["name"])
                               for r in rows(factor)]
            d["context"]["xattn_interleave_run"] = run
            return results.ResultFile("x.json", d)
        same = comparison.compare(doc(1.0, "run1"), doc(1.1, "run1"))["rows"][0]["rounds"]
        self.assertAlmostEqual(same["median"], 1.1, places=9)
        self.assertIsNone(comparison.compare(doc(1.0, "run1"), doc(1.1, "run2"))["rows"][0]["rounds"])
        self.assertIsNone(comparison.compare(doc(1.0, None), doc(1.1, None))["rows"][0]["rounds"])

    def test_short_names(self):
        common, short = comparison.short_names(["suite:a/wl:x/t:1", "suite:a/wl:y/t:1"])
        self.assertEqual(common, "suite:a/t:1")
        self.assertEqual(short["suite:a/wl:x/t:1"], "wl:x")

    def test_aggregates_are_not_benchmarks(self):
        # Google Benchmark adds name_mean, name_median, ... rows after the repetitions
        data = synth.make_results(3, reps=4)
        name = data["benchmarks"][0]["name"]
        for agg in ("mean", "median", "stddev", "cv"):
            row = dict(data["benchmarks"][0], name=name + "_" + agg, run_type="aggregate", aggregate_name=agg)
            data["benchmarks"].append(row)
        rf = results.ResultFile("x.json", data)
        self.assertEqual(len(rf.names()), len(synth.default_rows()))
        self.assertEqual(len(rf.samples(name)), 4)
        # a file with aggregates only: the median stands for the benchmark
        only = {"context": {}, "benchmarks": [r for r in data["benchmarks"] if r.get("run_type") == "aggregate"]}
        rf = results.ResultFile("y.json", only)
        self.assertEqual(rf.names(), [name])
        self.assertEqual(len(rf.samples(name)), 1)

    def test_parse_name(self):
        f = results.parse_name(synth.name_of("prefix-mix", "w1", threads=2) + "/real_time")
        self.assertEqual((f["suite"], f["wl"], f["threads"], f["_extra"]), ("prefix-mix", "w1", "2", "real_time"))

    def test_run_setting_segments_survive_format_name(self):
        """xattn-bench's run-setting segments (docs/formats.md §3): rows that
        differ only in one of them must keep different names."""
        base = synth.name_of("decode", "b8-p4096", threads=2)
        names = [base + "/pf:auto/pfl:" + level for level in ("auto", "l1", "l2")]
        formatted = [results.format_name(results.parse_name(n)) for n in names]
        self.assertEqual(formatted, names)
        self.assertEqual(len(set(formatted)), 3)


if __name__ == "__main__":
    unittest.main()
