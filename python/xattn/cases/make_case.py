#!/usr/bin/python3
"""Writes a random xattn case folder in the SPEC section 4 format.

    make_case.py OUT_DIR [--dtype f32|bf16|f16] [--mode causal|bidirectional|cross|tree]
                 [--align bottom_right|top_left] [--heads-q 4] [--heads-kv 2]
                 [--head-dim 16] [--head-dim-v N] [--prefix 0,5] [--extend 7,3]
                 [--encoder 4,9] [--window L R] [--cap C] [--scale S] [--sinks]
                 [--index-type int32|int64] [--seed N] [--tree-density 0.5]

Slots in the KV pool are shuffled and req_index is a permutation of spare rows,
so a case exercises the indirection the way a serving engine's dump would.
Installed next to `xattn` as `xattn-make-case`, so `xattn make-case ...` works.

The module also holds what every Python tool of the suite needs to read a case:
load_case() and the bf16 <-> float32 conversions.
"""
import argparse
import json
import os
import sys

import numpy as np

PROG = "xattn make-case"
TOLERANCES = {"f32": (1e-5, 1e-5), "bf16": (1e-2, 1e-2), "f16": (2e-3, 2e-3)}


def f32_to_bf16_bits(x):
    """float32 array -> uint16 bf16 bit patterns, round to nearest even (NaN kept)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    return np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), rounded)


def bf16_bits_to_f32(u):
    return (np.asarray(u, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def store(x, dtype):
    """float array -> the on-disk array of a case tensor of this dtype."""
    if dtype == "f32":
        return np.asarray(x, dtype=np.float32)
    if dtype == "f16":
        return np.asarray(x, dtype=np.float16)
    return f32_to_bf16_bits(np.asarray(x, dtype=np.float32))


def to_f64(a, dtype):
    """On-disk case tensor -> float64 values it stores."""
    if dtype == "bf16":
        return bf16_bits_to_f32(a).astype(np.float64)
    return np.asarray(a, dtype=np.float64)


def _ints(s):
    return [int(v) for v in s.split(",")] if s else []


def make_case(out, dtype="f32", mode="causal", align="bottom_right", heads_q=4, heads_kv=2,
              head_dim=16, head_dim_v=None, prefix=(0, 5), extend=(7, 3), encoder=None,
              window=(-1, -1), cap=0.0, scale=None, sinks=False, index_type="int32", seed=0,
              tree_density=0.5):
    rng = np.random.default_rng(seed)
    dv = head_dim if head_dim_v is None else head_dim_v
    prefix, extend = list(prefix), list(extend)
    B = len(prefix)
    if len(extend) != B:
        raise ValueError("prefix and extend need the same number of requests")
    if mode == "cross":
        encoder = list(encoder) if encoder is not None else [max(1, p) for p in prefix]
        if len(encoder) != B:
            raise ValueError("encoder needs one length per request")
        cache_lens = encoder
    else:
        cache_lens = prefix
    T = sum(extend)
    max_ctx = max([p + e for p, e in zip(prefix, extend)] + cache_lens + [1]) + 3
    max_reqs = B + 2
    slots = sum(cache_lens) + 5
    perm = rng.permutation(slots)  # shuffled pool
    table = np.zeros((max_reqs, max_ctx), dtype=np.int64)
    req_index = rng.permutation(max_reqs)[:B].astype(np.int64)
    used = 0
    for b in range(B):
        n = cache_lens[b]
        table[req_index[b], :n] = perm[used:used + n]
        used += n
    os.makedirs(out, exist_ok=True)

    def rand(*shape):
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)

    tensors = {
        "q": rand(T, heads_q, head_dim),
        "k_ext": rand(T, heads_kv, head_dim),
        "v_ext": rand(T, heads_kv, dv),
        "k_cache": rand(slots, heads_kv, head_dim),
        "v_cache": rand(slots, heads_kv, dv),
    }
    for name, x in tensors.items():
        np.save(os.path.join(out, name + ".npy"), store(x, dtype))
    np.save(os.path.join(out, "req_to_token.npy"),
            table.astype(np.int32 if index_type == "int32" else np.int64))
    np.save(os.path.join(out, "req_index.npy"), req_index)
    if sinks:
        np.save(os.path.join(out, "sinks.npy"), rng.uniform(-1.0, 2.0, heads_q).astype(np.float32))
    if mode == "tree":
        me = max(extend + [0])
        m = rng.random((B, me, me)) < tree_density
        for b in range(B):  # a tree node sees itself
            np.fill_diagonal(m[b], True)
        np.save(os.path.join(out, "tree_mask.npy"), m)
    case = {
        "dtype": dtype, "heads_q": heads_q, "heads_kv": heads_kv, "head_dim": head_dim,
        "head_dim_v": dv, "scale": float(scale if scale is not None else head_dim ** -0.5),
        "logit_cap": float(cap), "mode": mode, "align": align, "window": list(window),
        "prefix_lens": prefix, "extend_lens": extend, "has_sinks": bool(sinks), "seed": seed,
    }
    if mode == "cross":
        case["encoder_lens"] = encoder
    with open(os.path.join(out, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    return out


def load_case(d):
    """Reads a case folder into (case dict, dict of float64/int arrays)."""
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    dt = case["dtype"]
    a = {}
    for name in ("q", "k_ext", "v_ext", "k_cache", "v_cache"):
        a[name] = to_f64(np.load(os.path.join(d, name + ".npy")), dt)
    a["req_to_token"] = np.load(os.path.join(d, "req_to_token.npy")).astype(np.int64)
    a["req_index"] = np.load(os.path.join(d, "req_index.npy")).astype(np.int64)
    if case.get("has_sinks"):
        a["sinks"] = np.load(os.path.join(d, "sinks.npy")).astype(np.float64)
    if case.get("mode") == "tree":
        a["tree_mask"] = np.load(os.path.join(d, "tree_mask.npy"))
    return case, a


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"])
    ap.add_argument("--mode", default="causal", choices=["causal", "bidirectional", "cross", "tree"])
    ap.add_argument("--align", default="bottom_right", choices=["bottom_right", "top_left"])
    ap.add_argument("--heads-q", type=int, default=4)
    ap.add_argument("--heads-kv", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=16)
    ap.add_argument("--head-dim-v", type=int, default=None)
    ap.add_argument("--prefix", default="0,5")
    ap.add_argument("--extend", default="7,3")
    ap.add_argument("--encoder", default=None)
    ap.add_argument("--window", type=int, nargs=2, default=[-1, -1])
    ap.add_argument("--cap", type=float, default=0.0)
    ap.add_argument("--scale", type=float, default=None)
    ap.add_argument("--sinks", action="store_true")
    ap.add_argument("--index-type", default="int32", choices=["int32", "int64"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tree-density", type=float, default=0.5)
    a = ap.parse_args(argv)
    make_case(a.out, a.dtype, a.mode, a.align, a.heads_q, a.heads_kv, a.head_dim, a.head_dim_v,
              _ints(a.prefix), _ints(a.extend),
              _ints(a.encoder) if a.encoder is not None else None, a.window, a.cap, a.scale,
              a.sinks, a.index_type, a.seed, a.tree_density)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
