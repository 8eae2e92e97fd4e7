"""Scale of `xattn compare`, `xattn history` and `xattn plot`: the work per
results row must not grow with the number of rows.

They used to rescan a file's rows once per benchmark (ResultFile.names() and
samples()): quadratic, 20k rows took 41 s and 100k rows minutes. Timing a test
on a shared machine proves little, so the first tests count instead: the rows
handed to the tools are dicts that count every key lookup (CountingRow). A tool
that indexes the rows once looks at each row a fixed number of times, so the
lookups per row are the same for 4x the rows; the quadratic one looked at every
row once per benchmark, so its lookups per row grew 4x too. The bound allows
1.5x. The last test then runs the three commands on a generated 100k-row
results set (two files of 50k rows: 5,000 benchmarks x 10 repetitions each):
seconds when linear, far past ctest's TIMEOUT when quadratic, but what it
asserts is only the commands' output, never a time."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import synth
import tools
from xattn import results
from xattn.perf import comparison, history
from xattn.plot import dataset, figures


class CountingRow(dict):
    """A results row that counts the lookups of its keys."""
    lookups = 0

    def __getitem__(self, key):
        CountingRow.lookups += 1
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        CountingRow.lookups += 1
        return dict.get(self, key, default)


def counting_data(n_benchmarks, seed, commit):
    data = synth.make_results(seed, reps=5, rows=synth.many_rows(n_benchmarks), commit=commit, with_bytes=True)
    data["benchmarks"] = [CountingRow(r) for r in data["benchmarks"]]
    return data


def lookups_per_row(n_benchmarks, work):
    """Key lookups per row that loading two files of n_benchmarks x 5
    repetitions each (ResultFile, which indexes them) and work(base, head) make."""
    docs = [counting_data(n_benchmarks, 1, "aaaaaaaaaaaa"), counting_data(n_benchmarks, 2, "bbbbbbbbbbbb")]
    CountingRow.lookups = 0
    base, head = (results.ResultFile("20261201T00000%dZ_%s.json" % (i, label), d)
                  for i, label, d in ((1, "base", docs[0]), (2, "head", docs[1])))
    work(base, head)
    return CountingRow.lookups / float(len(base.rows) + len(head.rows))


def plot_figures(base, head):
    ds = dataset.Dataset()
    ds.add_file(base)
    ds.add_file(head)
    for build in (figures.roofline, figures.heatmaps, figures.modes, figures.scaling, figures.peers):
        build(ds)
    figures.trend(ds, None)


class LinearInRows(unittest.TestCase):
    SMALL, LARGE = 400, 1600  # benchmarks a file: 2,000 and 8,000 rows

    def assertLinear(self, work):
        small = lookups_per_row(self.SMALL, work)
        large = lookups_per_row(self.LARGE, work)
        self.assertGreater(small, 0, "the tool never looked at a row: the test measures nothing")
        self.assertLess(large / small, 1.5, "lookups per row: %.1f with %d benchmarks, %.1f with %d"
                        % (small, self.SMALL, large, self.LARGE))

    def test_names_and_samples(self):
        self.assertLinear(lambda b, h: [b.samples(n) for n in b.names()])

    def test_compare(self):
        self.assertLinear(lambda b, h: comparison.compare(b, h))

    def test_history_trend(self):
        self.assertLinear(lambda b, h: history.trend([history.Run(b), history.Run(h)], "wl:", repo=tools.TESTS))

    def test_plot_dataset_and_figures(self):
        self.assertLinear(plot_figures)


class HundredThousandRows(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xattn-scale-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_tool(self, name, *args):
        p = subprocess.run(tools.command(name) + list(args), capture_output=True, text=True,
                           env=tools.env(), cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_compare_history_plot_on_100k_rows(self):
        rows = synth.many_rows(5000)
        folder = os.path.join(self.tmp, "results", synth.MACHINE)
        paths = []
        for seed, commit in ((1, "aaaaaaaaaaaa"), (2, "bbbbbbbbbbbb")):
            data = synth.make_results(seed, reps=10, rows=rows, commit=commit, with_bytes=True,
                                      slowdown=1.3 if seed == 2 else 1.0, slow_only="wl:E512-0/")
            path = os.path.join(folder, commit, "2026120%dT000000Z_default.json" % seed)
            os.makedirs(os.path.dirname(path))
            with open(path, "w") as f:
                json.dump(data, f)
            paths.append(path)
        cmp = json.loads(self.run_tool("compare", paths[0], paths[1], "--no-store", "--json"))
        self.assertEqual(len(cmp["rows"]), 5000)
        self.assertEqual([r["name"] for r in cmp["rows"] if r["verdict"] == "regression"],
                         [n for n, *_ in rows if "wl:E512-0/" in n])
        trend = self.run_tool("history", "--results", os.path.join(self.tmp, "results"), "trend", "wl:E512-0/")
        self.assertIn("aaaaaaaaaaaa", trend)
        self.assertIn("bbbbbbbbbbbb", trend)
        report = self.run_tool("plot", os.path.join(self.tmp, "results"), "-o", os.path.join(self.tmp, "plot"))
        self.assertIn("1 results file(s), 5000 benchmark rows", report)
        self.assertTrue(os.path.isfile(os.path.join(self.tmp, "plot", "index.html")), report)


if __name__ == "__main__":
    unittest.main()
