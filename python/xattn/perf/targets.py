"""Prints the run-targets.sh figures from an xattn-bench results file (median
aggregates) and a /usr/bin/time -v report. usage:
python3 -m xattn targets ALL_CORES.json ONE_THREAD.json RSS.json RSS_TIME.txt CORES [PEERS.json]
PEERS.json (`xattn peers` on the targets suite, PEERS=1 bench/run-targets.sh) adds the
peers' GFLOP/s on the same workloads and xattn's ratio to each (ipex: its best page size)."""
import json
import re
import sys

from ..results import parse_name


PEER_WORKLOADS = ("causal-e2048", "bidir-16x256", "mix-spec", "chat-p8192-e128")


def peer_medians(path):
    """{(wl, dtype, impl, threads): (GFLOP/s, variant)}: per peer the best median
    over its variants (ipex: page sizes); skipped rows listed in the context."""
    doc = json.load(open(path))
    best = {}
    for r in doc["benchmarks"]:
        if r.get("run_type") != "aggregate" or r.get("aggregate_name") != "median" or r.get("error_occurred"):
            continue
        f = parse_name(r["run_name"])
        key = (f["wl"], f["dtype"], f["impl"], int(f["threads"]))
        if key not in best or r["gflops"] > best[key][0]:
            best[key] = (r["gflops"], f["variant"])
    return best, doc["context"].get("xattn_peers_skipped", []), doc["context"].get("xattn_peers", {})


def print_peers(path, get, n):
    best, skipped, versions = peer_medians(path)
    impls = sorted({k[2] for k in best})
    print(f"\n6. peers on the same workloads, {n} threads (GFLOP/s; xattn / peer; {path}):")
    print("   " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    for wl in PEER_WORKLOADS:
        for dt in ("f32", "bf16"):
            x = get(wl, dt, "xattn", n, "gflops")
            cells = []
            for impl in impls:
                g, var = best.get((wl, dt, impl, n), (float("nan"), "-"))
                tag = f" {var}" if var != "-" else ""
                cells.append(f"{impl}{tag} {g:.1f} (x{x / g:.2f})")
            print(f"   {wl:16} {dt:4}: xattn {x:.1f} | " + " | ".join(cells))
    for line in skipped:
        print(f"   skipped: {line}")


def main(argv):
    targets, one, rss_json, rss_txt, cores = argv[0], argv[1], argv[2], argv[3], int(argv[4])
    peers = argv[5] if len(argv) > 5 else None
    data = json.load(open(targets))
    rows = data["benchmarks"] + (json.load(open(one))["benchmarks"] if one != targets else [])
    med = {}
    # the median aggregate of each row; a run with --repetitions 1 has none, then its only run
    for r in rows:
        if r.get("error_occurred") or r.get("run_type") == "aggregate" and r.get("aggregate_name") != "median":
            continue
        f = parse_name(r["run_name"])
        key = (f["wl"], f["dtype"], f["impl"], int(f["threads"]))
        if r.get("run_type") == "aggregate" or key not in med:
            med[key] = r

    def get(wl, dt, impl, t, key):
        r = med.get((wl, dt, impl, t))
        return r[key] if r and key in r else float("nan")

    ctx = data["context"]
    print(f"machine {ctx['xattn_machine']}  commit {ctx['xattn_commit']} dirty {ctx['xattn_dirty']}  "
          f"peak fp32 {ctx['xattn_peak_fp32_gflops']} / bf16 {ctx['xattn_peak_bf16_gflops']} GFLOP/s at {cores} threads")
    print(f"results: {targets}\n         {one}")
    n = cores
    print(f"\n1. causal prefill E=2048 (H_Q 32, H_KV 8, D 128), {n} threads:")
    for dt in ("f32", "bf16"):
        r = med.get(("causal-e2048", dt, "xattn", n), {})
        isa = re.search(r"/isa:([^/]+)/", r.get("run_name", "/isa:?/")).group(1)
        against = {"amx": "AMX", "avx512bf16": "vdpbf16ps"}.get(isa, "fp32 FMA") if dt == "bf16" else "fp32 FMA"
        print(f"   {dt:4}: {get('causal-e2048', dt, 'xattn', n, 'gflops'):7.1f} GFLOP/s = "
              f"{get('causal-e2048', dt, 'xattn', n, 'pct_peak'):5.1f} % of the {against} peak (isa {isa}; "
              f"{r.get('real_time', float('nan')):.1f} ms per call)")
    print(f"\n2. xattn vs OpenBLAS baseline, causal E=4096, {n} threads (speedup = blas median / xattn median):")
    for dt in ("f32", "bf16"):
        print(f"   {dt:4}: x{get('causal-e4096', dt, 'xattn', n, 'speedup_vs_blas'):.2f}  "
              f"(xattn {get('causal-e4096', dt, 'xattn', n, 'gflops'):.1f}, blas {get('causal-e4096', dt, 'blas', n, 'gflops'):.1f} GFLOP/s)")
    print(f"\n3. GFLOP/s relative to causal E=2048, {n} threads:")
    for wl in ("bidir-16x256", "mix-spec", "chat-p8192-e128", "causal-e4096"):
        for dt in ("f32", "bf16"):
            ratio = get(wl, dt, "xattn", n, "gflops") / get("causal-e2048", dt, "xattn", n, "gflops")
            print(f"   {wl:16} {dt:4}: {ratio:5.2f}  ({get(wl, dt, 'xattn', n, 'gflops'):.1f} GFLOP/s)")
    if n > 1:
        print(f"\n4. thread scaling 1 -> {n} (GFLOP/s ratio; ideal {n}):")
        for wl in ("causal-e2048", "causal-e4096", "chat-p8192-e128"):
            for dt in ("f32", "bf16"):
                s = get(wl, dt, "xattn", n, "gflops") / get(wl, dt, "xattn", 1, "gflops")
                print(f"   {wl:16} {dt:4}: x{s:.2f}")
        ctx1 = json.load(open(one))["context"]
        for k in ("fp32", "bf16", "amx"):
            key = f"xattn_peak_{k}_gflops"
            if float(ctx1.get(key, 0)) > 0:
                print(f"   ({k} peak probe: {ctx1[key]} -> {ctx[key]} GFLOP/s, x{float(ctx[key]) / float(ctx1[key]):.2f})")
    txt = open(rss_txt).read()
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", txt)
    rss = int(m.group(1)) * 1024 if m else float("nan")
    rows = [r for r in json.load(open(rss_json))["benchmarks"] if "input_bytes" in r]
    inp = rows[0]["input_bytes"] if rows else float("nan")
    print(f"\n5. P=32768, E=512, bf16, {n} threads: peak RSS {rss / 2**20:.1f} MiB, input {inp / 2**20:.1f} MiB "
          f"-> RSS / input = {rss / inp:.2f}")
    if peers:
        print_peers(peers, get, n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
