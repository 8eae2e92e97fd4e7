#!/usr/bin/python3
"""Stand-in for xattn-bench in the compare tests: accepts the flags `xattn compare`
passes, appends '<role> <argv>' to $FAKE_BENCH_LOG, and writes synthetic results
(tests/synth.py) slowed down by --slowdown to --benchmark_out."""
import argparse
import zlib
import os
import time

import synth  # this script's folder is sys.path[0]

p = argparse.ArgumentParser()
p.add_argument("--role", required=True)
p.add_argument("--slowdown", type=float, default=1.0)
p.add_argument("--suite")
p.add_argument("--placement")
p.add_argument("--repetitions", type=int, default=5)
p.add_argument("--results-dir")
p.add_argument("--no-baseline", action="store_true")
p.add_argument("--no-peak", action="store_true")
p.add_argument("--reference-max-gflop")
p.add_argument("--benchmark_min_time")
p.add_argument("--benchmark_out", required=True)
p.add_argument("--benchmark_out_format")
p.add_argument("--benchmark_filter")
a = p.parse_args()
# this call's number: the log's lines (one per finished call) plus one
call = 1
if os.path.exists(os.environ["FAKE_BENCH_LOG"]):
    with open(os.environ["FAKE_BENCH_LOG"]) as f:
        call = len(f.read().split("\n"))
# FAKE_BENCH_FAIL_AT=N: the Nth call dies before writing its results, as a
# killed run does
if call == int(os.environ.get("FAKE_BENCH_FAIL_AT", "0")):
    raise SystemExit(137)
# FAKE_BENCH_HANG_AT=N: the Nth call writes its pid to $FAKE_BENCH_PIDFILE and
# runs on for two minutes, as a long round does
if call == int(os.environ.get("FAKE_BENCH_HANG_AT", "0")):
    with open(os.environ["FAKE_BENCH_PIDFILE"] + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(os.environ["FAKE_BENCH_PIDFILE"] + ".tmp", os.environ["FAKE_BENCH_PIDFILE"])
    time.sleep(120)
with open(os.environ["FAKE_BENCH_LOG"], "a") as f:
    f.write("%s suite=%s placement=%s reps=%d results-dir=%s min_time=%s\n"
            % (a.role, a.suite, a.placement, a.repetitions, a.results_dir, a.benchmark_min_time))
seed = zlib.crc32((a.role + open(os.environ["FAKE_BENCH_LOG"]).read()).encode())
synth.write(a.benchmark_out, synth.make_results(seed, reps=a.repetitions, slowdown=a.slowdown,
                                                commit="fake%s" % a.role))
