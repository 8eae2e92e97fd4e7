#!/usr/bin/python3
"""ctest `peers.flush`: `run_peers.py --flush-caches` flushes each peer's
tensors (run.buffers) with bench's xb_flush_ranges (libxattn_flush.so beside
the plan tool) before every timed call and only then: the library's own count
of calls equals the timed calls of every row (the iterations of its
repetitions), so a timing loop that skips the flush, or flushes during the
warm-up too, fails; the context says xattn_flush_caches "true" (the key
xattn-bench writes) and "false" without the flag. Both main-venv peers
(torch, ort) and, when its venv exists, ipex. What it cannot show: that the
lines left the caches (bench.problem_builder shows the flush changes no
byte). Exit 77 without the venv."""
import argparse
import json
import os
import sys
import tempfile

from xattn.peers import peers_env
from tools import run_or_skip as run


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--plan-tool", required=True)
    a = ap.parse_args(argv)
    peers_env.ensure("peers.flush")
    fails = []
    rp = [sys.executable, "-m", "xattn.peers.run_peers", "--plan-tool", a.plan_tool, "--impl", "torch,ort",
          "--batch", "64:1,200:3", "--heads", "4,2", "--dims", "32,32", "--repetitions", "2", "--min-time", "0.002",
          "--warmup", "2", "--threads", "1", "--results-dir", "none"]
    with tempfile.TemporaryDirectory(prefix="xattn-peers-flush-") as tmp:
        for flush in (True, False):
            out = os.path.join(tmp, f"flush-{flush}.json")
            log = run(rp + ["--out", out] + (["--flush-caches"] if flush else []))
            with open(out) as f:
                doc = json.load(f)
            ctx = doc["context"]
            want = "true" if flush else "false"
            if ctx.get("xattn_flush_caches") != want:
                fails.append(f"flush={flush}: context xattn_flush_caches {ctx.get('xattn_flush_caches')!r}, want {want!r}")
            timed = sum(b["iterations"] for b in doc["benchmarks"] if b["run_type"] == "iteration")
            if flush:
                counted = int(ctx.get("xattn_peers_flushes", "-1"))
                if timed == 0 or counted != timed:
                    fails.append(f"flushes counted by the library {counted}, timed calls {timed}")
                if f"caches flushed before {counted} timed calls" not in log:
                    fails.append("no line saying how many calls were flushed")
            elif "xattn_peers_flushes" in ctx:
                fails.append("a run without --flush-caches reports flushes")
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("ok: every timed call flushed, and only those")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
