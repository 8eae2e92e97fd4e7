#!/usr/bin/python3
"""ctest: run xattn-bench on a suite and check the results file it publishes.

Checks: exit status 0, exactly one new file under
<results>/<machine>/<commit>/<stamp>_<label>.json, valid Google Benchmark
JSON, every context key of docs/formats.md §3 present, every row named in its
order with its counters, xattn rows carrying speedup_vs_blas, and
no temp file left behind. No timing is asserted.
"""
import json, os, re, subprocess, sys, tempfile

bench, suite = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
CONTEXT_KEYS = ["xattn_commit", "xattn_dirty", "xattn_machine", "xattn_cpu_model", "xattn_cpu_flags",
                "xattn_topology", "xattn_compiler", "xattn_cflags", "xattn_config_header",
                "xattn_config_provenance", "xattn_seed", "xattn_placement", "xattn_threads",
                "xattn_peak_fp32_gflops", "xattn_peak_bf16_gflops", "xattn_cache_pages", "xattn_flush_caches"]
NAME = re.compile(r"^suite:[^/]+/wl:[^/]+/dtype:(f32|bf16|f16)/impl:(xattn|blas|reference|torch|ort|peak)"
                  r"/variant:[^/]+/layout:[^/]+/isa:[^/]+/threads:[0-9]+/place:[^/]+"
                  r"(/sched:(auto|static|dynamic))?(/splits:(auto|[0-9]+))?(/pf:(auto|off|[0-9]+))?(/real_time)?$")
# --schedules / --kv-splits / --prefetch: every xattn row carries the segment
# of each one given, and each value of the lists is a row of its own
SETTINGS = {"--schedules": "sched", "--kv-splits": "splits", "--prefetch": "pf"}
given = {SETTINGS[a]: extra[i + 1].split(",") for i, a in enumerate(extra) if a in SETTINGS}
failures = []

def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)

