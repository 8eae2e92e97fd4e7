#!/usr/bin/python3
"""Times the peers a user would pick instead of xattn, PyTorch's CPU
scaled_dot_product_attention (impl:torch), ONNX Runtime's Attention
operator (impl:ort) and Intel Extension for PyTorch's paged attention
(impl:ipex), on xattn's workload suites at the same thread counts, and
writes Google-Benchmark-format JSON like xattn-bench (docs/formats.md §3).

  run_peers.py --suite NAME|PATH [options]       workloads of a bench suite
  run_peers.py --plan PLAN.json [options]        a plan written by xattn-peers-plan
  run_peers.py --batch 0:2048,4096:64 --out F    one ad-hoc workload (no results/)

Options: --impl torch,ort[,ipex]  --dtype f32,bf16 (default: each workload's dtypes)
  --workload SUBSTRING[,SUBSTRING..]  --threads 1,2|auto (auto, the default: xattn-bench's list)
  --place compact|scatter|numa[=N]|cores=..  (xattn-bench's --dtypes/--workloads/--placement also work)
  --repetitions 5  --min-time 0.2 (s per repetition)  --warmup 1  --seed 42
  --results-dir results  --label peers-<suite>  --out FILE (also/instead)  --no-peak
  --ort-max-scores-gib 4 (ORT materializes the [H_Q, E, S] scores: bigger calls are skipped)
  --ipex-pages 16,128 (page sizes; rows variant:pageN)  --ipex-omp intel|gnu (ipexrun's settings
  for Intel OpenMP (default, preloaded from the venv) or GNU OpenMP)
  --plan-tool PATH (default $XATTN_PEERS_PLAN, then build*/bin/xattn-peers-plan)
  --flush-caches  every timed call starts with the peer's tensors flushed from every
  cache level (bench's flush, libxattn_flush.so beside the plan tool; outside the
  timed interval), as xattn-bench --flush-caches does for xattn's rows
  ad-hoc workload: --heads 32,8 --dims 128,128 --mode causal --name NAME

Runs under the venv of scripts/make-venv.sh: started with any python3 it
re-executes itself there, and without one it prints one line and exits 77.
impl:ipex runs in the second venv (scripts/make-venv.sh --ipex); without it
the ipex rows are skipped with one line (exit 77 when ipex is all that was asked).
Each thread count runs in its own process restricted to that many PUs; an
ipex row is checked against xattn's fp64 reference before it is timed and
refused (listed in xattn_peers_skipped, not timed) when it fails.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from .. import children
from . import peers_env, placement, results_json

IMPLS = ("torch", "ort", "ipex")
# modules each venv must provide (peers_env.ensure)
MAIN_MODULES = {"torch": ("torch", "numpy"), "ort": ("onnxruntime", "onnx", "numpy")}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="xattn peers", description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    src = ap.add_argument_group("workloads")
    src.add_argument("--suite")
    src.add_argument("--plan")
    src.add_argument("--batch")
    src.add_argument("--heads", default="32,8")
    src.add_argument("--dims", default="128,128")
    src.add_argument("--mode", default="causal")
    src.add_argument("--name")
    src.add_argument("--plan-tool")
    ap.add_argument("--impl", default="torch,ort")
    # xattn-bench's spellings (--dtypes, --workloads, --placement) work too
    ap.add_argument("--dtype", "--dtypes", dest="dtype")
    ap.add_argument("--workload", "--workloads", dest="workload")
    ap.add_argument("--threads")
    ap.add_argument("--place", "--placement", dest="place", default="compact")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--results-dir", default=os.path.join(peers_env.REPO, "results"))
    ap.add_argument("--label")
    ap.add_argument("--out")
    ap.add_argument("--no-peak", action="store_true", help="skip the peak measurement (no pct_peak counters)")
    ap.add_argument("--ort-max-scores-gib", type=float, default=4.0,
                    help="skip ORT calls whose [H_Q, E, S] score matrix exceeds this")
    ap.add_argument("--ipex-pages", default="16,128")
    ap.add_argument("--ipex-omp", default="intel", choices=("intel", "gnu"))
    ap.add_argument("--flush-caches", action="store_true",
                    help="flush each call's tensors from the caches before it (untimed)")
    ap.add_argument("--flush-lib", help=argparse.SUPPRESS)  # the parent hands its children the library
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if sum(x is not None for x in (a.suite, a.plan, a.batch)) != 1:
        ap.error("give exactly one of --suite, --plan, --batch")
    if a.batch and not a.out:
        ap.error("--batch needs --out (ad-hoc rows have no machine context for results/)")
    impls = a.impl.split(",")
    bad = [i for i in impls if i not in IMPLS]
    if bad:
        ap.error(f"--impl: unknown {', '.join(bad)} (torch, ort, ipex)")
    try:
        a.pages = [int(x) for x in a.ipex_pages.split(",")]
    except ValueError:
        ap.error(f"--ipex-pages: {a.ipex_pages!r}, want page sizes like 16,128")
    if any(p < 1 for p in a.pages):
        ap.error("--ipex-pages: page sizes >= 1")
    if a.repetitions < 1 or a.min_time < 0 or a.warmup < 0:
        ap.error("--repetitions >= 1, --min-time >= 0, --warmup >= 0")
    return a


def find_plan_tool(a):
    cands = [a.plan_tool, os.environ.get("XATTN_PEERS_PLAN")]
    cands += sorted(glob.glob(os.path.join(peers_env.REPO, "build*", "bin", "xattn-peers-plan")))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("run_peers: no xattn-peers-plan (build the tree, or give --plan-tool PATH): "
             "suites are read by bench's parser through it")


def find_flush_lib(a):
    """libxattn_flush.so (bench/src/flush.c): beside the plan tool, else $XATTN_FLUSH_LIB."""
    here = os.path.dirname(os.path.realpath(find_plan_tool(a)))
    for c in (os.environ.get("XATTN_FLUSH_LIB"), os.path.join(here, "libxattn_flush.so")):
        if c and os.path.exists(c):
            return c
    sys.exit(f"run_peers: --flush-caches: no libxattn_flush.so beside {here} (build the tree, or set XATTN_FLUSH_LIB)")


class Flusher:
    """Flushes a peer's tensors (run.buffers: torch tensors or NumPy arrays)
    with bench's xb_flush_ranges; count() is the library's own call count."""

    def __init__(self, path, threads):
        import ctypes
        self.lib = ctypes.CDLL(path)
        self.lib.xb_flush_ranges.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                             ctypes.c_int, ctypes.c_int]
        self.lib.xb_flush_count.restype = ctypes.c_ulonglong
        self.ctypes, self.threads = ctypes, threads

    def ranges(self, run, name):
        bufs = getattr(run, "buffers", None)
        if not bufs:
            sys.exit(f"run_peers: --flush-caches: {name}: the peer does not name its tensors (run.buffers)")
        spans = []
        for b in bufs:
            if hasattr(b, "data_ptr"):  # torch
                spans.append((b.data_ptr(), b.numel() * b.element_size()))
            else:  # NumPy
                spans.append((b.ctypes.data, b.nbytes))
        c = self.ctypes
        return ((c.c_void_p * len(spans))(*[s[0] for s in spans]), (c.c_size_t * len(spans))(*[s[1] for s in spans]),
                len(spans))

    def __call__(self, r):
        self.lib.xb_flush_ranges(r[0], r[1], r[2], self.threads)

    def count(self):
        return int(self.lib.xb_flush_count())


def make_plan(a, path):
    """Writes the plan to path; returns it."""
    from .. import suites as wl
    if a.plan:
        plan = wl.load_plan(a.plan)
    elif a.suite:
        cmd = [find_plan_tool(a), "--suite", a.suite, "--seed", str(a.seed)]
        if not a.no_peak:
            cmd += ["--peak-threads", a.threads or "auto", "--place", a.place]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            sys.exit(proc.returncode)
        plan = json.loads(proc.stdout)
    else:
        hq, hkv = (int(x) for x in a.heads.split(","))
        d, dv = (int(x) for x in a.dims.split(","))
        reqs = wl.parse_batch(a.batch)
        name = a.name or "adhoc"
        plan = {"suite": "adhoc", "context": {},
                "workloads": [{"name": name, "requests": reqs, "heads_q": hq, "heads_kv": hkv,
                               "head_dim": d, "head_dim_v": dv, "mode": a.mode,
                               "dtypes": ["f32"]}]}
    for i, w in enumerate(plan["workloads"]):
        wl.check_workload(w, f"workloads[{i}]")
    with open(path, "w") as f:
        json.dump(plan, f)
    return plan


def measure(a, plan, threads):
    """Child: every (workload, dtype, impl) at one thread count. Returns
    {"rows": [...], "skipped": [...]} with per-row times in seconds."""
    pus = placement.select(a.place, threads)
    os.sched_setaffinity(0, pus)
    from .. import suites as wl
    mods = {}
    if "torch" in a.impl:
        from . import peer_torch
        mods["torch"] = peer_torch
    if "ort" in a.impl:
        from . import peer_ort
        peer_ort.MAX_SCORE_BYTES = int(a.ort_max_scores_gib * 2**30)
        mods["ort"] = peer_ort
    if "ipex" in a.impl:
        from . import check_ref, peer_ipex
        mods["ipex"] = peer_ipex
    rows, skipped = [], []
    flusher = Flusher(a.flush_lib, threads) if a.flush_caches else None
    for w in plan["workloads"]:
        if a.workload and not any(s in w["name"] for s in a.workload.split(",")):
            continue
        pairs = wl.visible_pairs(w)
        if "visible_pairs" in w and w["visible_pairs"] != pairs:
            sys.exit(f"run_peers: {w['name']}: peers count {pairs} visible pairs, the plan {w['visible_pairs']}: "
                     "they would not compute the same problem")
        cache = {}

        def arrays(b, w=w, cache=cache):
            if b not in cache:
                cache[b] = wl.request_arrays(w, b, a.seed)
            return cache[b]

        for dtype in (a.dtype.split(",") if a.dtype else w["dtypes"]):
            for impl, variant, layout, prep in _calls(a, w, dtype, threads, arrays, mods):
                name = results_json.bench_name(plan["suite"], w["name"], dtype, impl, threads, a.place,
                                               variant, layout)
                try:
                    run = prep()
                    if impl == "ipex":  # checked before timing; a failing peer is refused
                        with mods[impl].torch.inference_mode():
                            worst = check_ref.check(w, dtype, arrays, mods[impl].request_rows(run(), w))
                        print(f"run_peers: {name}: fp64 check ok (worst {worst:.3f} of the tolerance)",
                              file=sys.stderr, flush=True)
                    for _ in range(a.warmup):
                        run()
                except mods[impl].Unsupported as exc:
                    skipped.append(f"{name}: {exc}")
                    print(f"run_peers: skip {name}: {exc}", file=sys.stderr, flush=True)
                    continue
                except Exception as exc:
                    if impl != "ipex" or not isinstance(exc, check_ref.Mismatch):
                        raise
                    skipped.append(f"{name}: refused, fails the fp64 reference: {exc}")
                    print(f"run_peers: refuse {name}: fails the fp64 reference: {exc}", file=sys.stderr, flush=True)
                    continue
                times, cpus, iters = [], [], []
                spans = flusher.ranges(run, name) if flusher else None
                for _ in range(a.repetitions):
                    if flusher:  # each call timed alone, its tensors flushed before it
                        n, el, cpu = 0, 0.0, 0.0
                        while el < a.min_time:
                            flusher(spans)
                            t0, c0 = time.perf_counter(), time.thread_time()
                            run()
                            el += time.perf_counter() - t0
                            cpu += time.thread_time() - c0
                            n += 1
                        times.append(el / n)
                        cpus.append(cpu / n)
                        iters.append(n)
                        continue
                    n, t0, c0 = 0, time.perf_counter(), time.thread_time()
                    while True:
                        run()
                        n += 1
                        el = time.perf_counter() - t0
                        if el >= a.min_time:
                            break
                    times.append(el / n)
                    cpus.append((time.thread_time() - c0) / n)
                    iters.append(n)
                med = sorted(times)[len(times) // 2]
                print(f"run_peers: {name}: median {med * 1e3:.2f} ms, "
                      f"{wl.flops(w, pairs) / med / 1e9:.1f} GFLOP/s", file=sys.stderr, flush=True)
                rows.append({"name": name, "dtype": dtype, "times": times, "cpu_times": cpus, "iterations": iters,
                             "pairs": pairs, "flops": wl.flops(w, pairs),
                             "tokens": sum(r[1] for r in w["requests"])})
                run = None
        cache.clear()
    versions = {}
    for m in mods.values():
        versions.update(m.versions())
    return {"rows": rows, "skipped": skipped, "versions": versions, "pus": pus,
            "flushes": flusher.count() if flusher else 0}


def _calls(a, w, dtype, threads, arrays, mods):
    """(impl, variant, layout, prepare()) of every row of one workload and dtype:
    one per torch/ort, one per page size for ipex (layout: its pages' order)."""
    for impl in a.impl.split(","):
        if impl == "ipex":
            order = mods[impl].page_order(w)
            for page in a.pages:
                yield impl, f"page{page}", order, (
                    lambda page=page: mods["ipex"].prepare(w, dtype, threads, arrays, page, a.seed))
        else:
            yield impl, "-", "-", lambda impl=impl: mods[impl].prepare(w, dtype, threads, arrays)


def _venv_groups(a):
    """[(python, impls, env)]: the torch/ort peers in this interpreter (the
    .venv), ipex in the IPEX venv's python with ipexrun's thread settings; an
    absent IPEX venv drops ipex with one line (returned as the reason)."""
    impls = a.impl.split(",")
    groups, why = [], ""
    main = [i for i in impls if i != "ipex"]
    if main:
        groups.append((sys.executable, main, None))
    if "ipex" in impls:
        py = os.path.join(peers_env.ipex_venv_dir(), "bin", "python")
        if os.path.exists(py):
            groups.append((py, ["ipex"], "ipex"))
        else:
            why = f"no {peers_env.ipex_venv_dir()}: {peers_env.IPEX_HINT}"
    return groups, why


def _ipex_env(a, pus):
    """What ipexrun sets for one instance on these PUs (intel_extension_for_pytorch
    cpu/launch): Intel OpenMP preloaded from the venv with KMP_AFFINITY over the
    PUs and KMP_BLOCKTIME=1, or GNU OpenMP with GOMP_CPU_AFFINITY, OMP_PROC_BIND=CLOSE,
    OMP_SCHEDULE=STATIC; OMP_NUM_THREADS = the PUs."""
    env = dict(os.environ)
    cores = ",".join(str(p) for p in pus)
    env["OMP_NUM_THREADS"] = str(len(pus))
    iomp = os.path.join(peers_env.ipex_venv_dir(), "lib", "libiomp5.so")
    if a.ipex_omp == "intel" and os.path.exists(iomp):
        env["LD_PRELOAD"] = ":".join(x for x in (iomp, env.get("LD_PRELOAD", "")) if x)
        env["KMP_AFFINITY"] = f"granularity=fine,proclist=[{cores}],explicit"
        env["KMP_BLOCKTIME"] = "1"
    else:
        env.update(GOMP_CPU_AFFINITY=cores, OMP_PROC_BIND="CLOSE", OMP_SCHEDULE="STATIC")
    return env


def thread_counts(a, plan):
    """--threads, else the counts the plan tool measured peaks at (xattn-bench's
    "auto" list), else 1 and all cores."""
    if a.threads and a.threads != "auto":
        return [int(x) for x in a.threads.split(",")]
    if plan.get("peaks"):
        return sorted(int(k) for k in plan["peaks"])
    n = len(placement.compact_order())
    cores = len({(p, c) for p, c, _ in placement._topology()})
    return sorted({1, cores or n})


def main(argv):
    a = parse_args(argv)
    impls = a.impl.split(",")
    if impls == ["ipex"]:
        peers_env.ensure("run_peers", __spec__.name, peers_env.IPEX_MODULES, peers_env.ipex_venv_dir(),
                         peers_env.IPEX_HINT)
    else:
        peers_env.ensure("run_peers", __spec__.name,
                         tuple(sorted({m for i in impls if i != "ipex" for m in MAIN_MODULES[i]})))
    if a.flush_caches and not a.child_out:
        a.flush_lib = find_flush_lib(a)
        argv = argv + ["--flush-lib", a.flush_lib]
    if a.child_out:
        with open(a.plan) as f:
            plan = json.load(f)
        res = measure(a, plan, int(a.threads))  # the parent passes one count
        results_json.write_atomic(res, a.child_out)
        return 0
    with tempfile.TemporaryDirectory(prefix="xattn-peers-") as tmp:
        plan_path = os.path.join(tmp, "plan.json")
        plan = make_plan(a, plan_path)
        ctx = dict(plan.get("context", {}))
        peaks = plan.get("peaks", {})
        rows, skipped, versions, family, flushes = [], [], {}, 0, 0
        groups, why = _venv_groups(a)
        if why:
            skipped.append(f"impl:ipex: {why}")
            print(f"run_peers: ipex rows skipped: {why}", file=sys.stderr, flush=True)
        runs = [(n, g) for n in thread_counts(a, plan) for g in groups]
        for n, (py, group, kind) in runs:
            out = os.path.join(tmp, f"rows-{n}-{group[0]}.json")
            child = [py, "-m", __spec__.name] + _drop_impl(argv) + [
                "--impl", ",".join(group), "--plan", plan_path, "--threads", str(n), "--child-out", out]
            env = _ipex_env(a, placement.select(a.place, n)) if kind == "ipex" else None
            rc = children.run(_drop_sources(child), env=env).returncode
            if rc != 0:
                return rc
            with open(out) as f:
                res = json.load(f)
            skipped += res["skipped"]
            flushes += res.get("flushes", 0)
            versions.update(res["versions"])
            for r in res["rows"]:
                peak = peaks.get(str(n), {}).get("bf16" if r["dtype"] == "bf16" else "f32")
                rows += results_json.rows_for(r["name"], family, r["times"], r["cpu_times"], r["iterations"],
                                              r["pairs"], r["flops"], r["tokens"], peak)
                family += 1
    ctx["xattn_placement"] = a.place
    ctx["xattn_threads"] = ",".join(str(n) for n in thread_counts(a, plan))
    ctx["xattn_seed"] = str(a.seed)
    ctx["xattn_flush_caches"] = "true" if a.flush_caches else "false"  # as xattn-bench writes it
    if a.flush_caches:  # and the flushes the library counted
        ctx["xattn_peers_flushes"] = str(flushes)
        print(f"run_peers: caches flushed before {flushes} timed calls", file=sys.stderr, flush=True)
    ctx["xattn_peers"] = versions
    ctx["xattn_peers_skipped"] = skipped
    if peaks:
        top = peaks[str(max(int(k) for k in peaks))]
        ctx["xattn_peak_fp32_gflops"] = f"{top['f32']:.2f}"
        ctx["xattn_peak_bf16_gflops"] = f"{top['bf16']:.2f}"
    ctx["xattn_peers_note"] = ("torch/ort: per request one call; K/V handed over contiguous (no cache gather timed); "
                               "ipex: one call per batch on a paged cache (variant: page size, layout: page order), "
                               f"checked against the fp64 reference before timing, OpenMP: {a.ipex_omp}; "
                               "threads share the PUs of the placement (process affinity, not one PU each)")
    doc = {"context": results_json.base_context(ctx), "benchmarks": rows}
    if a.out:
        results_json.write_atomic(doc, a.out)
        print(f"run_peers: wrote {a.out}", file=sys.stderr)
    if not a.batch and a.results_dir not in ("", "none"):
        if "xattn_machine" not in ctx or "xattn_commit" not in ctx:
            sys.exit("run_peers: the plan has no xattn_machine/xattn_commit context: not writing results/")
        commit_dir = ctx.get("xattn_commit_dir") or (
            ctx["xattn_commit"] + ("-dirty" if ctx.get("xattn_dirty") in (True, 1, "1", "true") else ""))
        path = results_json.publish(doc, a.results_dir, ctx["xattn_machine"], commit_dir,
                                    a.label or f"peers-{plan['suite']}")
        print(f"run_peers: wrote {path}", file=sys.stderr)
    return 0


def _drop_impl(argv):
    """argv without --impl X (the parent gives each child its own)."""
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
        elif x == "--impl":
            skip = True
        elif not x.startswith("--impl="):
            out.append(x)
    return out


def _drop_sources(cmd):
    """The child reads the parent's plan: drop --suite/--batch NAME from its argv."""
    out, skip = [], False
    for x in cmd:
        if skip:
            skip = False
            continue
        if x in ("--suite", "--batch"):
            skip = True
            continue
        if x.startswith(("--suite=", "--batch=")):
            continue
        out.append(x)
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
