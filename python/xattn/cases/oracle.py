#!/usr/bin/python3
"""An independent numpy re-implementation of docs/contract.md §1-2 for a case folder.

    case_oracle.py CASE_DIR [-o OUT.npy]           write the float64 answer
    case_oracle.py CASE_DIR --check O.npy [--tight] compare an output with it

--check exits 1 (one line on stderr) when any element of O.npy misses
|o - ref| <= atol + rtol*|ref| with the docs/contract.md §3 tolerances of the case dtype,
or, with --tight, 1e-9 (for checking another fp64 reference, e.g. `xattn run
--reference-f64`). It shares no code with the C library, so it checks the
library's xattn_reference() as well as the kernels. Installed as `xattn-oracle`.
"""
import argparse
import sys

import numpy as np

from .make_case import TOLERANCES, load_case, to_f64

PROG = "xattn oracle"


def check_indices(case, a):
    """Raises ValueError (one line naming the entry) for a request row or a KV
    slot outside its table. numpy would wrap a negative index to the last entry
    and answer for a slot the case never named; the C loader refuses these too."""
    P = case["prefix_lens"]
    cached = case["encoder_lens"] if case.get("mode") == "cross" else P
    table, index = a["req_to_token"], a["req_index"]
    pool = min(a["k_cache"].shape[0], a["v_cache"].shape[0])
    if index.ndim != 1 or index.shape[0] < len(P):
        raise ValueError(f"req_index: shape {list(index.shape)}, expected at least {len(P)} entries")
    if table.ndim != 2:
        raise ValueError(f"req_to_token: shape {list(table.shape)}, expected 2 dimensions")
    for b in range(len(P)):
        r = int(index[b])
        if not 0 <= r < table.shape[0]:
            raise ValueError(f"req_index[{b}] = {r}: outside the {table.shape[0]} rows of req_to_token")
        if cached[b] > table.shape[1]:
            raise ValueError(f"request {b}: {cached[b]} cached tokens, req_to_token has {table.shape[1]} columns")
        slots = table[r, :cached[b]]
        bad = np.flatnonzero((slots < 0) | (slots >= pool))
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"req_to_token[{r}][{j}] = {int(slots[j])}: outside the {pool} slots of the KV cache")


def oracle(case, a):
    hq, hkv = case["heads_q"], case["heads_kv"]
    d = case["head_dim"]
    dv = case.get("head_dim_v", d)
    # the library holds scale and cap as float32: so does the oracle
    scale = float(np.float32(case.get("scale", d ** -0.5)))
    cap = float(np.float32(case.get("logit_cap", 0.0)))
    mode = case.get("mode", "causal")
    top_left = case.get("align", "bottom_right") == "top_left"
    left, right = case.get("window", [-1, -1])
    P, E = case["prefix_lens"], case["extend_lens"]
    enc = case.get("encoder_lens")
    out = np.zeros((sum(E), hq, dv))
    group = hq // hkv
    start = 0
    for b in range(len(P)):
        c0 = a["req_start_col"][b] if "req_start_col" in a else 0
        row = a["req_to_token"][a["req_index"][b]][c0:]
        if mode == "cross":
            slots = row[:enc[b]]
            keys, vals = a["k_cache"][slots], a["v_cache"][slots]  # [S, hkv, d]
        else:
            slots = row[:P[b]]
            keys = np.concatenate([a["k_cache"][slots], a["k_ext"][start:start + E[b]]])
            vals = np.concatenate([a["v_cache"][slots], a["v_ext"][start:start + E[b]]])
        S = keys.shape[0]
        i = np.arange(E[b])[:, None]
        j = np.arange(S)[None, :]
        p = P[b] + i
        if mode == "causal":
            vis = j <= (i if top_left else p)
        elif mode == "tree":
            m = np.zeros((E[b], S), dtype=bool)
            m[:, :P[b]] = True
            m[:, P[b]:] = a["tree_mask"][b][:E[b], :E[b]]
            vis = m
        else:
            vis = np.ones((E[b], S), dtype=bool)
        if left >= 0:
            vis = vis & (j >= p - left)
        if right >= 0:
            vis = vis & (j <= p + right)
        for h in range(hq):
            q = a["q"][start:start + E[b], h]  # [E, d]
            s = scale * (q @ keys[:, h // group].T)
            if cap > 0:
                s = cap * np.tanh(s / cap)
            s = np.where(vis, s, -np.inf)
            sink = a["sinks"][h] if "sinks" in a else -np.inf
            mx = np.maximum(s.max(axis=1, initial=-np.inf), sink)[:, None]
            mx = np.where(np.isfinite(mx), mx, 0.0)
            w = np.exp(s - mx)
            den = w.sum(axis=1, keepdims=True) + np.exp(sink - mx)
            num = w @ vals[:, h // group]
            seen = vis.any(axis=1, keepdims=True)
            out[start:start + E[b], h] = np.where(seen, num / np.where(seen, den, 1.0), 0.0)
        start += E[b]
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("case")
    ap.add_argument("-o", "--out")
    ap.add_argument("--check")
    ap.add_argument("--tight", action="store_true")
    args = ap.parse_args(argv)
    try:
        case, arrays = load_case(args.case)
        check_indices(case, arrays)
    except (OSError, ValueError, KeyError, TypeError, EOFError) as e:  # one line, like the xattn command
        print(f"xattn oracle: {args.case}: cannot read the case: {e}", file=sys.stderr)
        return 1
    ref = oracle(case, arrays)
    if args.out:
        np.save(args.out, ref)
    if not args.check:
        return 0
    try:
        got = np.load(args.check)
    except (OSError, ValueError, EOFError) as e:  # truncated, not .npy, missing
        print(f"xattn oracle: {args.check}: cannot read the answer: {e}", file=sys.stderr)
        return 1
    if got.shape != ref.shape:
        print(f"{args.check}: shape {list(got.shape)}, oracle {list(ref.shape)}", file=sys.stderr)
        return 1
    got = to_f64(got, "bf16" if got.dtype == np.uint16 else "f32")
    atol, rtol = (1e-9, 1e-9) if args.tight else TOLERANCES[case["dtype"]]
    excess = np.abs(got - ref) - (atol + rtol * np.abs(ref))
    bad = ~(excess <= 0)  # NaN counts as bad
    if bad.any():
        t, h, c = np.unravel_index(np.argmax(np.where(bad, np.nan_to_num(excess, nan=np.inf), -1)),
                                   ref.shape)
        print(f"{args.check}: {int(bad.sum())} of {ref.size} elements outside tolerance "
              f"(atol {atol:g}, rtol {rtol:g}); worst at [{t}, {h}, {c}]: got {got[t, h, c]!r}, "
              f"oracle {ref[t, h, c]!r}", file=sys.stderr)
        return 1
    print(f"{args.check}: {ref.size} elements within (atol {atol:g}, rtol {rtol:g}) of the numpy "
          f"oracle; max |diff| {np.abs(got - ref).max(initial=0.0):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
