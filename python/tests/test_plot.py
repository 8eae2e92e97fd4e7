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

    def test_fleet_page_shows_machines_side_by_side(self):
        """Results of two machines (a fleet's results tree): the fleet figures show
        each machine's rates, speedup and chosen configs apart; the figures of one
        machine still hold only that machine."""
        from xattn import results as res
        tree = os.path.join(self.tmp, "results")
        synth.write_report_fixtures(tree)
        other = "other-xeon-8c-0badf00d"
        tuned = {"xattn_config_provenance": "xattn-tune halving; machine: other; speedup: 1.2 (geomean)",
                 "xattn_machine": other, "xattn_peak_fp32_gflops": 900.0, "xattn_mem_bw_gbs": "40"}
        rows = [(n.replace("variant:32x256", "variant:16x64"),) + tuple(r)
                for n, *r in synth.default_rows(threads=(2,), dtypes=("f32", "bf16"))]
        res.store_json(tree, other, "444444444444", "tuned", synth.make_results(
            30, reps=5, rows=rows, slowdown=0.5, commit="444444444444", machine=other, extra_context=tuned,
            with_bytes=True), "20261202T010000Z")
        report = {"machine": other, "commit": "444444444444", "tuned_header": "/y/tuned.h",
                  "baseline_header": "/y/default.h", "geomean_tuned_classes": 1.31, "geomean_all_classes": 1.2,
                  "classes": [{"class": "avx512/f32/d128/causal/e2/p0", "default": "64x64 gqa",
                               "tuned": "128x32/gqa/static/t8/compact", "identical": False, "reps": 9,
                               "default_median_s": 0.02, "tuned_median_s": 0.015, "speedup": 1.31,
                               "ci_lo": 1.2, "ci_hi": 1.4, "note": "adopted"}]}
        synth.write(os.path.join(tree, other, "444444444444", "20261202T020000Z_tuned-vs-default.json"), report)
        out = os.path.join(self.tmp, "out")
        rc, stdout, err = run(PLOT, tree, "-o", out)
        self.assertEqual(rc, 0, stdout + err)
        for stem in ("fleet-rates", "fleet-speedup", "fleet-configs"):
            self.assertPicture(out, stem)
        html = self.index(out)
        self.assertIn(other, html)
        self.assertIn(synth.MACHINE, html)
        # each machine's own choice for the shared class, never a blend
        self.assertIn("128x32/gqa/static/t8/compact x1.310", html)
        self.assertIn("32x256 gqa x1.200", html)
        # the per-machine speedups as measured on each machine
        self.assertIn("<td>%s</td><td>444444444444</td><td>1</td><td>1</td><td>1.31</td>" % other, html)
        # rates: the other machine's rows carry its own % of peak (900 GFLOP/s) and memory roof (40 GB/s)
        self.assertRegex(html, r"<td>causal-prefill/E2048/f32</td><td>%s</td><td>16x64</td>" % other)
        # the one-machine figures name the machine they drew and say the other was left out
        self.assertIn("fleet figures show each machine side by side", stdout)

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
        self.assertIn("ipex GFLOP/s", html)  # the IPEX peer has its column in the peers table
        self.assertIn("memory roof: 20.5 GB/s (context xattn_mem_bw_gbs)", html)
        self.assertIn("<table>", html)

    def test_first_sweep_draws_every_panel_it_has_data_for(self):
        """What scripts/sweep.sh leaves on a fresh machine (the default suite with
        both headers, the tuner's report and cache; one commit, no peers) must
        give the heatmaps (from the tuner's cache), the per-mode rates (from the
        default suite's rows, by the workload classes in the context) and the
        roofline with the stream and gather roofs; exactly the panels without
        data (trend, commit comparison, peers) are listed as not drawn, with
        their reasons. A panel that goes missing without a reason fails here."""
        res = os.path.join(self.tmp, "results")
        synth.write_first_sweep(res)
        out = os.path.join(self.tmp, "out")
        rc, stdout, err = run(PLOT, res, "-o", out)
        self.assertEqual(rc, 0, stdout + err)
        html = self.index(out)
        drawn = {"roofline", "heatmap-0", "heatmap-1", "modes", "scaling", "tuned", "tune-report"}
        for stem in sorted(drawn):
            self.assertPicture(out, stem)
            self.assertIn("src='%s.png'" % stem, html)
        not_drawn = sorted(l.split(":")[1].strip() for l in stdout.splitlines() if l.startswith("not drawn: "))
        self.assertEqual(not_drawn, ["Commit comparison (xattn compare)",
                                     "Trend over commits (median GFLOP/s, relative to the oldest commit)",
                                     "xattn and its peers side by side"], stdout)
        self.assertIn("results of only one commit", html)
        # heatmaps from the tuner's cache: every variant's fastest candidate, the
        # rejected one left out, the decode layout named in the notes
        self.assertIn("BLOCK_M x BLOCK_N heatmap: tuner avx512/f32/d128/dv128/causal/e3/p0", html)
        self.assertIn("fastest tile 64x64", html)
        self.assertNotIn("128x64/gqa", html)
        self.assertIn("layout decode has no tile: its fastest candidate 16x32/decode/static/t2/compact", html)
        # per-mode rates from the default suite: four modes, the decode steps left out of them
        for mode in ("causal", "prefix-mix", "bidirectional", "tree"):
            self.assertIn("<td>%s</td>" % mode, html)
        self.assertIn("few-row row(s) (max E &lt;= 4", html)
        # the roofline: both memory roofs, and % of the gather roof beside % of peak
        self.assertIn("memory roof: 18.0 GB/s (context xattn_stream_roof_gbps)", html)
        self.assertIn("gather roof: median 11.0 GB/s", html)
        self.assertIn("<th>% of gather roof</th>", html)
        self.assertIn("decode-b8-p4096", html)

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
