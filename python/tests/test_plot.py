#!/usr/bin/python3
"""ctest (label python): `xattn plot` draws every figure it has data for as a
non-empty PNG and SVG, lists the others as not drawn (never an empty picture),
and writes an index.html that shows them."""
import os
import shutil
import subprocess
import tempfile
import unittest

import synth
import tools

PLOT = tools.command("plot")
COMPARE = tools.command("compare")
TESTDATA = tools.TESTDATA
ALL_FIGURES = ["roofline", "heatmap-0", "modes", "scaling", "tuned", "tune-report", "compare-0", "trend", "peers"]


def run(cmd, *args):
    p = subprocess.run(cmd + list(args), capture_output=True, text=True, env=tools.env())
    return p.returncode, p.stdout, p.stderr


class PlotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xattn-plot-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assertPicture(self, out, stem):
        png, svg = os.path.join(out, stem + ".png"), os.path.join(out, stem + ".svg")
        self.assertTrue(os.path.isfile(png), png)
        self.assertGreater(os.path.getsize(png), 1000, png)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)
        self.assertGreater(os.path.getsize(svg), 0, svg)
        with open(svg, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("<svg", text, svg)
        self.assertIn("</svg>", text, svg)

    def index(self, out):
        with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
            return f.read()

    def test_every_figure_from_a_full_results_tree(self):
        res = os.path.join(self.tmp, "results")
        paths = synth.write_report_fixtures(res)
        rc, _, err = run(COMPARE, paths[1], paths[2], "--results-dir", res)
        self.assertEqual(rc, 0, err)
        out = os.path.join(self.tmp, "out")
        rc, stdout, err = run(PLOT, res, "-o", out)
        self.assertEqual(rc, 0, stdout + err)
        html = self.index(out)
        for stem in ALL_FIGURES:
            self.assertPicture(out, stem)
            self.assertIn("src='%s.png'" % stem, html)
            self.assertIn("href='%s.svg'" % stem, html)
        self.assertNotIn("Not drawn", html)
        # tables under the pictures carry the numbers: the tuned run is 1/0.92 faster
        self.assertIn("geomean speedup tuned/default", html)
        self.assertIn("memory roof: 20.5 GB/s (context xattn_mem_bw_gbs)", html)
        self.assertIn("<table>", html)

    def test_stored_results_skip_what_they_lack(self):
        # two stored fixtures and their comparison: per-mode bars and the comparison
        # can be drawn; nothing else has data and must not be drawn empty
        res = os.path.join(self.tmp, "results")
        rc, _, err = run(COMPARE, os.path.join(TESTDATA, "base.json"), os.path.join(TESTDATA, "slow20.json"),
                         "--results-dir", res)
        self.assertEqual(rc, 0, err)
        out = os.path.join(self.tmp, "out")
        rc, stdout, err = run(PLOT, os.path.join(TESTDATA, "base.json"), res, "-o", out)
        self.assertEqual(rc, 0, stdout + err)
        self.assertPicture(out, "modes")
        self.assertPicture(out, "compare-0")
        html = self.index(out)
        for stem in ("roofline", "heatmap-0", "scaling", "tuned", "tune-report", "trend", "peers"):
            self.assertFalse(os.path.exists(os.path.join(out, stem + ".png")), stem + " drawn without data")
            self.assertNotIn("src='%s.png'" % stem, html)
        self.assertIn("Not drawn", html)
        self.assertIn("no workload measured with two or more BMxBN variants", html)
        self.assertIn("no benchmark measured at two or more thread counts", html)
        self.assertIn("not drawn: ", stdout)

    def test_refuses_inputs_without_results(self):
        rc, _, err = run(PLOT, os.path.join(self.tmp, "missing"), "-o", os.path.join(self.tmp, "o"))
        self.assertEqual(rc, 2)
        self.assertIn("no such file", err)
        rc, _, err = run(PLOT, os.path.join(TESTDATA, "not-json.json"), "-o", os.path.join(self.tmp, "o"))
        self.assertEqual(rc, 2)
        self.assertIn("no results files", err)


if __name__ == "__main__":
    unittest.main()
