#!/usr/bin/python3
"""Writes a random xattn case folder in the format of docs/formats.md §1.

    make_case.py OUT_DIR [--dtype f32|bf16|f16] [--mode causal|bidirectional|cross|tree]
                 [--align bottom_right|top_left] [--heads-q 4] [--heads-kv 2]
                 [--head-dim 16] [--head-dim-v N] [--prefix 0,5] [--extend 7,3]
                 [--encoder 4,9] [--window L R] [--cap C] [--scale S] [--sinks]
                 [--index-type int32|int64] [--seed N] [--tree-density 0.5]
                 [--page-size N] [--cache-layout token_major|head_major] [--start-cols]
                 [--strided] [--no-ext] [--cache-dtype e4m3fn|e5m2] [--kv-scales]

--page-size N writes a paged block table (N tokens per block) and caches of
shape [blocks, N, H_KV, D] (token_major) or [blocks, H_KV, N, D] (head_major);
--start-cols starts each request's keys at a random column of its table row
(req_start_col); --strided stores q, k_ext, v_ext and the caches as flat arrays
with padding and gives their strides in case.json ("strides"); --no-ext leaves
out k_ext/v_ext (cross mode never reads them). --cache-dtype stores the caches as
fp8 codes (uint8) with k_scale/v_scale in case.json; --kv-scales adds
per-token-per-head scales (k_scales.npy, v_scales.npy: [cache tokens, H_KV]).

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


def fp8_values(fmt):
    """The 256 values of an fp8 format, from its definition (numpy has no fp8)."""
    c = np.arange(256)
    sign = np.where(c >> 7, -1.0, 1.0)
    if fmt == "e4m3fn":
        e, m = (c >> 3) & 15, (c & 7).astype(np.float64)
        v = np.where(e == 0, m * 2.0 ** -9, (1 + m / 8) * 2.0 ** (e - 7))
        v = np.where((e == 15) & (m == 7), np.nan, v)
    else:  # e5m2
        e, m = (c >> 2) & 31, (c & 3).astype(np.float64)
        v = np.where(e == 0, m * 2.0 ** -16, (1 + m / 4) * 2.0 ** (e - 15))
        v = np.where(e == 31, np.where(m == 0, np.inf, np.nan), v)
    return sign * v


def fp8_encode(x, fmt):
    """float array -> nearest fp8 codes (finite values in range; ties to the even code)."""
    vals = fp8_values(fmt)
    pos = np.array([c for c in range(128) if np.isfinite(vals[c])])
    x = np.asarray(x, dtype=np.float64)
    d = np.abs(np.abs(x)[..., None] - vals[pos])
    best = d.min(axis=-1, keepdims=True)
    code = np.where(d == best, pos, 1 << 20).min(axis=-1)  # even wins a tie: codes ascend
    ties = (d == best).sum(axis=-1) > 1
    code = np.where(ties & (code % 2 == 1), code + 1, code)
    return (code | np.where(np.signbit(x), 128, 0)).astype(np.uint8)


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
              tree_density=0.5, page_size=1, cache_layout="token_major", start_cols=False,
              strided=False, no_ext=False, cache_dtype=None, kv_scales=False):
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
    page = max(1, page_size)
    cols = [int(rng.integers(0, 4)) if start_cols else 0 for _ in range(B)]
    max_keys = max([p + e for p, e in zip(prefix, extend)] + cache_lens + [1]) + 3 + 4
    max_ctx = -(-max_keys // page)  # table entries (blocks when paged)
    max_reqs = B + 2
    spans = [(-(-(c + n) // page) - c // page) if n > 0 else 0 for c, n in zip(cols, cache_lens)]
    blocks = sum(spans) + 5
    perm = rng.permutation(blocks)  # shuffled pool
    table = np.zeros((max_reqs, max_ctx), dtype=np.int64)
    req_index = rng.permutation(max_reqs)[:B].astype(np.int64)
    used = 0
    for b in range(B):
        first = cols[b] // page
        table[req_index[b], first:first + spans[b]] = perm[used:used + spans[b]]
        used += spans[b]
    os.makedirs(out, exist_ok=True)

    def rand(*shape):
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)

    paged = page > 1 or cache_layout != "token_major"
    cache_shape = (blocks, heads_kv, page) if cache_layout == "head_major" else (blocks, page, heads_kv)
    if not paged:
        cache_shape = (blocks, heads_kv)
    tensors = {
        "q": rand(T, heads_q, head_dim),
        "k_ext": rand(T, heads_kv, head_dim),
        "v_ext": rand(T, heads_kv, dv),
        "k_cache": rand(*cache_shape, head_dim),
        "v_cache": rand(*cache_shape, dv),
    }
    if no_ext:
        del tensors["k_ext"], tensors["v_ext"]
    strides = {}
    for name, x in tensors.items():
        fp8 = cache_dtype is not None and name.endswith("_cache")
        if strided:  # pad every dimension but the last, store flat, give the strides
            pad = np.full(tuple(n + 1 for n in x.shape[:-1]) + (x.shape[-1] + 3,), np.nan, np.float32)
            pad[tuple(slice(0, n) for n in x.shape)] = x
            el = [st // 4 for st in pad.strides[:-1]]
            if x.ndim == 3:
                strides[name] = el[:2]
            elif cache_layout == "head_major":  # [blocks, H, page]: token, head, block
                strides[name] = [el[2], el[1], el[0]]
            else:
                strides[name] = [el[1], el[2], el[0]]
            x = pad.reshape(-1)
        np.save(os.path.join(out, name + ".npy"), fp8_encode(x, cache_dtype) if fp8 else store(x, dtype))
    if cache_dtype is not None and kv_scales:
        for name in ("k_scales", "v_scales"):
            np.save(os.path.join(out, name + ".npy"),
                    rng.uniform(0.5, 1.5, (blocks * page, heads_kv)).astype(np.float32))
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
    if paged:
        case["page_size"], case["cache_layout"] = page, cache_layout
    if start_cols:
        case["req_start_col"] = cols
    if cache_dtype is not None:
        case.update(cache_dtype=cache_dtype, k_scale=0.75, v_scale=1.5, has_kv_scales=bool(kv_scales))
    if strided:
        case["strides"], case["cache_slots"] = strides, blocks
    with open(os.path.join(out, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    return out


def _view(flat, shape, el_strides):
    """A strided view (element strides) of a flat array."""
    return np.lib.stride_tricks.as_strided(flat, shape=shape,
                                           strides=[s * flat.itemsize for s in el_strides])


def load_case(d):
    """Reads a case folder into (case dict, dict of float64/int arrays).

    Paged caches come back as a slot-table view: k_cache/v_cache [tokens, H_KV, D]
    with token = block * page_size + i, and req_to_token expanded to one slot per
    token column; key j of request b is column req_start_col[b] + j of its row."""
    with open(os.path.join(d, "case.json")) as f:
        try:
            case = json.load(f)
        except RecursionError:
            raise ValueError("case.json: JSON nested too deeply to read")
    if not isinstance(case, dict):
        raise ValueError("case.json: not a JSON object")
    dt = case["dtype"]
    page = case.get("page_size", 1)
    head_major = case.get("cache_layout", "token_major") == "head_major"
    strides = case.get("strides", {})
    T = sum(case["extend_lens"])
    hq, hkv, dk = case["heads_q"], case["heads_kv"], case["head_dim"]
    dv = case.get("head_dim_v", dk)
    a = {}
    for name in ("q", "k_ext", "v_ext", "k_cache", "v_cache"):
        path = os.path.join(d, name + ".npy")
        dim = dv if name.startswith("v") else dk
        if name.endswith("_ext") and case.get("mode") == "cross" and not os.path.exists(path):
            a[name] = np.zeros((T, hkv, dim))
            continue
        fp8 = name.endswith("_cache") and case.get("cache_dtype", "same") in ("e4m3fn", "e5m2")
        x = fp8_values(case["cache_dtype"])[np.load(path)] if fp8 else to_f64(np.load(path), dt)
        if name in strides:
            s = strides[name]
            if not name.endswith("_cache"):
                x = _view(x, (T, hq if name == "q" else hkv, dim), s + [1])
            else:
                n, bs = case["cache_slots"], (s[2] if len(s) > 2 else 0)
                if head_major:
                    x = _view(x, (n, hkv, page, dim), [bs or hkv * s[1], s[1], s[0], 1])
                elif page > 1:
                    x = _view(x, (n, page, hkv, dim), [bs or page * s[0], s[0], s[1], 1])
                else:
                    x = _view(x, (n, hkv, dim), [bs or s[0], s[1], 1])
        if name.endswith("_cache") and x.ndim == 4:
            if head_major:
                x = x.transpose(0, 2, 1, 3)
            x = x.reshape(-1, hkv, dim)
        if fp8:  # dequantised values: code * tensor scale (* per-token-per-head scale)
            x = x * np.float32(case.get("k_scale" if name == "k_cache" else "v_scale", 1.0))
            if case.get("has_kv_scales"):
                per = np.load(os.path.join(d, name[0] + "_scales.npy")).astype(np.float64)
                x = x * per[:, :, None]
        a[name] = x
    table = np.load(os.path.join(d, "req_to_token.npy")).astype(np.int64)
    if page > 1:
        col = np.arange(table.shape[1] * page)
        table = table[:, col // page] * page + col % page
    a["req_to_token"] = table
    a["req_index"] = np.load(os.path.join(d, "req_index.npy")).astype(np.int64)
    a["req_start_col"] = np.array(case.get("req_start_col", [0] * len(case["prefix_lens"])),
                                  dtype=np.int64)
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
    ap.add_argument("--page-size", type=int, default=1)
    ap.add_argument("--cache-layout", default="token_major", choices=["token_major", "head_major"])
    ap.add_argument("--start-cols", action="store_true")
    ap.add_argument("--strided", action="store_true")
    ap.add_argument("--no-ext", action="store_true")
    ap.add_argument("--cache-dtype", default=None, choices=["e4m3fn", "e5m2"])
    ap.add_argument("--kv-scales", action="store_true")
    a = ap.parse_args(argv)
    make_case(a.out, a.dtype, a.mode, a.align, a.heads_q, a.heads_kv, a.head_dim, a.head_dim_v,
              _ints(a.prefix), _ints(a.extend),
              _ints(a.encoder) if a.encoder is not None else None, a.window, a.cap, a.scale,
              a.sinks, a.index_type, a.seed, a.tree_density, a.page_size, a.cache_layout,
              a.start_cols, a.strided, a.no_ext, a.cache_dtype, a.kv_scales)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
