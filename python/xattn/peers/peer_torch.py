"""PyTorch's CPU scaled_dot_product_attention, used the way a user would.

Per request of the batch (a Python loop, as a serving engine without a fused
kernel does): q [1, H_Q, E, D] against that request's keys and values
(prefix + extend, already contiguous: the peer is spared the cache gather).
The mask is the cheapest correct one SDPA offers: is_causal=True when the
query block is the whole sequence (no prefix), causal_lower_right(E, S) when
there is a prefix (is_causal=True would be top-left there, see README.md), no
mask for bidirectional and cross, an explicit boolean mask for windows and
trees. GQA with enable_gqa=True. Logit caps and sinks have no SDPA form.
"""
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

from .. import suites as wl

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


class Unsupported(Exception):
    pass


def versions():
    return {"torch": torch.__version__, "torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}


def mask_for(w, b, how):
    """SDPA keyword arguments for request b. how: 'auto' (what a user picks),
    'is_causal' (is_causal=True whatever the prefix), 'lower_right'
    (causal_lower_right bias), 'explicit' (boolean mask of docs/contract.md §2)."""
    p, e, _ = w["requests"][b]
    s = wl.key_count(w, w["requests"][b])
    if how == "is_causal":
        return {"is_causal": True}
    if how == "lower_right":
        return {"attn_mask": causal_lower_right(e, s)}
    if how == "explicit":
        return {"attn_mask": torch.from_numpy(wl.visible_mask(w, b))}
    plain = w["window"] == [-1, -1] and w["mode"] != "tree"
    if plain and w["mode"] in ("bidirectional", "cross"):
        return {}
    if plain and w["mode"] == "causal":
        if w["align"] == "top_left" or p == 0:
            return {"is_causal": True}
        return {"attn_mask": causal_lower_right(e, s)}
    return {"attn_mask": torch.from_numpy(wl.visible_mask(w, b))}


def prepare(w, dtype, threads, arrays, how="auto"):
    """Returns run: run() computes the whole batch and returns one output
    [1, H_Q, E_b, DV] per request with E_b > 0. arrays(b) gives request b's f32
    (q, k, v) (workloads.request_arrays layout). Raises Unsupported."""
    if w["logit_cap"] > 0:
        raise Unsupported("SDPA has no logit soft cap")
    if w["sinks"]:
        raise Unsupported("SDPA has no attention sinks")
    torch.set_num_threads(threads)
    tdt = TORCH_DTYPES[dtype]
    gqa = {"enable_gqa": True} if w["heads_q"] != w["heads_kv"] else {}
    scale = wl.scale_of(w)
    calls = []
    for b, req in enumerate(w["requests"]):
        if req[1] == 0:
            continue
        q, k, v = (torch.from_numpy(a).to(tdt) for a in arrays(b))
        calls.append((q, k, v, mask_for(w, b, how)))
    out = [None] * len(calls)

    def run():
        with torch.inference_mode():
            for n, (q, k, v, m) in enumerate(calls):
                out[n] = F.scaled_dot_product_attention(q, k, v, scale=scale, **m, **gqa)
        return out

    # what --flush-caches flushes before a timed call (SDPA allocates its outputs)
    run.buffers = [t for q, k, v, m in calls for t in (q, k, v, m.get("attn_mask")) if t is not None]
    return run