with tempfile.TemporaryDirectory() as results:
    cmd = [bench, "--suite", suite, "--results-dir", results, "--label", "ctest smoke",
           "--repetitions", "3", "--peak-seconds", "0.01", "--roof-seconds", "0.01", "--check", "--benchmark_min_time=0.01"] + extra
    print("running:", " ".join(cmd))
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    print(run.stderr[-3000:])
    check(run.returncode == 0, f"exit status {run.returncode}")
    files = []
    for root, _, names in os.walk(results):
        files += [os.path.join(root, n) for n in names]
    check(len(files) == 1, f"one results file, found {files}")
    if files:
        path = files[0]
        rel = os.path.relpath(path, results).split(os.sep)
        print("results file:", "/".join(rel))
        check(len(rel) == 3, f"layout <machine>/<commit>/<file>: {rel}")
        check(re.fullmatch(r"[a-z0-9-]+-[0-9]+c-[0-9a-f]{8}", rel[0]) is not None, f"machine dir {rel[0]}")
        check(re.fullmatch(r"([0-9a-f]{12}(-dirty)?|nogit)", rel[1]) is not None, f"commit dir {rel[1]}")
        check(re.fullmatch(r"[0-9]{8}T[0-9]{6}Z_ctest-smoke\.json", rel[2]) is not None, f"file name {rel[2]}")
        with open(path) as f:
            data = json.load(f)
        ctx = data.get("context", {})
        for k in CONTEXT_KEYS:
            check(k in ctx and str(ctx[k]) != "", f"context key {k}")
        check(ctx.get("xattn_machine") == rel[0], "xattn_machine matches the directory")
        want_flush = "true" if "--flush-caches" in extra else "false"
        check(ctx.get("xattn_flush_caches") == want_flush, f"xattn_flush_caches {ctx.get('xattn_flush_caches')}, want {want_flush}")
        commit_dir = ctx.get("xattn_commit", "") + ("-dirty" if ctx.get("xattn_dirty") == "true" else "")
        check(commit_dir == rel[1] or rel[1] == "nogit", f"commit dir {rel[1]} vs context {commit_dir}")
        float(ctx.get("xattn_peak_fp32_gflops", "nan"))
        rows = data.get("benchmarks", [])
        check(len(rows) > 0, "rows present")
        impls = set()
        for r in rows:
            if r.get("error_occurred"):
                check(False, f"row {r['name']} errored: {r.get('error_message')}")
                continue
            base = r["run_name"]
            check(NAME.match(base) is not None, f"name order/format: {base}")
            impl = re.search(r"/impl:([a-z]+)/", base).group(1)
            impls.add(impl)
            need = ["gflops", "pct_peak", "flops"]
            if impl != "peak":
                need += ["tokens_per_s", "visible_pairs", "bytes_must_read", "gbps", "pct_mem_roof",
                         "gather_roof_gbps", "stream_roof_gbps", "gather_roof_tile", "gather_roof_prefetch_kib"]
            if impl == "xattn":
                need += ["speedup_vs_blas"]
            for c in need:
                check(c in r, f"{r['name']}: counter {c}")
            if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median":
                check(r["gflops"] > 0, f"{r['name']}: gflops > 0")
                if impl != "peak":
                    check(r["visible_pairs"] > 0, f"{r['name']}: visible_pairs > 0")
                    check(r["bytes_must_read"] > 0 and r["gather_roof_gbps"] > 0 and r["pct_mem_roof"] > 0,
                          f"{r['name']}: bytes_must_read, gather roof and pct_mem_roof > 0")
                    check(r["gather_roof_tile"] in (1, 4, 16) and r["gather_roof_prefetch_kib"] in (0, 16, 128),
                          f"{r['name']}: gather roof strategy {r['gather_roof_tile']}/{r['gather_roof_prefetch_kib']}")
        check({"xattn", "blas", "peak"} <= impls, f"impls present: {impls}")
        settings = {}  # (workload, dtype, variant, layout, isa) -> the settings its xattn rows ran
        for r in rows:
            fields = dict(seg.split(":", 1) for seg in r["run_name"].split("/") if ":" in seg)
            if fields.get("impl") != "xattn":
                check(not ({"sched", "splits", "pf"} & set(fields)), f"{r['run_name']}: run settings on a non-xattn row")
                continue
            check(set(given) <= set(fields) <= set(given) | {"suite", "wl", "dtype", "impl", "variant", "layout",
                                                               "isa", "threads", "place"},
                  f"{r['run_name']}: the segments of {sorted(given)} and no others")
            key = tuple(fields.get(k) for k in ("wl", "dtype", "variant", "layout", "isa"))
            settings.setdefault(key, set()).add(tuple(fields.get(k) for k in sorted(given)))
        want = 1
        for v in given.values():
            want *= len(v)
        for key, got in settings.items():
            check(len(got) == want, f"{key}: {len(got)} run settings, want {want} ({sorted(got)})")
        if "--benchmark_enable_random_interleaving=true" in extra:
            # each repetition of each row on its own, rows mixed: every row comes
            # back, and the progress total counts repetitions
            visits = re.findall(r"^\[(\d+)/(\d+)\] (\S+) eta", run.stderr, re.M)
            names = [v[2] for v in visits]
            check(visits and int(visits[0][1]) == 3 * len(set(names)), f"progress total {visits[:1]}: 3 x {len(set(names))} rows")
            check(len(names) > len(set(names)), "interleaved: rows visited more than once")
            its = {}
            for r in rows:
                if r.get("run_type") == "iteration":
                    its[r["run_name"]] = its.get(r["run_name"], 0) + 1
            check(its and set(its.values()) == {3}, f"3 repetitions a row: {sorted(set(its.values()))}")
        medians = [r for r in rows if r.get("aggregate_name") == "median"]
        check(len(medians) > 0, "median aggregates present")
        # Google Benchmark's own compare.py reads the file (Debian: libbenchmark-tools)
        cmp = "/usr/share/benchmark/compare.py"
        if os.path.exists(cmp):
            c = subprocess.run(["/usr/bin/python3", cmp, "benchmarks", path, path], capture_output=True, text=True, timeout=120)
            check(c.returncode == 0 and "U Test" in c.stdout, f"compare.py reads the file: {c.stderr[-500:]}")
            print("compare.py: ok" if c.returncode == 0 else "compare.py: failed")
    leftovers = [f for f in files if os.path.basename(f).startswith(".tmp")]
    check(not leftovers, f"temp files left: {leftovers}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
