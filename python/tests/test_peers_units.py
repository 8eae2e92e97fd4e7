#!/usr/bin/python3
"""ctest `python.peers_units`: the parts of the peers that need no venv (Debian's
python3 with numpy): visible-pair counts and masks (docs/contract.md §2 and §5) on
hand-counted cases and against a brute-force count, Google-Benchmark rows and
aggregates, never-overwriting publication, placement."""
import itertools
import json
import os
import tempfile
import unittest

from xattn import suites as wl
from xattn.peers import placement, results_json


def W(reqs, mode="causal", align="bottom_right", window=(-1, -1), tree=None):
    w = {"name": "t", "requests": [list(r) for r in reqs], "heads_q": 4, "heads_kv": 2, "head_dim": 8,
         "head_dim_v": 8, "mode": mode, "align": align, "window": list(window)}
    if tree is not None:
        w["tree_mask"] = tree
    wl.check_workload(w, "t")
    return w


def brute(w):
    """docs/contract.md §2 one pair at a time."""
    n = 0
    for b, (p, e, enc) in enumerate(w["requests"]):
        keys = enc if w["mode"] == "cross" else p + e
        for i, j in itertools.product(range(e), range(keys)):
            pos = p + i
            if w["mode"] == "causal":
                vis = j <= (i if w["align"] == "top_left" else pos)
            elif w["mode"] == "tree":
                vis = j < p or w["tree_mask"][b][i][j - p] == "1"
            else:
                vis = True
            left, right = w["window"]
            vis = vis and (left < 0 or j >= pos - left) and (right < 0 or j <= pos + right)
            n += vis
    return n


class VisiblePairs(unittest.TestCase):
    def test_hand_counted(self):
        self.assertEqual(wl.visible_pairs(W([[0, 4]])), 10)                        # 1+2+3+4
        self.assertEqual(wl.visible_pairs(W([[3, 2]])), 9)                         # 4+5
        self.assertEqual(wl.visible_pairs(W([[3, 2]], align="top_left")), 3)       # 1+2
        self.assertEqual(wl.visible_pairs(W([[3, 2]], mode="bidirectional")), 10)  # 2*5
        self.assertEqual(wl.visible_pairs(W([[0, 4]], window=(1, 0))), 7)          # 1+2+2+2
        self.assertEqual(wl.visible_pairs(W([[0, 3, 5]], mode="cross")), 15)
        self.assertEqual(wl.visible_pairs(W([[2, 3]], mode="tree", tree=[["100", "110", "101"]])), 11)  # 3*2 + 1+2+2
        self.assertEqual(wl.visible_pairs(W([[0, 2048]])), 2048 * 2049 // 2)

    def test_against_brute_force(self):
        cases = []
        for mode, align, window in itertools.product(("causal", "bidirectional"), ("bottom_right", "top_left"),
                                                     ((-1, -1), (2, 0), (0, 1), (3, 3), (-1, 2))):
            cases.append(W([[0, 5], [4, 3], [7, 1], [2, 0]], mode, align, window))
        cases.append(W([[0, 3, 4], [2, 2, 6]], "cross", window=(1, -1)))
        cases.append(W([[3, 3], [0, 2]], "tree", window=(2, -1), tree=[["100", "110", "011"], ["10", "11"]]))
        for w in cases:
            with self.subTest(mode=w["mode"], align=w["align"], window=w["window"]):
                self.assertEqual(wl.visible_pairs(w), brute(w))
                self.assertEqual(sum(int(wl.visible_mask(w, b).sum()) for b in range(len(w["requests"]))), brute(w))

    def test_flops(self):
        w = W([[0, 4]])
        self.assertEqual(wl.flops(w, 10), 2 * 4 * (8 + 8) * 10)

    def test_bad_workloads(self):
        with self.assertRaises(wl.PlanError):
            W([[0, 4]], mode="sideways")
        with self.assertRaises(wl.PlanError):
            wl.parse_batch("0:4,-1:3")
        self.assertEqual(wl.parse_batch("0:4,5:3:2"), [[0, 4, 0], [5, 3, 2]])


class Results(unittest.TestCase):
    def test_rows_and_aggregates(self):
        name = results_json.bench_name("s", "w", "f32", "torch", 2, "compact")
        self.assertEqual(name, "suite:s/wl:w/dtype:f32/impl:torch/variant:-/layout:-/isa:-/threads:2/place:compact")
        rows = results_json.rows_for(name, 3, [0.002, 0.001, 0.004], [0.002, 0.001, 0.004], [5, 9, 2],
                                     pairs=100, flop_count=1e9, tokens=50, peak=1000.0)
        its = [r for r in rows if r["run_type"] == "iteration"]
        aggs = {r["aggregate_name"]: r for r in rows if r["run_type"] == "aggregate"}
        self.assertEqual(len(its), 3)
        self.assertEqual(set(aggs), {"mean", "median", "stddev", "cv"})
        med = aggs["median"]
        self.assertEqual(med["name"], name + "_median")
        self.assertEqual(med["run_name"], name)
        self.assertAlmostEqual(med["real_time"], 2.0)                 # ms
        self.assertAlmostEqual(med["gflops"], 1e9 / 0.002 / 1e9)      # 500
        self.assertAlmostEqual(med["pct_peak"], 50.0)
        self.assertAlmostEqual(med["tokens_per_s"], 25000.0)
        self.assertEqual(med["visible_pairs"], 100)
        self.assertEqual(aggs["cv"]["aggregate_unit"], "percentage")
        self.assertTrue(all(r["time_unit"] == "ms" and r["family_index"] == 3 for r in rows))
        no_peak = results_json.rows_for(name, 0, [0.001], [0.001], [1], 1, 1.0, 1, None)
        self.assertNotIn("pct_peak", no_peak[0])

    def test_publish_never_overwrites(self):
        with tempfile.TemporaryDirectory() as d:
            doc = {"context": {}, "benchmarks": []}
            paths = [results_json.publish(dict(doc, n=i), d, "m-2c-0000", "abc-dirty", "peers x") for i in range(3)]
            self.assertEqual(len(set(paths)), 3)
            for i, p in enumerate(paths):
                self.assertTrue(p.startswith(os.path.join(d, "m-2c-0000", "abc-dirty") + "/"))
                self.assertIn("_peers-x", p)
                with open(p) as f:
                    self.assertEqual(json.load(f)["n"], i)
            self.assertEqual([f for f in os.listdir(os.path.dirname(paths[0])) if f.startswith(".tmp")], [])


class Placement(unittest.TestCase):
    def test_compact_and_cores(self):
        order = placement.compact_order()
        self.assertEqual(len(order), len(set(order)))
        self.assertEqual(placement.select("compact", 1), order[:1])
        self.assertEqual(placement.select("cores=0", 1), order[:1])
        with self.assertRaises(ValueError):
            placement.select("compact", len(order) + 1)
        self.assertEqual(sorted(placement.select("scatter", len(order))), sorted(order))
        self.assertEqual(placement.select("numa", 1)[0] in order, True)
        with self.assertRaises(ValueError):
            placement.select("numa=999", 1)
        with self.assertRaises(ValueError):
            placement.select("sideways", 1)
        with self.assertRaises(ValueError):
            placement.select("cores=0", 2)


if __name__ == "__main__":
    unittest.main(verbosity=1)
