#!/usr/bin/python3
"""Synthetic xattn results files (Google Benchmark JSON with repetitions) from a
seeded noise model, for the compare/history/plot tests.

Each benchmark has a true time t0 (from its FLOP count and a made-up rate that
depends on the variant, the thread count, the implementation and the mode);
repetition i measures t0 * slowdown * exp(N(0, noise)). Counters are derived
from the measured time exactly as xattn-bench defines them (docs/formats.md §3).

Run as a script to regenerate the fixtures in python/tests/testdata/.
"""
import json
import math
import os
import random
import sys

MACHINE = "synthetic-xeon-2c-00c0ffee"
PEAK_FP32_1T = 150.0  # GFLOP/s per thread, made up

# (suite, workload, extend tokens, visible pairs, distinct KV tokens):
# H_Q = 32, H_KV = 8, D = DV = 128; FLOPs = 2*32*(128+128)*pairs (docs/contract.md §5)
WORKLOADS = [
    ("causal-prefill", "E512", 512, 512 * 513 // 2, 512),
    ("causal-prefill", "E2048", 2048, 2048 * 2049 // 2, 2048),
    ("bidirectional", "b16xE128", 16 * 128, 16 * 128 * 128, 16 * 128),
    ("prefix-mix", "rag4096+64", 64, 64 * 4096 + 64 * 65 // 2, 4096 + 64),
]
MODE_RATE = {"causal-prefill": 1.0, "bidirectional": 1.15, "prefix-mix": 0.8}
VARIANT_RATE = {"16x64": 0.7, "16x256": 0.85, "32x64": 0.9, "32x256": 1.0, "64x64": 0.95, "64x256": 0.8}
IMPL_RATE = {"xattn": 1.0, "blas": 0.45, "torch": 0.6, "ort": 0.5, "ipex": 0.8}


def flops_of(pairs):
    return 2.0 * 32 * (128 + 128) * pairs


def name_of(suite, wl, impl="xattn", variant="32x256", threads=2, dtype="f32"):
    layout = "gqa" if impl == "xattn" else "-"
    isa = "avx512" if impl == "xattn" else "-"
    variant = variant if impl == "xattn" else "-"
    return ("suite:%s/wl:%s/dtype:%s/impl:%s/variant:%s/layout:%s/isa:%s/threads:%d/place:compact"
            % (suite, wl, dtype, impl, variant, layout, isa, threads))


def default_rows(variants=("32x256",), threads=(2,), impls=("xattn",), dtypes=("f32",)):
    """[(name, flops, tokens, true_time_s, compulsory bytes)] for the cross product asked for."""
    rows = []
    for suite, wl, tokens, pairs, kv in WORKLOADS:
        for impl in impls:
            for var in (variants if impl == "xattn" else ("-",)):
                for th in threads:
                    for dt in dtypes:
                        rate = (PEAK_FP32_1T * 0.4 * th ** 0.9 * MODE_RATE[suite] * IMPL_RATE[impl]
                                * VARIANT_RATE.get(var, 1.0) * (1.6 if dt == "bf16" else 1.0))
                        fl = flops_of(pairs)
                        nbytes = (4 if dt == "f32" else 2) * 256 * (tokens * 32 + kv * 8)
                        rows.append((name_of(suite, wl, impl, var, th, dt), fl, tokens, fl / (rate * 1e9), nbytes))
    return rows


def make_results(seed, reps=10, noise=0.01, slowdown=1.0, rows=None, commit="aaaaaaaaaaaa",
                 machine=MACHINE, extra_context=None, slow_only=None, with_bytes=False):
    """A results document. slowdown multiplies the time of every row, or only of
    rows whose name contains slow_only."""
    rnd = random.Random(seed)
    rows = rows if rows is not None else default_rows()
    ctx = {
        "date": "2026-12-02T10:00:00+00:00", "host_name": "synthetic", "executable": "xattn-bench",
        "num_cpus": 2, "mhz_per_cpu": 2000, "cpu_scaling_enabled": False,
        "library_build_type": "release",
        "xattn_commit": commit, "xattn_dirty": False, "xattn_machine": machine,
        "xattn_cpu_model": "Synthetic Xeon", "xattn_threads": 2,
        "xattn_peak_fp32_gflops": PEAK_FP32_1T * 2, "xattn_peak_bf16_gflops": PEAK_FP32_1T * 8,
        "xattn_config_provenance": "default",
    }
    ctx.update(extra_context or {})
    out = []
    for fam, (name, fl, tokens, t0, nbytes) in enumerate(rows):
        s = slowdown if (slow_only is None or slow_only in name) else 1.0
        for i in range(reps):
            t = t0 * s * math.exp(rnd.gauss(0.0, noise))
            th = int(name.split("threads:")[1].split("/")[0])
            peak = PEAK_FP32_1T * th * (4 if "dtype:bf16" in name else 1)
            gf = fl / t / 1e9
            out.append({
                "name": name, "family_index": fam, "per_family_instance_index": 0,
                "run_name": name, "run_type": "iteration", "repetitions": reps,
                "repetition_index": i, "threads": 1, "iterations": 10,
                "real_time": t * 1e3, "cpu_time": t * 1e3 * th, "time_unit": "ms",
                "flops": fl, "visible_pairs": fl / (2 * 32 * 256), "gflops": gf,
                "tokens_per_s": tokens / t, "pct_peak": 100.0 * gf / peak,
            })
            if with_bytes:
                out[-1]["input_bytes"] = nbytes  # as xattn-bench names it
    return {"context": ctx, "benchmarks": out}


def many_rows(n):
    """n distinct benchmarks in the shape of default_rows() (for the scale tests):
    the WORKLOADS repeated under new workload names, over variants and dtypes."""
    rows = []
    variants = sorted(VARIANT_RATE)
    i = 0
    while len(rows) < n:
        suite, wl, tokens, pairs, kv = WORKLOADS[i % len(WORKLOADS)]
        var, dt = variants[(i // len(WORKLOADS)) % len(variants)], ("f32", "bf16")[i % 2]
        rate = PEAK_FP32_1T * 0.75 * MODE_RATE[suite] * VARIANT_RATE[var] * (1.6 if dt == "bf16" else 1.0)
        fl = flops_of(pairs)
        nbytes = (4 if dt == "f32" else 2) * 256 * (tokens * 32 + kv * 8)
        rows.append((name_of(suite, "%s-%d" % (wl, i), "xattn", var, 2, dt), fl, tokens, fl / (rate * 1e9), nbytes))
        i += 1
    return rows


def peak_rows(threads=(1, 2)):
    return [("suite:peak/wl:fma/dtype:%s/impl:peak/variant:-/layout:-/isa:avx512/threads:%d/place:compact" % (d, t),
             1e9 * t, 1, 1.0 / (PEAK_FP32_1T * (4 if d == "bf16" else 1)), 0)
            for d in ("f32", "bf16") for t in threads]


def write(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def write_fixtures(folder):
    """The small stored fixtures of python/tests/testdata/ (deterministic)."""
    os.makedirs(folder, exist_ok=True)
    rows = default_rows()
    write(os.path.join(folder, "base.json"), make_results(1, reps=8, rows=rows))
    write(os.path.join(folder, "same.json"), make_results(2, reps=8, rows=rows, commit="bbbbbbbbbbbb"))
    write(os.path.join(folder, "slow20.json"), make_results(3, reps=8, rows=rows, slowdown=1.2,
                                                           commit="cccccccccccc"))
    write(os.path.join(folder, "other-machine.json"),
          make_results(4, reps=8, rows=rows, machine="other-cpu-4c-12345678"))
    write(os.path.join(folder, "disjoint.json"),
          make_results(5, reps=8, rows=[(r[0].replace("suite:", "suite:x"),) + tuple(r[1:]) for r in rows]))
    with open(os.path.join(folder, "not-json.json"), "w") as f:
        f.write("{\"context\": {}, \"benchmarks\": [\n")
    write(os.path.join(folder, "not-benchmark.json"), {"hello": "world"})


def write_report_fixtures(folder, results_dir_layout=True):
    """A results tree with data for every figure of `xattn plot`: a default run
    with peers, peaks, threads 1 and 2, byte counts and a bandwidth; a tuned run;
    a variant sweep; two more commits for the trend. Returns the file paths."""
    from xattn import results as res
    paths = []
    default = {"xattn_config_provenance": "hand-written default; not tuned", "xattn_mem_bw_gbs": "20.5"}
    rows = (default_rows(threads=(1, 2), impls=("xattn", "blas", "torch", "ort", "ipex"), dtypes=("f32", "bf16"))
            + peak_rows())
    for i, (commit, slow) in enumerate((("111111111111", 1.1), ("222222222222", 1.05), ("333333333333", 1.0))):
        stamp = "20261201T0%d0000Z" % i
        r = rows if i == 2 else default_rows(threads=(2,))
        paths.append(res.store_json(folder, MACHINE, commit, "default", make_results(
            10 + i, reps=5, rows=r, slowdown=slow, commit=commit, extra_context=default, with_bytes=True), stamp))
    # the provenance line of a tuned header (tune/src/tune_report.c); "default" in it must not matter
    tuned = {"xattn_config_provenance": "xattn-tune halving; machine: synthetic; speedup: 1.08 (geomean, 2 of 4 "
                                        "classes tuned); inputs: default.json fnv1a64:0123"}
    trows = [(n.replace("variant:32x256", "variant:64x64"),) + tuple(r) for n, *r in
             default_rows(threads=(1, 2), dtypes=("f32", "bf16"))]
    paths.append(res.store_json(folder, MACHINE, "333333333333", "tuned", make_results(
        20, reps=5, rows=trows, slowdown=0.92, commit="333333333333", extra_context=tuned), "20261201T030000Z"))
    paths.append(res.store_json(folder, MACHINE, "333333333333", "variants", make_results(
        21, reps=3, rows=default_rows(variants=tuple(VARIANT_RATE), threads=(2,)), commit="333333333333",
        extra_context=default), "20261201T040000Z"))
    report = {"machine": MACHINE, "commit": "333333333333", "tuned_header": "/x/tuned.h",
              "baseline_header": "/x/default.h", "geomean_tuned_classes": 1.12, "geomean_all_classes": 1.05,
              "classes": [
                  {"class": "avx512/f32/d128/causal/e2/p0", "default": "64x64 gqa", "tuned": "32x256 gqa",
                   "identical": False, "reps": 9, "default_median_s": 0.012, "tuned_median_s": 0.010,
                   "speedup": 1.2, "ci_lo": 1.15, "ci_hi": 1.26, "note": "adopted"},
                  {"class": "avx512/bf16/d128/causal/e2/p0", "default": "64x64 gqa", "tuned": "64x64 gqa",
                   "identical": True, "reps": 0, "note": "no better config found: defaults kept"},
                  {"class": "avx512/f32/d128/prefix/e0/p3", "default": "16x256 kvsplit", "tuned": "16x64 kvsplit",
                   "identical": False, "reps": 9, "default_median_s": 0.004, "tuned_median_s": 0.0038,
                   "speedup": 1.05, "ci_lo": 0.98, "ci_hi": 1.1, "note": "adopted"}]}
    path = os.path.join(folder, MACHINE, "333333333333", "20261201T050000Z_tuned-vs-default.json")
    write(path, report)
    paths.append(path)
    return paths


# the default suite as a first sweep runs it (bench/suites/default.json): one
# workload per mode plus decode steps, with the classes xattn-bench puts in the
# context (xattn_workload_classes): (workload, mode, max P, max E, tokens, pairs, KV rows read)
SWEEP_WORKLOADS = [
    ("causal-e512", "causal", 0, 512, 512, 512 * 513 // 2, 512),
    ("bidir-16x128", "bidirectional", 0, 128, 16 * 128, 16 * 128 * 128, 16 * 128),
    ("chat-p2048-e64", "causal", 2048, 64, 64, 64 * 2048 + 64 * 65 // 2, 2048 + 64),
    ("spec-p2048-e16x4", "tree", 2048, 16, 64, 4 * (16 * 2048 + 100), 4 * (2048 + 16)),
    ("decode-b8-p4096", "causal", 4096, 1, 8, 8 * 4097, 8 * 4097),
]
SWEEP_RATE = {"causal": 1.0, "bidirectional": 1.15, "tree": 0.7}
STREAM_GBPS, GATHER_GBPS = 18.0, 11.0


def sweep_rows(threads=(1, 2), dtypes=("f32", "bf16"), variant="64x64"):
    rows = []
    for wl, mode, prefix, ext, tokens, pairs, kv in SWEEP_WORKLOADS:
        for th in threads:
            for dt in dtypes:
                fl = flops_of(pairs)
                nbytes = (4 if dt == "f32" else 2) * 256 * (tokens * 32 + kv * 8)
                if ext <= 4:  # memory-bound: the time is the bytes at 80 % of the gather roof
                    t = nbytes / (0.8 * GATHER_GBPS * 1e9 * min(th, 2) / 2)
                else:
                    rate = PEAK_FP32_1T * 0.4 * th ** 0.9 * (0.8 if prefix else SWEEP_RATE[mode]) * (1.6 if dt == "bf16" else 1)
                    t = fl / (rate * 1e9)
                name = name_of("default", wl, "xattn", "decode" if ext <= 4 else variant, th, dt)
                if ext <= 4:
                    name = name.replace("variant:decode/layout:gqa", "variant:64x64/layout:decode")
                rows.append((name, fl, tokens, t, nbytes))
    return rows


def sweep_classes():
    return json.dumps({wl: {"mode": mode, "max_prefix": p, "max_extend": e}
                       for wl, mode, p, e, _, _, _ in SWEEP_WORKLOADS})


def with_memory_counters(doc):
    """Adds xattn-bench's memory counters (docs/formats.md §3) to every row:
    bytes_must_read, gbps, the row's own gather roof and pct_mem_roof."""
    for b in doc["benchmarks"]:
        nbytes = b.pop("input_bytes")
        gbps = nbytes / (b["real_time"] / 1e3) / 1e9
        b.update({"bytes_must_read": nbytes, "gbps": gbps, "gather_roof_gbps": GATHER_GBPS,
                  "stream_roof_gbps": STREAM_GBPS, "pct_mem_roof": 100.0 * gbps / GATHER_GBPS})
    return doc


def tune_cache_lines(machine=MACHINE):
    """A tuner cache (tune/src/tune_store.c) as a sweep leaves it: a class timed
    over four BMxBN variants and two layouts, a decode-step class whose fastest
    candidate is the decode layout, a rejected candidate, and a torn last line."""
    lines = [{"t": "id", "format": "xattn-tune-cache-1", "machine": machine, "cpu_model": "Synthetic Xeon",
              "topology": "1 package", "compiler": "GNU", "cflags": "-O3", "kernel_digest": "0123456789abcdef"}]
    prefill = "avx512/f32/d128/dv128/causal/e3/p0#00000000000000aa"
    step = "avx512/f32/d128/dv128/causal/e0/p2#00000000000000bb"
    ms = {"16x64": 9.0, "32x64": 7.5, "64x64": 6.0, "64x128": 6.6}
    for var, t in ms.items():
        for layout, f in (("gqa", 1.0), ("flat", 1.2)):
            for rep in range(3):
                lines.append({"t": "m", "class": prefill, "cand": "%s/%s/dynamic/t2/compact" % (var, layout),
                              "phase": "search", "rep": rep, "sec": t * f * (1 + 0.01 * rep) / 1e3})
    for cand, t in (("16x32/decode/static/t2/compact", 4.0), ("64x64/gqa/dynamic/t2/compact", 5.5),
                    ("16x64/kvsplit/static/t2/compact", 5.9)):
        for rep in range(3):
            lines.append({"t": "m", "class": step, "cand": cand, "phase": "search", "rep": rep, "sec": t / 1e3})
    lines.append({"t": "m", "class": prefill, "cand": "128x64/gqa/dynamic/t2/compact", "phase": "search", "rep": 0,
                  "sec": 1e-6})
    lines.append({"t": "v", "class": prefill, "cand": "128x64/gqa/dynamic/t2/compact", "ok": False,
                  "why": "max |diff| 3.1 at t 4"})
    return "\n".join(json.dumps(l) for l in lines) + "\n" + '{"t": "m", "class": "torn'


def write_first_sweep(folder, machine=MACHINE, commit="555555555555"):
    """What scripts/sweep.sh leaves under results/ on a fresh machine: the
    default suite run with the default header and with the tuned one (threads
    1 and 2, peaks, roofs, workload classes in the context), the tuner's
    compare report and its cache; one commit, no peers, no compare output."""
    from xattn import results as res
    ctx = {"xattn_workload_classes": sweep_classes(), "xattn_stream_roof_gbps": "%.2f" % STREAM_GBPS,
           "xattn_suite": "default"}
    default = dict(ctx, xattn_config_provenance="hand-written default; not tuned")
    tuned = dict(ctx, xattn_config_provenance="xattn-tune halving; machine: synthetic; speedup: 1.05 (geomean, "
                                              "1 of 2 classes tuned)")
    res.store_json(folder, machine, commit, "default-default-header", with_memory_counters(make_results(
        30, reps=5, rows=sweep_rows() + peak_rows(), commit=commit, machine=machine, extra_context=default,
        with_bytes=True)), "20261202T010000Z")
    res.store_json(folder, machine, commit, "default-tuned-header", with_memory_counters(make_results(
        31, reps=5, rows=sweep_rows(variant="32x64") + peak_rows(), slowdown=0.95, commit=commit, machine=machine,
        extra_context=tuned, with_bytes=True)), "20261202T020000Z")
    report = {"machine": machine, "commit": commit, "tuned_header": "/x/tuned.h", "baseline_header": "/x/default.h",
              "geomean_tuned_classes": 1.1, "geomean_all_classes": 1.05,
              "classes": [{"class": "avx512/f32/d128/dv128/causal/e3/p0#00000000000000aa", "default": "64x64 gqa",
                           "tuned": "32x64 gqa", "identical": False, "reps": 9, "default_median_s": 0.0063,
                           "tuned_median_s": 0.006, "speedup": 1.05, "ci_lo": 1.01, "ci_hi": 1.09,
                           "note": "adopted"}]}
    write(os.path.join(folder, machine, commit, "20261202T030000Z_tuned-vs-default.json"), report)
    with open(os.path.join(folder, machine, "tune-cache-0123456789abcdef.jsonl"), "w") as f:
        f.write(tune_cache_lines(machine))


if __name__ == "__main__":
    write_fixtures(sys.argv[1] if len(sys.argv) > 1 else
                   os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata"))
