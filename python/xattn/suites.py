"""Workloads as the peers see them: a plan (JSON written by xattn-peers-plan from
a bench suite through bench's own parser, so suites are parsed in one place)
or one workload given on the command line; per request, which keys each query
sees (docs/contract.md §2) and the data the peers compute on.

A plan:
  {"context": {xattn_* keys of this machine and build},
   "suite": "causal-prefill",
   "workloads": [{"name": "e2048.ref", "requests": [[P, E, enc], ...],
                  "heads_q": 32, "heads_kv": 8, "head_dim": 128, "head_dim_v": 128,
                  "mode": "causal", "align": "bottom_right", "window": [-1, -1],
                  "logit_cap": 0, "sinks": false, "dtypes": ["f32"], "seed": 1,
                  "visible_pairs": V,
                  "tree_mask": [["1000", "1100", ...], ...]  (tree mode: per request, rows)
                 }, ...]}
"""
import json

import numpy as np

MODES = ("causal", "bidirectional", "cross", "tree")


class PlanError(Exception):
    pass


def load_plan(path):
    with open(path) as f:
        plan = json.load(f)
    for key in ("suite", "workloads"):
        if key not in plan:
            raise PlanError(f"{path}: {key}: missing")
    for i, w in enumerate(plan["workloads"]):
        check_workload(w, f"{path}: workloads[{i}]")
    return plan


def check_workload(w, where):
    for key in ("name", "requests", "heads_q", "heads_kv", "head_dim", "head_dim_v", "mode"):
        if key not in w:
            raise PlanError(f"{where}: {key}: missing")
    w.setdefault("align", "bottom_right")
    w.setdefault("window", [-1, -1])
    w.setdefault("logit_cap", 0.0)
    w.setdefault("sinks", False)
    w.setdefault("dtypes", ["f32"])
    w.setdefault("seed", 1)
    if w["mode"] not in MODES:
        raise PlanError(f"{where}: mode: {w['mode']!r} is not one of {', '.join(MODES)}")
    if w["heads_q"] % w["heads_kv"]:
        raise PlanError(f"{where}: heads_kv: {w['heads_kv']} does not divide heads_q {w['heads_q']}")
    for r in w["requests"]:
        if len(r) == 2:
            r.append(0)
    if w["mode"] == "tree" and len(w.get("tree_mask", [])) != len(w["requests"]):
        raise PlanError(f"{where}: tree_mask: tree mode needs one mask per request")


def parse_batch(text):
    """'0:2048,4096:64' -> [[0, 2048, 0], [4096, 64, 0]] (prefix:extend[:encoder])."""
    out = []
    for item in text.split(","):
        parts = [int(x) for x in item.split(":")]
        if len(parts) not in (2, 3) or min(parts) < 0:
            raise PlanError(f"--batch: {item!r} is not prefix:extend[:encoder] of non-negative integers")
        out.append(parts + [0] * (3 - len(parts)))
    return out


def key_count(w, req):
    p, e, enc = req
    return enc if w["mode"] == "cross" else p + e


def row_ranges(w, req):
    """Inclusive key range [lo[i], hi[i]] of each extend query i of one request
    (interval modes: causal, bidirectional, cross). Empty rows have lo > hi."""
    p, e, _ = req
    n = key_count(w, req)
    i = np.arange(e, dtype=np.int64)
    pos = p + i
    lo = np.zeros(e, dtype=np.int64)
    if w["mode"] == "causal":
        hi = i.copy() if w["align"] == "top_left" else pos.copy()
    else:
        hi = np.full(e, n - 1, dtype=np.int64)
    left, right = w["window"]
    if left >= 0:
        lo = np.maximum(lo, pos - left)
    if right >= 0:
        hi = np.minimum(hi, pos + right)
    hi = np.minimum(hi, n - 1)
    return lo, hi


def tree_rows(w, b):
    rows = w["tree_mask"][b]
    return np.array([[c == "1" for c in r] for r in rows], dtype=bool).reshape(len(rows), -1)


def visible_mask(w, b):
    """Boolean [E_b, keys] mask of request b: True where the query sees the key."""
    req = w["requests"][b]
    p, e, _ = req
    n = key_count(w, req)
    j = np.arange(n, dtype=np.int64)[None, :]
    if w["mode"] == "tree":
        m = np.zeros((e, n), dtype=bool)
        m[:, :p] = True
        m[:, p:] = tree_rows(w, b)[:e, :e]
        left, right = w["window"]
        pos = (p + np.arange(e))[:, None]
        if left >= 0:
            m &= j >= pos - left
        if right >= 0:
            m &= j <= pos + right
        return m
    lo, hi = row_ranges(w, req)
    return (j >= lo[:, None]) & (j <= hi[:, None])


def visible_pairs(w):
    """V of docs/contract.md §5 for the whole batch."""
    total = 0
    for b, req in enumerate(w["requests"]):
        if w["mode"] == "tree":
            total += int(visible_mask(w, b).sum())
        else:
            lo, hi = row_ranges(w, req)
            total += int(np.maximum(hi - lo + 1, 0).sum())
    return total


def flops(w, pairs):
    return 2.0 * w["heads_q"] * (w["head_dim"] + w["head_dim_v"]) * pairs


def request_arrays(w, b, seed):
    """Unit-scale f32 data of request b in the head-major layout both peers
    take: q [1, H_Q, E, D], k [1, H_KV, keys, D], v [1, H_KV, keys, DV]
    (keys = prefix then extend, or the encoder tokens in cross mode)."""
    req = w["requests"][b]
    rng = np.random.default_rng([seed, b])
    e, n = req[1], key_count(w, req)

    def rand(*shape):
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)

    return (rand(1, w["heads_q"], e, w["head_dim"]), rand(1, w["heads_kv"], n, w["head_dim"]),
            rand(1, w["heads_kv"], n, w["head_dim_v"]))


def scale_of(w):
    return float(w.get("scale") or w["head_dim"] ** -0.5)
