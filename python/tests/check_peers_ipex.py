#!/usr/bin/python3
"""ctest `peers.ipex`: the Intel Extension for PyTorch peer (impl:ipex) in the
venv of scripts/make-venv.sh --ipex.

1. peer_ipex against xattn's fp64 reference (check_ref, docs/contract.md §3):
   decode batches (E = 1: single_query_cached_kv_attention) and prefills with
   and without prefixes (flash_attn_varlen_func), GQA / MHA, bidirectional,
   a logit cap, f32 / bf16 / f16, pages of 16 and 128 tokens (requests shorter
   than a page, not a multiple of one), pages in random order and in order.
2. The check can fail: a corrupted element, and a bidirectional answer judged
   as causal, are refused with a line naming the element.
3. What IPEX cannot express is skipped with the reason (tree, sinks, windows, fp8).
4. `xattn peers --impl ipex` end to end on an ad-hoc batch: one row per page
   size, variant:pageN, layout random|inorder, each after its fp64 check.

Exit 77 (ctest SKIP_RETURN_CODE) with one line when .venv-ipex is absent.

  check_peers_ipex.py [--xattn-peers PATH]   (PYTHONPATH=python)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from xattn.peers import peers_env  # standard library only: imports before the venv check


def workload(reqs, mode="causal", heads=(8, 2), d=64, slots="shuffled", **kw):
    from xattn import suites as wl
    w = {"name": "t", "requests": [list(r) for r in reqs], "heads_q": heads[0], "heads_kv": heads[1],
         "head_dim": d, "head_dim_v": d, "mode": mode, "slots": slots, **kw}
    wl.check_workload(w, "t")
    return w


def arrays_of(w, seed=42):
    from xattn import suites as wl
    cache = {}
    return lambda b: cache.setdefault(b, wl.request_arrays(w, b, seed))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xattn-peers", help="the `xattn peers` wrapper (part 4 is skipped without it)")
    a = ap.parse_args()
    peers_env.ensure("peers.ipex", None, peers_env.IPEX_MODULES, peers_env.ipex_venv_dir(), peers_env.IPEX_HINT)
    import torch
    from xattn.peers import check_ref, peer_ipex

    fails = []
    cases = [
        ("decode B3", workload([(100, 1), (37, 1), (300, 1)])),
        ("decode MHA contiguous", workload([(250, 1), (5, 1)], heads=(4, 4), slots="contiguous")),
        ("prefill + prefixes", workload([(0, 50), (20, 13), (300, 1), (0, 1)])),
        ("prefill, empty request", workload([(7, 0), (0, 33)], heads=(4, 1))),
        ("bidirectional", workload([(0, 40), (10, 17)], mode="bidirectional")),
        ("logit cap", workload([(60, 1), (9, 20)], logit_cap=5.0)),
    ]
    n = 0
    for label, w in cases:
        arrays = arrays_of(w)
        for dtype in ("f32", "bf16", "f16"):
            for page in (16, 128):
                try:
                    with torch.inference_mode():
                        run = peer_ipex.prepare(w, dtype, 2, arrays, page, 42)
                        worst = check_ref.check(w, dtype, arrays, peer_ipex.request_rows(run(), w))
                    n += 1
                    print(f"ok   {label} {dtype} page {page} ({peer_ipex.page_order(w)}): "
                          f"worst {worst:.3f} of the tolerance")
                except (peer_ipex.Unsupported, check_ref.Mismatch) as exc:
                    fails.append(f"{label} {dtype} page {page}: {type(exc).__name__}: {exc}")

    # 2. the check refuses wrong answers
    w = workload([(30, 1), (0, 20)])
    arrays = arrays_of(w)
    with torch.inference_mode():
        rows = peer_ipex.request_rows(peer_ipex.prepare(w, "f32", 1, arrays, 16, 42)(), w)
    rows[1][19, 3, 5] += 1e-3
    try:
        check_ref.check(w, "f32", arrays, rows)
        fails.append("a corrupted element (request 1 row 19 head 3 col 5) passed the check")
    except check_ref.Mismatch as exc:
        if "request 1 row 19 head 3 col 5" not in str(exc):
            fails.append(f"corrupted element: the refusal names another element: {exc}")
        print(f"ok   corrupted element refused: {exc}")
    wb = workload([(0, 20)], mode="bidirectional")
    wc = workload([(0, 20)])
    arrays = arrays_of(wb)
    with torch.inference_mode():
        rows = peer_ipex.request_rows(peer_ipex.prepare(wb, "f32", 1, arrays, 16, 42)(), wb)
    try:
        check_ref.check(wc, "f32", arrays, rows)
        fails.append("a bidirectional answer passed as causal")
    except check_ref.Mismatch as exc:
        print(f"ok   bidirectional answer judged as causal refused: {exc}")

    # 3. what has no PagedAttention form is skipped with the reason
    for label, w in [("tree", workload([(4, 3)], mode="tree", tree_mask=[["100", "110", "101"]])),
                     ("sinks", workload([(4, 3)], sinks=True)),
                     ("window", workload([(4, 3)], window=[2, 0])),
                     ("fp8", workload([(4, 1)], kv_cache="e4m3fn"))]:
        try:
            peer_ipex.prepare(w, "f32", 1, arrays_of(w), 16, 42)
            fails.append(f"{label}: not refused")
        except peer_ipex.Unsupported as exc:
            print(f"ok   {label} skipped: {exc}")

    # 4. end to end
    if a.xattn_peers:
        with tempfile.TemporaryDirectory(prefix="xattn-ipex-") as tmp:
            out = os.path.join(tmp, "r.json")
            cmd = [a.xattn_peers, "--impl", "ipex", "--batch", "40:1,300:1", "--heads", "8,2", "--dims", "64,64",
                   "--threads", "1", "--repetitions", "2", "--min-time", "0.01", "--no-peak", "--out", out]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if proc.returncode != 0:
                fails.append(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stdout[-500:]}")
            else:
                doc = json.load(open(out))
                names = sorted({r["run_name"] for r in doc["benchmarks"]})
                want = [f"suite:adhoc/wl:adhoc/dtype:f32/impl:ipex/variant:page{p}/layout:random/isa:-/threads:1/"
                        "place:compact" for p in (128, 16)]
                if names != want:
                    fails.append(f"xattn peers --impl ipex: rows {names}, want {want}")
                if proc.stdout.count("fp64 check ok") != 2:
                    fails.append("xattn peers --impl ipex: not every row was checked before timing")
                if "intel_extension_for_pytorch" not in doc["context"].get("xattn_peers", {}):
                    fails.append("xattn peers --impl ipex: no IPEX version in the context")
                print(f"ok   xattn peers --impl ipex: {len(names)} rows, each checked before timing")
    for f in fails:
        print(f"FAIL {f}")
    print(f"peers.ipex: {n} checked peer calls, {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
