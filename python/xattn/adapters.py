"""Drop-in signatures of two serving stacks' CPU attention calls, on xattn.

    from xattn.adapters import extend_attention_cpu      # SGLang sgl_kernel
    from xattn.adapters import flash_attn_varlen_func    # IPEX PagedAttention

Both take torch CPU tensors (or NumPy arrays) in place, write the output
tensor they are given and return it; the work is one xattn.extend_attention
call (python/xattn/api.py), so every option of the C API stays reachable
through the keyword arguments documented below.
"""
from . import api


def _host(x):
    """A small index tensor as a NumPy array (zero copy for CPU torch tensors)."""
    import numpy as np
    if hasattr(x, "numpy") and hasattr(x, "device"):
        x = x.numpy()
    return np.asarray(x)


def extend_attention_cpu(q_extend, k_extend, v_extend, o_extend, k_buffer, v_buffer, req_to_token,
                         req_pool_indices, seq_lens, extend_seq_lens, extend_start_loc, max_len_extend,
                         sm_scale, logit_cap, *, is_causal=True, is_cross=False, encoder_lens=None,
                         req_start_col=None, sinks=None, sliding_window_size=-1, **options):
    """SGLang's `extend_attention_cpu` argument list (sgl_kernel CPU).

    q_extend [T, H_Q, D], k_extend / v_extend [T, H_KV, D/DV], o_extend [T, H_Q, DV]
    (written), k_buffer / v_buffer [slots, H_KV, D/DV], req_to_token [rows, ctx],
    req_pool_indices / seq_lens / extend_seq_lens / extend_start_loc [B]
    (prefix = seq_lens - extend_seq_lens), max_len_extend (unused: xattn reads
    the lengths), sm_scale, logit_cap (0 = off).
    is_causal=False: bidirectional (encoder) attention. is_cross=True: keys are
    encoder tokens 0..encoder_lens[b]-1 of the table row (k_extend/v_extend may
    be None). req_start_col: the decoder of an encoder-decoder batch reads its
    prefix at req_to_token[r, encoder_lens[b] + j]. sinks [H_Q],
    sliding_window_size (>= 0: keys j >= position - window). Other keywords go
    to xattn.extend_attention (variant, threads, cache_dtype, k_scale, ...)."""
    import numpy as np
    seq = _host(seq_lens).astype(np.int64)
    ext = _host(extend_seq_lens).astype(np.int64)
    mode = "cross" if is_cross else ("causal" if is_causal else "bidirectional")
    if is_cross and encoder_lens is None:
        raise api.XattnError("encoder_lens: required with is_cross=True", "null")
    return api.extend_attention(
        q_extend, None if is_cross else k_extend, None if is_cross else v_extend, k_buffer, v_buffer,
        req_to_token, req_pool_indices, seq - ext, ext, out=o_extend, extend_start=extend_start_loc,
        encoder_lens=encoder_lens, req_start_col=req_start_col, scale=sm_scale, logit_cap=logit_cap or 0.0,
        sinks=sinks, mode=mode, window=(sliding_window_size if sliding_window_size is not None else -1, -1),
        **options)


def flash_attn_varlen_func(output, query, key_cache, value_cache, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q,
                           max_seqlen_kv, scale, is_causal, block_table, alibi_slopes=None, window_size_left=-1,
                           window_size_right=-1, k_scale=1.0, v_scale=1.0, softcap=-1.0, *,
                           kv_cache_layout="head_major", kv_cache_dtype=None, **options):
    """IPEX's `PagedAttention.flash_attn_varlen_func` (paged KV cache).

    output / query [T, H_Q, D] (rows of request b: cu_seqlens_q[b] ..), key_cache /
    value_cache [num_blocks, H_KV, block_size, D] (IPEX's CPU layout; pass
    kv_cache_layout="token_major" for [num_blocks, block_size, H_KV, D]),
    cu_seqlens_q / cu_seqlens_kv [B + 1], block_table [B, max_blocks]. Every key,
    the new tokens' included, is read from the cache (IPEX writes them there
    first): request b sees kv_len_b keys and its query i sits at position
    kv_len_b - q_len_b + i; is_causal keeps keys up to that position (bottom
    right), window_size_left/right bound it further. softcap <= 0 is off.
    kv_cache_dtype "fp8"/"fp8_e4m3"/"fp8_e5m2" (or fp8 torch tensors) with
    k_scale / v_scale. alibi_slopes is not supported (refused)."""
    import numpy as np
    if alibi_slopes is not None:
        raise api.XattnError("alibi_slopes: not supported by xattn", "unsupported")
    cq = _host(cu_seqlens_q).astype(np.int64)
    ckv = _host(cu_seqlens_kv).astype(np.int64)
    qlen, kvlen = np.diff(cq), np.diff(ckv)
    if len(qlen) != len(kvlen):
        raise api.XattnError(f"cu_seqlens_kv: {len(ckv)} entries but cu_seqlens_q has {len(cq)}", "shape")
    if np.any(kvlen < qlen):
        b = int(np.argmax(kvlen < qlen))
        raise api.XattnError(f"cu_seqlens_kv: request {b} has {kvlen[b]} keys for {qlen[b]} queries", "shape")
    fmt = {None: None, "auto": None, "fp8": "e4m3fn", "fp8_e4m3": "e4m3fn", "fp8_e5m2": "e5m2"}
    if kv_cache_dtype not in fmt:
        raise api.XattnError(f"kv_cache_dtype: {kv_cache_dtype!r}, want fp8, fp8_e4m3 or fp8_e5m2", "dtype")
    right = window_size_right if window_size_right is not None and window_size_right >= 0 else -1
    if is_causal:
        right = 0 if right < 0 else min(right, 0)
    # all keys from the cache: cross mode over kv_len_b keys, positions offset by the prefix
    return api.extend_attention(
        query, None, None, key_cache, value_cache, block_table, np.arange(len(qlen)), kvlen - qlen, qlen,
        out=output, extend_start=cq[:-1], encoder_lens=kvlen, mode="cross", scale=scale,
        logit_cap=softcap if softcap and softcap > 0 else 0.0,
        window=(window_size_left if window_size_left is not None and window_size_left >= 0 else -1, right),
        cache_layout=kv_cache_layout, cache_dtype=fmt[kv_cache_dtype],
        k_scale=float(k_scale), v_scale=float(v_scale), **options)
