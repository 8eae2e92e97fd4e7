"""A peer's answer against xattn's fp64 reference (xattn_reference through
xattn.api), before the peer is timed: a peer that fails is refused, never timed.

The reference runs on sampled query rows of each request (all rows up to 4,
else the first, the middle and the last), on the same stored (dtype-rounded)
values the peer read, so a long prefill costs a few reference rows, not the
whole fp64 problem. Tolerances: docs/contract.md §3 (xattn.cases.make_case).
"""
import numpy as np

from .. import api, suites as wl
from ..cases.make_case import TOLERANCES, f32_to_bf16_bits


class Mismatch(Exception):
    pass


def stored(x, dtype):
    """f32 array -> the f32 values of its dtype-rounded copy (what the peer read)."""
    if dtype == "bf16":
        return (f32_to_bf16_bits(x).astype(np.uint32) << 16).view(np.float32).reshape(x.shape)
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)
    return x


def sample_rows(e):
    """[(i0, i1)] query rows checked out of e: all of up to 4, else the first,
    the middle and the last (where a causal mask's edges are). The fp64
    reference runs single-threaded: on B 8 x P 8192 every row of E = 32 cost
    ~30 s per peer row; three rows a request cost ~1/10 of that."""
    if e <= 4:
        return [(0, e)]
    return [(0, 1), (e // 2, e // 2 + 1), (e - 1, e)]


_last = {}  # the token-major stored arrays of the last (workload, dtype) checked, per request


def _token_major(w, dtype, arrays, b):
    """Request b's stored q [E, H_Q, D], k [S, H_KV, D], v [S, H_KV, DV]; kept while
    the same workload and dtype are checked again (every page size of a row checks
    them), dropped when another comes (a long prefix is large)."""
    key = (w["name"], w.get("seed"), dtype, id(arrays))
    if _last.get("key") != key:
        _last.clear()
        # arrays is kept with the entries, so its id() cannot be reused while they are cached
        _last.update(key=key, arrays=arrays, rows={})
    rows = _last["rows"]
    if b not in rows:
        q, k, v = (stored(a, dtype) for a in arrays(b))
        rows[b] = tuple(np.ascontiguousarray(x[0].transpose(1, 0, 2)) for x in (q, k, v))
    return rows[b]


def reference_rows(w, dtype, arrays, b, i0, i1):
    """fp64 [i1 - i0, H_Q, DV] reference of request b's query rows i0..i1-1."""
    p, e, _ = w["requests"][b]
    qa, kt, vt = _token_major(w, dtype, arrays, b)
    qt = np.ascontiguousarray(qa[i0:i1])   # [m, H_Q, D]
    s, m = kt.shape[0], i1 - i0
    opts = {"scale": wl.scale_of(w), "logit_cap": float(w["logit_cap"])}
    if w["mode"] == "causal":
        # rows i0..i1 of a bottom-right causal request are the extend of a request
        # whose prefix is the first p + i0 keys
        pre = p + i0
        table = np.arange(pre + m, dtype=np.int32)[None]
        return api.reference(qt, kt[pre:pre + m], vt[pre:pre + m], kt, vt, table, [0], [pre], [m],
                             mode="causal", **opts)
    if w["mode"] == "bidirectional":
        # every row sees all s keys: cross attention over the whole key range
        table = np.arange(s, dtype=np.int32)[None]
        return api.reference(qt, None, None, kt, vt, table, [0], [0], [m], mode="cross",
                             encoder_lens=[s], **opts)
    raise Mismatch(f"mode {w['mode']}: no sampled reference")


def check(w, dtype, arrays, rows):
    """rows: {b: f32 [E_b, H_Q, DV]} of the peer. Returns the largest
    |o - ref| / (atol + rtol |ref|) seen (<= 1 passes); raises Mismatch with one
    line naming the first element over the tolerance."""
    atol, rtol = TOLERANCES[dtype]
    worst = 0.0
    for b, got in rows.items():
        for i0, i1 in sample_rows(w["requests"][b][1]):
            ref = reference_rows(w, dtype, arrays, b, i0, i1)
            part = got[i0:i1].astype(np.float64)
            ratio = np.abs(part - ref) / (atol + rtol * np.abs(ref))
            ratio = np.where(np.isnan(ratio), np.inf, ratio)
            if ratio.max() > 1.0:
                t, h, c = np.unravel_index(np.argmax(ratio), ratio.shape)
                raise Mismatch(f"request {b} row {i0 + t} head {h} col {c}: {part[t, h, c]:.6g}, "
                               f"fp64 reference {ref[t, h, c]:.6g} (atol {atol:g}, rtol {rtol:g})")
            worst = max(worst, float(ratio.max()))
    return worst
