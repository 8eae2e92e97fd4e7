"""Bad input to the Python commands: one line on stderr naming the file or
field, a non-zero exit, never a traceback (and never an answer computed from
an index numpy wrapped around)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import synth
import tools
from xattn.cases import make_case

DEEP = "[" * 100000 + "]" * 100000  # deeper than Python's recursion limit


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xattn-refusal-test-")
        self.base = self.path("base.json")
        synth.write(self.base, synth.make_results(1, reps=5))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def refused(self, status, words, tool, *args):
        p = subprocess.run(tools.command(tool) + list(args), capture_output=True, text=True,
                           env=tools.env(), cwd=self.tmp)
        what = "%s %s: exit %d, stderr %r" % (tool, " ".join(args), p.returncode, p.stderr)
        self.assertEqual(p.returncode, status, what)
        self.assertEqual(len(p.stderr.splitlines()), 1, what)
        self.assertNotIn("Traceback", p.stderr, what)
        for w in words:
            self.assertIn(w, p.stderr, what)

    # ---- results files -------------------------------------------------------------
    def test_deeply_nested_results(self):
        deep = self.path("deep.json")
        with open(deep, "w") as f:
            f.write('{"context": {}, "benchmarks": %s}' % DEEP)
        self.refused(2, ["deep.json", "nested too deeply"], "compare", deep, self.base, "--no-store")
        self.refused(2, ["deep.json", "nested too deeply"], "history", "--results", deep, "list")
        self.refused(2, ["deep.json", "nested too deeply"], "plot", deep, "-o", self.path("out"))

    def test_wrong_typed_context_fields(self):
        for key, value in (("load_avg", ["x"]), ("load_avg", "high"), ("num_cpus", "two"), ("num_cpus", [2]),
                           ("xattn_machine", {"a": 1}), ("xattn_commit", 7), ("xattn_dirty", [])):
            doc = synth.make_results(2, reps=5)
            doc["context"][key] = value
            bad = self.path("ctx.json")
            synth.write(bad, doc)
            words = ["ctx.json", "context." + key]
            self.refused(2, words, "compare", self.base, bad, "--no-store")
            self.refused(2, words, "plot", bad, "-o", self.path("out"))
            self.refused(2, words, "history", "--results", bad, "list")

    def test_unwritable_plot_output(self):
        afile = self.path("a-file")
        with open(afile, "w") as f:
            f.write("x")
        self.refused(2, ["-o", "a-file"], "plot", self.base, "-o", afile)
        self.refused(2, ["-o", "a-file/sub"], "plot", self.base, "-o", os.path.join(afile, "sub"))

    # ---- the oracle ---------------------------------------------------------------------
    def case(self):
        d = make_case.make_case(self.path("case"), prefix=(4, 5), extend=(3, 2))
        ref = self.path("ref.npy")
        p = subprocess.run(tools.command("oracle") + [d, "-o", ref], capture_output=True, text=True, env=tools.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        return d, ref

    def test_oracle_out_of_range_req_index(self):
        d, _ = self.case()
        ri = np.load(os.path.join(d, "req_index.npy"))
        rows = np.load(os.path.join(d, "req_to_token.npy")).shape[0]
        for bad in (rows, -1):
            np.save(os.path.join(d, "req_index.npy"), np.array([ri[0], bad], dtype=ri.dtype))
            self.refused(1, ["req_index[1] = %d" % bad], "oracle", d)

    def test_oracle_refuses_negative_slot(self):
        d, _ = self.case()
        ri = np.load(os.path.join(d, "req_index.npy"))
        table = np.load(os.path.join(d, "req_to_token.npy"))
        table[ri[1], 2] = -1  # numpy would read the last slot of the pool
        np.save(os.path.join(d, "req_to_token.npy"), table)
        self.refused(1, ["req_to_token[%d][2] = -1" % ri[1]], "oracle", d)
        table[ri[1], 2] = np.load(os.path.join(d, "k_cache.npy")).shape[0]
        np.save(os.path.join(d, "req_to_token.npy"), table)
        self.refused(1, ["req_to_token[%d][2]" % ri[1]], "oracle", d)

    def test_oracle_truncated_answer(self):
        d, ref = self.case()
        with open(ref, "rb") as f:
            data = f.read()
        for cut in (len(data) // 2, 40):
            short = self.path("short.npy")
            with open(short, "wb") as f:
                f.write(data[:cut])
            self.refused(1, ["short.npy"], "oracle", d, "--check", short)

    def test_oracle_deeply_nested_case(self):
        d, _ = self.case()
        with open(os.path.join(d, "case.json"), "w") as f:
            f.write(DEEP)
        self.refused(1, ["case.json", "nested too deeply"], "oracle", d)
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump([1, 2], f)
        self.refused(1, ["case.json"], "oracle", d)


if __name__ == "__main__":
    unittest.main()
