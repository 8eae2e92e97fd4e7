"""Cases shared by the binding's pytest module (test_binding.py) and the torch
check run in the peers' venv (check_binding_torch.py): random batches over a
slot table or a paged cache, optionally fp8, and the numpy oracle's answer for
them (xattn.cases.oracle shares no code with the C library). No pytest here:
the venv has torch and numpy only."""
import numpy as np

import xattn
from xattn.cases import make_case
from xattn.cases.oracle import oracle

TOL = {"f32": 2e-5, "bf16": 2e-2, "f16": 4e-3}


def bf16(x):
    return make_case.f32_to_bf16_bits(np.asarray(x, np.float32))


def as_f64(a, dtype):
    return make_case.bf16_bits_to_f32(a).astype(np.float64) if dtype == "bf16" else np.asarray(a, np.float64)


def store(x, dtype):
    return bf16(x) if dtype == "bf16" else np.asarray(x, np.float16 if dtype == "f16" else np.float32)


class Batch:
    """A random batch: slot table (or paged cache), shuffled slots and table rows."""

    def __init__(self, seed=0, dtype="f32", mode="causal", prefix=(5, 0, 17), extend=(3, 7, 1), encoder=(4, 9, 2),
                 hq=4, hkv=2, d=16, dv=16, page=1, layout="token_major", start_cols=False, fp8=None):
        rng = np.random.default_rng(seed)
        self.dtype, self.mode, self.prefix, self.extend = dtype, mode, list(prefix), list(extend)
        self.encoder = list(encoder) if mode == "cross" else None
        B, T = len(prefix), sum(extend)
        keys = self.encoder if mode == "cross" else self.prefix
        self.cols = [int(rng.integers(0, 4)) if start_cols else 0 for _ in range(B)]
        spans = [(-(-(c + n) // page) - c // page) if n else 0 for c, n in zip(self.cols, keys)]
        blocks = sum(spans) + 3
        perm = rng.permutation(blocks)
        ctx = -(-(max([p + e for p, e in zip(prefix, extend)] + keys) + 4) // page)
        self.table = np.full((B + 2, ctx), perm[-1], dtype=np.int32)
        self.req_index = rng.permutation(B + 2)[:B]
        used = 0
        for b in range(B):
            self.table[self.req_index[b], self.cols[b] // page:self.cols[b] // page + spans[b]] = perm[used:used + spans[b]]
            used += spans[b]
        u = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
        self.q, self.k, self.v = store(u(T, hq, d), dtype), store(u(T, hkv, d), dtype), store(u(T, hkv, dv), dtype)
        cshape = (blocks, hkv, page) if layout == "head_major" else (blocks, page, hkv)
        if page == 1 and layout == "token_major":
            cshape = (blocks, hkv)
        self.fp8 = fp8
        if fp8:
            self.kc = make_case.fp8_encode(u(*cshape, d), fp8)
            self.vc = make_case.fp8_encode(u(*cshape, dv), fp8)
        else:
            self.kc, self.vc = store(u(*cshape, d), dtype), store(u(*cshape, dv), dtype)
        self.page, self.layout, self.hq, self.hkv, self.d, self.dv = page, layout, hq, hkv, d, dv
        self.k_scales = rng.uniform(0.5, 1.5, (blocks * page, hkv)).astype(np.float32) if fp8 else None

    def kwargs(self):
        kw = dict(dtype=self.dtype, mode=self.mode, cache_layout=self.layout)
        if self.encoder is not None:
            kw["encoder_lens"] = self.encoder
        if any(self.cols):
            kw["req_start_col"] = self.cols
        if self.fp8:
            kw.update(cache_dtype=self.fp8, k_scale=0.5, v_scale=1.5, k_scales=self.k_scales, v_scales=self.k_scales)
        return kw

    def args(self):
        k = None if self.mode == "cross" else self.k
        v = None if self.mode == "cross" else self.v
        return (self.q, k, v, self.kc, self.vc, self.table, self.req_index, self.prefix, self.extend)

    def oracle(self):
        """The numpy oracle's answer (caches flattened to a slot view, as load_case does)."""
        def flat(c, dim, scale):
            x = make_case.fp8_values(self.fp8)[c] if self.fp8 else as_f64(c, self.dtype)
            if x.ndim == 4:
                x = (x.transpose(0, 2, 1, 3) if self.layout == "head_major" else x).reshape(-1, self.hkv, dim)
            if self.fp8:
                x = x * np.float32(scale) * self.k_scales.astype(np.float64)[:, :, None]
            return x
        col = np.arange(self.table.shape[1] * self.page)
        slots = self.table[:, col // self.page].astype(np.int64) * self.page + col % self.page
        case = dict(heads_q=self.hq, heads_kv=self.hkv, head_dim=self.d, head_dim_v=self.dv,
                    scale=float(np.float32(self.d ** -0.5)), mode=self.mode, prefix_lens=self.prefix,
                    extend_lens=self.extend, encoder_lens=self.encoder)
        a = dict(q=as_f64(self.q, self.dtype), k_ext=as_f64(self.k, self.dtype), v_ext=as_f64(self.v, self.dtype),
                 k_cache=flat(self.kc, self.d, 0.5), v_cache=flat(self.vc, self.dv, 1.5), req_to_token=slots,
                 req_index=self.req_index, req_start_col=np.array(self.cols))
        return oracle(case, a)


def check(got, want, dtype):
    got = as_f64(got, dtype)
    tol = TOL[dtype]
    assert np.all(np.abs(got - want) <= tol + tol * np.abs(want)), float(np.abs(got - want).max())


# ---- torch checks (called by test_binding.py where torch imports, and by check_binding_torch.py) ----
def torch_tensors_without_copies(torch):
    b = Batch(seed=13, dtype="bf16", page=16, layout="token_major", prefix=(40, 3, 0))
    t = lambda a: torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)  # noqa: E731
    args = [t(b.q), t(b.k), t(b.v), t(b.kc), t(b.vc), torch.from_numpy(b.table), torch.from_numpy(b.req_index),
            torch.tensor(b.prefix), torch.tensor(b.extend)]
    out = torch.empty((sum(b.extend), b.hq, b.dv), dtype=torch.bfloat16)
    kw = b.kwargs()
    kw.pop("dtype")
    r = xattn.extend_attention(*args, out=out, **kw)
    assert r is out
    check(out.view(torch.int16).numpy().view(np.uint16), b.oracle(), "bf16")
    # a non-contiguous torch view (every other head of a bigger tensor)
    qbig = torch.zeros((b.q.shape[0], 2 * b.hq, b.d), dtype=torch.bfloat16)
    qbig[:, ::2] = args[0]
    args[0] = qbig[:, ::2]
    out2 = xattn.extend_attention(*args, **kw)
    assert torch.equal(out2, out)


def torch_fp8_cache_and_sglang_adapter(torch):
    from xattn.adapters import extend_attention_cpu
    b = Batch(seed=14, dtype="f32", fp8="e4m3fn")
    kc = torch.from_numpy(b.kc).view(torch.float8_e4m3fn)
    vc = torch.from_numpy(b.vc).view(torch.float8_e4m3fn)
    T = sum(b.extend)
    o = torch.zeros((T, b.hq, b.dv))
    seq = torch.tensor(b.prefix) + torch.tensor(b.extend)
    start = torch.tensor(np.concatenate([[0], np.cumsum(b.extend)[:-1]]))
    extend_attention_cpu(torch.from_numpy(b.q), torch.from_numpy(b.k), torch.from_numpy(b.v), o, kc, vc,
                         torch.from_numpy(b.table), torch.from_numpy(b.req_index), seq, torch.tensor(b.extend),
                         start, max(b.extend), b.d ** -0.5, 0.0, k_scale=0.5, v_scale=1.5,
                         k_scales=torch.from_numpy(b.k_scales), v_scales=torch.from_numpy(b.k_scales))
    check(o.numpy(), b.oracle(), "f32")


def torch_tensors_read_by_the_call_module(torch):
    """Once torch is in use, the C call module reads torch tensors itself: the
    converting path (api._normalized) is not taken, for f32, bf16 and fp8
    caches, int32 or int64 lengths; the answer is the NumPy call's."""
    from xattn import api
    b = Batch(seed=15, dtype="f32", fp8="e5m2", page=4, layout="head_major")
    want = xattn.extend_attention(*b.args(), **b.kwargs())
    xattn.extend_attention(*[torch.from_numpy(np.asarray(a)) for a in b.args()], **b.kwargs())  # registers torch
    kw = b.kwargs()
    kw.pop("cache_dtype")  # the fp8 torch tensors say it
    kw["encoder_lens"] = torch.tensor(b.encoder) if b.encoder else None
    args = [torch.from_numpy(b.q), torch.from_numpy(b.k), torch.from_numpy(b.v),
            torch.from_numpy(b.kc).view(torch.float8_e5m2), torch.from_numpy(b.vc).view(torch.float8_e5m2),
            torch.from_numpy(b.table), torch.from_numpy(b.req_index), torch.tensor(b.prefix),  # int64 lengths
            torch.tensor(b.extend, dtype=torch.int32)]
    kw["k_scales"], kw["v_scales"] = torch.from_numpy(b.k_scales), torch.from_numpy(b.k_scales)
    normalized = api._normalized

    def refuse(*a, **k):
        raise AssertionError("the converting path was taken")
    api._normalized = refuse
    try:
        out = torch.zeros((sum(b.extend), b.hq, b.dv))
        assert xattn.extend_attention(*args, out=out, **kw) is out
        assert np.array_equal(out.numpy(), want)
        try:  # (no pytest in the peers' venv, where check_binding_torch.py runs this)
            xattn.extend_attention(*args, out=out, **{**kw, "cache_dtype": "e4m3fn"})
            raise AssertionError("an e5m2 tensor with cache_dtype='e4m3fn' was accepted")
        except xattn.XattnError as e:
            assert str(e) == "k_cache: float8_e5m2 but cache_dtype='e4m3fn'", str(e)
    finally:
        api._normalized = normalized


def torch_overhead_benchmark_runs(torch):
    """`python3 -m xattn binding-overhead --tensors torch` runs (its figures are benchmarked, not tested)."""
    import contextlib
    import io
    from xattn.perf import binding_overhead
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert binding_overhead.main(["--tensors", "torch", "--prefix", "8", "--reps", "5"]) == 0
    assert "f32 torch" in text.getvalue(), text.getvalue()


TORCH_CHECKS = [torch_tensors_without_copies, torch_fp8_cache_and_sglang_adapter,
                torch_tensors_read_by_the_call_module, torch_overhead_benchmark_runs]
