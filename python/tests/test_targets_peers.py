"""`xattn targets` section 6 (PEERS=1 bench/run-targets.sh): the peers' rates
next to xattn's on the targets workloads, the IPEX row at its best page size,
xattn / peer ratios, and the skipped rows listed."""
import contextlib
import io
import json
import os
import tempfile
import unittest

from xattn.perf import targets
from xattn.peers import results_json


def median_row(name, gflops):
    return {"name": name + "_median", "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
            "gflops": gflops}


class TargetsPeers(unittest.TestCase):
    def test_best_page_and_ratios(self):
        name = lambda impl, var, dt="bf16": results_json.bench_name("targets", "causal-e2048", dt, impl, 2,
                                                                   "compact", var)
        doc = {"context": {"xattn_peers_skipped": ["suite:targets/wl:x: because"],
                           "xattn_peers": {"intel_extension_for_pytorch": "2.8.0+cpu"}},
               "benchmarks": [median_row(name("ipex", "page16"), 150.0), median_row(name("ipex", "page128"), 400.0),
                              median_row(name("torch", "-"), 800.0), median_row(name("torch", "-", "f32"), 200.0)]}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "peers.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            best, skipped, versions = targets.peer_medians(path)
            self.assertEqual(best[("causal-e2048", "bf16", "ipex", 2)], (400.0, "page128"))
            self.assertEqual(skipped, ["suite:targets/wl:x: because"])
            xattn = {("causal-e2048", "bf16"): 1200.0, ("causal-e2048", "f32"): 300.0}
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                targets.print_peers(path, lambda wl, dt, impl, t, key: xattn.get((wl, dt), float("nan")), 2)
        text = out.getvalue()
        self.assertIn("causal-e2048     bf16: xattn 1200.0 | ipex page128 400.0 (x3.00) | torch 800.0 (x1.50)", text)
        self.assertIn("causal-e2048     f32 : xattn 300.0 | ipex nan", text)
        self.assertIn("skipped: suite:targets/wl:x: because", text)
        self.assertIn("intel_extension_for_pytorch 2.8.0+cpu", text)


if __name__ == "__main__":
    unittest.main()
