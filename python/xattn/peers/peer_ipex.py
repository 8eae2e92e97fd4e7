"""Intel Extension for PyTorch's paged attention (ipex.llm.modules.PagedAttention,
CPU), used the way a serving engine on a Xeon uses it.

The batch's keys and values live in a paged cache [num_blocks, H_KV, page, D]
(IPEX's CPU layout) of `page` tokens per block, every key of a request (the
new tokens' included: the engine wrote them there first, not timed) reached
through a block table [B, max_blocks]. The blocks of the pool are in random
order when the workload's token table is shuffled or made of runs (the finest
granularity IPEX has is one page: a shuffled table and runs of `page` slots are
the same layout to it) and in order when it is contiguous. When every request
brings one token, one `single_query_cached_kv_attention` call (the decode
kernel); otherwise one `flash_attn_varlen_func` call, causal (bottom right: the
query i of a request with S keys and E queries sits at S - E + i).
IPEX's CPU flash_attn_varlen_func says causal only ("False is not supported
yet"); a bidirectional workload is still tried and the fp64 check decides.
Trees, sinks, top-left alignment, cross attention, windows and fp8 caches are
not mapped (skipped with the reason).
"""
import numpy as np
import torch

import intel_extension_for_pytorch as ipex
from intel_extension_for_pytorch.llm.modules import PagedAttention

from .. import suites as wl

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


class Unsupported(Exception):
    pass


def versions():
    c = ipex._C
    return {"torch_ipex": torch.__version__, "intel_extension_for_pytorch": ipex.__version__,
            "ipex_isa_level": c._get_current_isa_level(), "ipex_onednn_isa_level": c._get_current_onednn_isa_level(),
            "ipex_amx": bool(c.isa_has_amx_support())}


def page_order(w):
    """'inorder' for a contiguous token table, else 'random'."""
    return "inorder" if w.get("slots", "shuffled") == "contiguous" else "random"


def _refuse(w):
    if w["mode"] not in ("causal", "bidirectional"):
        raise Unsupported(f"mode {w['mode']} has no PagedAttention form")
    if w["mode"] == "causal" and w["align"] != "bottom_right" and any(r[0] for r in w["requests"]):
        raise Unsupported("top-left causal with a prefix has no PagedAttention form")
    if w["sinks"]:
        raise Unsupported("PagedAttention has no attention sinks")
    if w["window"] != [-1, -1]:
        raise Unsupported("windows are not mapped to PagedAttention's window_size")
    if w.get("kv_cache", "same") != "same":
        raise Unsupported(f"{w['kv_cache']} caches are not mapped")
    if w["head_dim"] != w["head_dim_v"]:
        raise Unsupported("PagedAttention needs D == DV")


def prepare(w, dtype, threads, arrays, page, seed):
    """Returns run: run() computes the whole batch into one [T, H_Q, DV]
    tensor (rows of the requests with E_b > 0, in order) and returns it.
    arrays(b) gives request b's f32 (q, k, v) (workloads.request_arrays
    layout). Raises Unsupported."""
    _refuse(w)
    torch.set_num_threads(threads)
    tdt = TORCH_DTYPES[dtype]
    hq, hkv, d = w["heads_q"], w["heads_kv"], w["head_dim"]
    reqs = [(b, r) for b, r in enumerate(w["requests"]) if r[1] > 0]
    kv_lens = [wl.key_count(w, r) for _, r in reqs]
    nblocks = [-(-s // page) for s in kv_lens]
    total = sum(nblocks)
    rng = np.random.default_rng([seed, page, 7])
    pool = rng.permutation(total) if page_order(w) == "random" else np.arange(total)
    table = np.zeros((len(reqs), max(nblocks)), dtype=np.int32)
    kc = torch.zeros((total, hkv, page, d), dtype=tdt)
    vc = torch.zeros((total, hkv, page, d), dtype=tdt)
    qs, at = [], 0
    for i, (b, _) in enumerate(reqs):
        q, k, v = arrays(b)
        ids = pool[at:at + nblocks[i]]
        at += nblocks[i]
        table[i, :nblocks[i]] = ids
        for src, cache in ((k, kc), (v, vc)):
            pad = np.zeros((hkv, nblocks[i] * page, d), dtype=np.float32)
            pad[:, :kv_lens[i]] = src[0]
            cache[torch.from_numpy(ids)] = torch.from_numpy(pad.reshape(hkv, nblocks[i], page, d)
                                                            .transpose(1, 0, 2, 3).copy()).to(tdt)
        qs.append(torch.from_numpy(q[0].transpose(1, 0, 2).copy()).to(tdt))  # [E_b, H_Q, D]
    query = torch.cat(qs).contiguous()
    out = torch.empty_like(query)
    tables = torch.from_numpy(table)
    scale = wl.scale_of(w)
    cap = float(w["logit_cap"]) if w["logit_cap"] > 0 else -1.0
    causal = w["mode"] == "causal"
    if causal and all(r[1] == 1 for _, r in reqs):
        head_map = torch.arange(hq, dtype=torch.int32) // (hq // hkv)
        lens = torch.tensor(kv_lens, dtype=torch.int32)
        maxlen = max(kv_lens)

        def run():
            PagedAttention.single_query_cached_kv_attention(out, query, kc, vc, head_map, scale, tables, lens,
                                                            page, maxlen, None, -1, 1.0, 1.0, cap)
            return out
    else:
        cu_q = torch.tensor(np.concatenate([[0], np.cumsum([r[1] for _, r in reqs])]), dtype=torch.int32)
        cu_kv = torch.tensor(np.concatenate([[0], np.cumsum(kv_lens)]), dtype=torch.int32)
        max_q, max_kv = max(r[1] for _, r in reqs), max(kv_lens)

        def run():
            PagedAttention.flash_attn_varlen_func(out, query, kc, vc, cu_q, cu_kv, max_q, max_kv, scale, causal,
                                                  tables, None, -1, -1, "auto", 1.0, 1.0, cap)
            return out
    # what --flush-caches flushes before a timed call: the paged caches, queries, output and tables
    run.buffers = [kc, vc, query, out, tables] + ([head_map, lens] if causal and all(r[1] == 1 for _, r in reqs)
                                                   else [cu_q, cu_kv])
    try:
        with torch.inference_mode():
            run()
    except RuntimeError as exc:
        raise Unsupported(f"intel_extension_for_pytorch {ipex.__version__}: {str(exc).splitlines()[0][:200]}")
    return run


def request_rows(out, w):
    """[E_b, H_Q, DV] f32 NumPy rows of each request with E_b > 0, from run()'s output."""
    o = out.float().numpy()
    rows, at = {}, 0
    for b, r in enumerate(w["requests"]):
        if r[1] > 0:
            rows[b] = o[at:at + r[1]]
            at += r[1]
    return rows
