#!/usr/bin/python3
"""ctest (label python): `xattn history` over a throw-away git repository whose
results/ holds synthetic runs of three commits on two machines."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import synth
import tools
from xattn import results

HISTORY = tools.command("history")
OTHER = "other-cpu-4c-12345678"


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"] + list(args),
                          check=True, capture_output=True, text=True).stdout.strip()


class HistoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repo = tempfile.mkdtemp(prefix="xattn-history-test-")
        git(cls.repo, "init", "-q")
        cls.commits = []
        for i in range(3):
            with open(os.path.join(cls.repo, "f"), "w") as f:
                f.write(str(i))
            git(cls.repo, "add", "f")
            git(cls.repo, "commit", "-q", "-m", "commit %d" % i)
            cls.commits.append(git(cls.repo, "rev-parse", "--short=12", "HEAD"))
        res = os.path.join(cls.repo, "results")
        # Stored out of order (timestamps newest for the oldest commit) so that
        # only git log can give the right order; commit i runs at rate 1/(1+0.1 i).
        for i, c in enumerate(cls.commits):
            stamp = "2026010%dT000000Z" % (9 - i)
            results.store_json(res, synth.MACHINE, c, "smoke",
                               synth.make_results(i, reps=4, slowdown=1 + 0.1 * i, commit=c), stamp=stamp)
        results.store_json(res, OTHER, cls.commits[0], "smoke",
                           synth.make_results(7, reps=4, commit=cls.commits[0], machine=OTHER))
        # a compare output and a foreign JSON file must not disturb the index
        with open(os.path.join(res, "notes.json"), "w") as f:
            json.dump({"hello": 1}, f)
        # nor a bench run's temp file (running, or killed and not yet settled)
        cls.temp = os.path.join(res, synth.MACHINE, cls.commits[0], ".tmp-20260109T000000Z-999999.json")
        with open(cls.temp, "w") as f:
            f.write('{"context": {"date": "cut')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.repo, ignore_errors=True)

    def history(self, *args):
        p = subprocess.run(HISTORY + list(args), cwd=self.repo, capture_output=True, text=True, env=tools.env())
        return p.returncode, p.stdout, p.stderr

    def test_temp_files_are_passed_over_in_folders_read_when_named(self):
        rc, out, err = self.history("list")
        self.assertEqual(rc, 0, err)
        self.assertNotIn(".tmp-", out + err)
        found = results.iter_json_files([os.path.join(self.repo, "results")])
        self.assertEqual(len([f for f in found if os.path.basename(f).startswith(".")]), 0)
        self.assertEqual(len([f for f in found if f.endswith("_smoke.json")]), 4)
        self.assertEqual(results.iter_json_files([self.temp]), [self.temp])

    def test_list_groups_by_machine_and_commit(self):
        rc, out, err = self.history("list")
        self.assertEqual(rc, 0, err)
        self.assertIn("machine %s: 3 run(s), 3 commit(s)" % synth.MACHINE, out)
        self.assertIn("machine %s: 1 run(s), 1 commit(s)" % OTHER, out)
        self.assertIn("notes.json", err)
        rc, out, err = self.history("list", "--machine", OTHER)
        self.assertEqual(rc, 0, err)
        self.assertNotIn(synth.MACHINE, out)
        self.assertIn(self.commits[0], out)
        # commits appear in git-log order within the machine
        rc, out, err = self.history("list", "--machine", synth.MACHINE)
        pos = [out.index(c) for c in self.commits]
        self.assertEqual(pos, sorted(pos))

    def test_trend_in_git_order(self):
        rc, out, err = self.history("trend", "wl:E512/.*impl:xattn", "--machine", synth.MACHINE, "--json")
        self.assertEqual(rc, 0, err)
        series = json.loads(out)["machines"][synth.MACHINE]
        self.assertEqual(len(series), 1)
        points = list(series.values())[0]
        self.assertEqual([p["commit"] for p in points], self.commits)
        self.assertEqual([p["subject"] for p in points], ["commit 0", "commit 1", "commit 2"])
        med = [p["median"] for p in points]
        self.assertGreater(med[0], med[1])
        self.assertGreater(med[1], med[2])
        self.assertAlmostEqual(med[0] / med[2], 1.2, delta=0.03)

    def test_trend_refuses_mixed_machines(self):
        rc, out, err = self.history("trend", "wl:E512")
        self.assertEqual(rc, 2)
        self.assertIn("2 machines", err)
        self.assertIn("--all-machines", err)
        rc, out, err = self.history("trend", "wl:E512", "--all-machines")
        self.assertEqual(rc, 0, err)
        self.assertIn(OTHER, out)
        self.assertIn(synth.MACHINE, out)

    def test_trend_refuses_bad_or_unmatched_regex(self):
        rc, _, err = self.history("trend", "(")
        self.assertEqual(rc, 2)
        self.assertIn("NAME_REGEX", err)
        rc, _, err = self.history("trend", "wl:nothing-like-this")
        self.assertEqual(rc, 2)
        self.assertIn("no benchmark matches", err)


if __name__ == "__main__":
    unittest.main()
