"""xattn.extend_attention (python/xattn/api.py) and the adapters, with NumPy.

Every answer is checked against the independent numpy oracle of
xattn.cases.oracle (cases in binding_cases.py) (no shared code with the C library, so a binding that
passed a stride or a length wrongly cannot agree with it), and against the
library's own fp64 reference through the binding. torch tests are at the end:
they run where torch is importable (the venv of scripts/make-venv.sh: ctest
peers.binding_torch) and are skipped with a stated reason elsewhere.
"""
import ctypes
import gc
import os
import threading

import numpy as np
import pytest

import xattn
from binding_cases import TORCH_CHECKS, Batch, check

try:
    xattn.info()
except ImportError as e:  # pragma: no cover - stated, never silent
    pytest.skip(f"libxattn.so not available: {e}", allow_module_level=True)

@pytest.mark.parametrize("mode", ["causal", "bidirectional", "cross"])
@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
def test_matches_the_numpy_oracle(mode, dtype):
    b = Batch(seed=1, dtype=dtype, mode=mode)
    o = xattn.extend_attention(*b.args(), **b.kwargs())
    check(o, b.oracle(), dtype)
    ref = xattn.reference(*b.args(), **b.kwargs())
    assert np.abs(ref - b.oracle()).max() < 1e-9


@pytest.mark.parametrize("page,layout,fp8", [(16, "token_major", None), (4, "head_major", None),
                                             (1, "token_major", "e4m3fn"), (8, "head_major", "e5m2")])
def test_paged_and_fp8_caches(page, layout, fp8):
    b = Batch(seed=2, dtype="bf16", page=page, layout=layout, start_cols=True, fp8=fp8, prefix=(37, 0, 9))
    o = xattn.extend_attention(*b.args(), **b.kwargs())
    check(o, b.oracle(), "bf16")


def test_strided_and_noncontiguous_views_are_used_in_place():
    b = Batch(seed=3)
    want = xattn.extend_attention(*b.args(), **b.kwargs())
    rng = np.random.default_rng(9)
    big = rng.standard_normal((b.q.shape[0], 2 * b.hq, b.d + 5)).astype(np.float32)
    big[:, ::2, :b.d] = b.q
    q = big[:, ::2, :b.d]                                    # every other head, padded rows
    kc = np.ascontiguousarray(b.kc.transpose(1, 0, 2)).transpose(1, 0, 2)  # head-major storage
    out_big = np.full((b.q.shape[0], b.hq, b.dv + 3), 7.0, np.float32)
    out = out_big[:, :, :b.dv]
    assert not q.flags.c_contiguous and not kc.flags.c_contiguous and not out.flags.c_contiguous
    args = list(b.args())
    args[0], args[3] = q, kc
    got = xattn.extend_attention(*args, out=out, **b.kwargs())
    assert got is out
    assert np.array_equal(out, want)                         # same kernels, same order: same bits
    assert np.all(out_big[:, :, b.dv:] == 7.0)               # padding untouched


def test_errors_carry_the_library_reason():
    b = Batch(seed=4)
    args = list(b.args())
    bad_index = np.array(b.req_index)
    bad_index[0] = 99
    with pytest.raises(xattn.XattnError, match=r"req_index\[0\]") as e:
        xattn.extend_attention(*args[:6], bad_index, *args[7:])
    assert e.value.status == "index" and "\n" not in str(e.value)
    with pytest.raises(xattn.XattnError, match="window_left"):
        xattn.extend_attention(*args, window=(-3, -1))
    with pytest.raises(xattn.XattnError, match="last dimension"):
        xattn.extend_attention(np.asfortranarray(b.q), *args[1:])
    with pytest.raises(xattn.XattnError, match="k_cache"):  # fp8 codes without cache_dtype
        xattn.extend_attention(*args[:3], b.kc.astype(np.uint8), *args[4:])
    with pytest.raises(xattn.XattnError, match="out: shape"):
        xattn.extend_attention(*args, out=np.zeros((1, 1, 1), np.float32))
    with pytest.raises(TypeError, match="unknown argument"):
        xattn.extend_attention(*args, windw=(1, 1))


def test_converted_arguments_give_the_same_bits():
    """Lists, int64 lengths, an int16 table, a row-strided table and torch-less
    __array_interface__ objects take the converting path (api._normalized);
    NumPy arrays of the call's own types go straight through. Same answer."""
    b = Batch(seed=21, prefix=(5, 0, 17), extend=(3, 7, 1))
    args = list(b.args())
    want = xattn.extend_attention(*args, **b.kwargs())

    class Wrapped:  # only __array_interface__
        def __init__(self, a):
            self.__array_interface__ = a.__array_interface__
            self.keep = a
    wide = np.zeros((b.table.shape[0], b.table.shape[1] + 3), np.int64)
    wide[:, :b.table.shape[1]] = b.table
    variants = [
        (2, wide[:, :b.table.shape[1]]),                  # row stride > width: made dense
        (2, b.table.astype(np.int16)),                     # another integer type
        (6, [int(x) for x in b.req_index]),                # a list
        (7, np.array(b.prefix, np.int64)),                 # int64 lengths
        (0, Wrapped(b.q)),                                 # __array_interface__ only
    ]
    for which, arg in variants:
        a = list(args)
        a[3 if which == 2 else which] = arg if which != 2 else b.kc
        if which == 2:
            a[5] = arg
        got = xattn.extend_attention(*a, **b.kwargs())
        assert np.array_equal(got, want), which


def test_int64_lengths_are_converted_in_the_call_module(monkeypatch):
    """NumPy's default integer for lengths (int64; the C API takes int32) and an
    int32 req_index (it takes int64) are converted in C, not by the slower
    converting path; a length that does not fit int32 is refused by name."""
    from xattn import api
    b = Batch(seed=25)
    want = xattn.extend_attention(*b.args(), **b.kwargs())
    args = list(b.args())
    args[6] = np.asarray(b.req_index, np.int32)
    args[7], args[8] = np.asarray(b.prefix, np.int64), np.asarray(b.extend, np.int64)
    kw = dict(b.kwargs(), dtype="f32")
    monkeypatch.setattr(api, "_normalized", lambda *a: pytest.fail("the converting path was taken"))
    assert np.array_equal(xattn.extend_attention(*args, **kw), want)
    args[7] = np.array([2 ** 40, 0, 0], np.int64)
    with pytest.raises(xattn.XattnError, match=r"prefix_lens\[0\]: 1099511627776 does not fit the C API's int32"):
        xattn.extend_attention(*args, **kw)


def test_refusals_of_the_call_module_name_the_field():
    b = Batch(seed=22)
    args = list(b.args())
    kw = b.kwargs()
    cases = [
        (dict(index=6, value=np.array(b.req_index[:1])), r"req_index: 1 entries, want 3 \(one per request\)", "shape"),
        (dict(index=0, value=b.q.astype(">f4")), "q: element type", "dtype"),
        (dict(index=0, value=b.q[..., None]), r"q: 4 dimensions \[", "shape"),
        (dict(index=3, value=b.kc.astype(np.float16)), "k_cache: element type differs from q's", "dtype"),
        (dict(index=1, value=b.k.astype(np.float64)), "k_ext: element type float64", "dtype"),
        (dict(index=5, value=b.table[0]), "req_to_token: 1 dimensions, want 2", "shape"),
        (dict(index=0, value=[[1.0]]), "q: a NumPy array or torch CPU tensor, not list", "null"),
    ]
    for case, pattern, status in cases:
        a = list(args)
        a[case["index"]] = case["value"]
        with pytest.raises(xattn.XattnError, match=pattern) as e:
            xattn.extend_attention(*a, **kw)
        assert e.value.status == status and "\n" not in str(e.value)
    out = np.zeros((sum(b.extend), b.hq, b.dv), np.float32)
    out.flags.writeable = False
    with pytest.raises(xattn.XattnError, match="out: read-only array"):
        xattn.extend_attention(*args, out=out, **kw)
    for key, value, pattern in (("encoder_lens", [1], "encoder_lens: 1 entries"), ("sinks", [0.0], "sinks: 1 entries"),
                                ("mode", "diagonal", "mode: 'diagonal'"), ("window", 3, "window: 3"),
                                ("schedule", "late", "schedule: 'late'"), ("dtype", "f64", "dtype: 'f64'")):
        with pytest.raises(xattn.XattnError, match=pattern):
            xattn.extend_attention(*args, **{**kw, key: value})
    with pytest.raises(TypeError, match="unknown argument.s. prefetchh, windw"):
        xattn.extend_attention(*args, windw=(1, 1), prefetchh=1)


def test_every_run_option_reaches_the_library():
    b = Batch(seed=23)
    want = xattn.extend_attention(*b.args(), **b.kwargs())
    info = xattn.info()
    got = xattn.extend_attention(*b.args(), **b.kwargs(), variant=info["variants"][0], layout="decode",
                                 isa="scalar", threads=1, schedule="static", kv_splits=2, prefetch=-1)
    check(got, b.oracle(), "f32")
    assert np.abs(got - want).max() < 1e-5
    into_l1 = xattn.extend_attention(*b.args(), **b.kwargs(), layout="decode", prefetch=1, prefetch_level=1)
    check(into_l1, b.oracle(), "f32")
    with pytest.raises(xattn.XattnError, match="isa") as e:
        xattn.extend_attention(*b.args(), **b.kwargs(), isa="z80")
    assert e.value.status == "unsupported"
    with pytest.raises(xattn.XattnError, match="prefetch_level") as e:  # reaches the library's check
        xattn.extend_attention(*b.args(), **b.kwargs(), prefetch_level=3)
    assert e.value.status == "unsupported"


def test_a_call_module_built_from_another_xattn_h_is_refused():
    """The C structs are filled by python/ext/xattn_call.c, compiled against
    xattn.h: no Python copy of their layout exists. What remains to catch is a
    call module and a library built from different headers: bind() compares
    sizeof(xattn_problem) / sizeof(xattn_options) with the library's."""
    from xattn import api
    api._load()
    ext = api._call.__self__
    lib = api._lib
    addr = [ctypes.cast(getattr(lib, "xattn_" + f), ctypes.c_void_p).value for f in
            ("extend_attention", "reference", "resolve", "last_error", "status_name", "problem_init",
             "options_init", "problem_size", "options_size")]
    real = ctypes.CFUNCTYPE(ctypes.c_size_t)(addr[7])()
    wrong = ctypes.CFUNCTYPE(ctypes.c_size_t)(lambda: real + 8)
    with pytest.raises(ImportError, match="different versions of xattn.h"):
        ext.bind(*addr[:7], ctypes.cast(wrong, ctypes.c_void_p).value, addr[8], xattn.XattnError)
    ext.bind(*addr, xattn.XattnError)  # the real pair binds
    b = Batch(seed=24)
    check(xattn.extend_attention(*b.args(), **b.kwargs()), b.oracle(), "f32")


def test_the_overhead_benchmark_command_runs():
    """`python3 -m xattn binding-overhead` (bench/README.md's figure): runs and
    prints its figures; what they are is not tested (speed is benchmarked)."""
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(xattn.__file__))))
    r = subprocess.run([sys.executable, "-m", "xattn", "binding-overhead", "--prefix", "16", "--reps", "20",
                        "--clock", "cpu"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    for figure in ("python  median", "c       median", "noop    median", "binding overhead over the C call"):
        assert figure in r.stdout, r.stdout


def test_resolve_and_info():
    b = Batch(seed=5)
    info = xattn.info()
    assert info["best_isa"] in info["runnable_isas"] and info["variants"] and os.path.exists(info["library"])
    r = xattn.resolve(*b.args(), variant=info["variants"][0], isa="scalar", threads=1)
    assert r == {"variant": info["variants"][0], "layout": r["layout"], "isa": "scalar", "threads": 1}
    with pytest.raises(xattn.XattnError, match="isa"):
        xattn.resolve(*b.args(), isa="z80")


def test_many_calls_keep_memory_and_refcounts_flat():
    b = Batch(seed=6, prefix=(3,), extend=(2,), encoder=(1,))
    args = b.args()
    out = np.zeros((2, b.hq, b.dv), np.float32)
    refs = [__import__("sys").getrefcount(x) for x in (b.q, b.kc, out)]

    def rss_kib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024

    for _ in range(300):
        xattn.extend_attention(*args, out=out)
    gc.collect()
    before = rss_kib()
    for _ in range(3000):
        xattn.extend_attention(*args, out=out)
        try:
            xattn.extend_attention(*args, out=out, window=(-5, -1))
        except xattn.XattnError:
            pass
    gc.collect()
    grown = rss_kib() - before
    assert grown < 2048, f"RSS grew by {grown} KiB over 6000 calls"
    assert [__import__("sys").getrefcount(x) for x in (b.q, b.kc, out)] == refs


def test_the_gil_is_released_during_the_kernel():
    """While one thread is inside a long C call, another thread runs Python:
    with the GIL held it could not run a single bytecode until the call returned."""
    b = Batch(seed=7, prefix=(2000, 1000), extend=(128, 128), encoder=(1, 1), hq=8, hkv=2, d=64, dv=64)
    args, kw = b.args(), b.kwargs()
    kw.update(isa="scalar", threads=1)  # slow on purpose: a long call
    started, done, spins = threading.Event(), threading.Event(), [0]

    def call():
        started.set()
        xattn.extend_attention(*args, **kw)
        done.set()

    t = threading.Thread(target=call)
    t.start()
    started.wait()
    while not done.is_set():
        spins[0] += 1
    t.join()
    assert spins[0] > 10000, f"the main thread ran {spins[0]} loop iterations during the call"


def test_two_threads_call_at_once_and_agree():
    b1, b2 = Batch(seed=8), Batch(seed=9, mode="bidirectional")
    want = [xattn.extend_attention(*b.args(), **b.kwargs()) for b in (b1, b2)]
    errors = []

    def worker(b, w):
        for _ in range(50):
            o = xattn.extend_attention(*b.args(), **b.kwargs(), threads=1)
            if not np.array_equal(o, w):
                errors.append("different answer")
        try:
            xattn.extend_attention(*b.args(), window=(-2, -1))
        except xattn.XattnError as e:  # the error line is per thread
            if "window_left" not in str(e):
                errors.append(str(e))

    ts = [threading.Thread(target=worker, args=(b, w)) for b, w in ((b1, want[0]), (b2, want[1]))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_sglang_adapter():
    from xattn.adapters import extend_attention_cpu
    b = Batch(seed=10, dtype="f32")
    T = sum(b.extend)
    o = np.zeros((T, b.hq, b.dv), np.float32)
    seq = np.array(b.prefix) + np.array(b.extend)
    start = np.concatenate([[0], np.cumsum(b.extend)[:-1]])
    r = extend_attention_cpu(b.q, b.k, b.v, o, b.kc, b.vc, b.table, b.req_index, seq, np.array(b.extend),
                             start, max(b.extend), b.d ** -0.5, 0.0)
    assert r is o
    check(o, b.oracle(), "f32")
    # encoder-decoder: the decoder reads its prefix after the encoder's columns
    e = Batch(seed=11, dtype="f32", start_cols=True)
    o2 = np.zeros_like(o)
    extend_attention_cpu(e.q, e.k, e.v, o2, e.kc, e.vc, e.table, e.req_index, seq, np.array(e.extend), start,
                         max(e.extend), e.d ** -0.5, 0.0, req_start_col=e.cols)
    check(o2, e.oracle(), "f32")


def test_ipex_adapter_reads_every_key_from_the_paged_cache():
    """IPEX layout: [blocks, H_KV, block, D]; the new tokens' keys are already in
    the cache, so the answer equals a causal call whose extend keys are those
    cache rows (built here by gathering them out of the cache)."""
    from xattn.adapters import flash_attn_varlen_func
    b = Batch(seed=12, dtype="f32", page=4, layout="head_major", prefix=(6, 0, 9), extend=(3, 5, 2))
    # the keys of request r's positions P..P+E-1 live in the cache after its prefix: extend the table
    kv = np.array(b.prefix) + np.array(b.extend)
    blocks = b.kc.shape[0]
    need = [(-(-int(n) // 4)) for n in kv]
    kc = np.concatenate([b.kc, np.zeros((sum(need), b.hkv, 4, b.d), np.float32)])
    vc = np.concatenate([b.vc, np.zeros((sum(need), b.hkv, 4, b.dv), np.float32)])
    table = np.zeros((len(kv), max(need)), np.int32)
    nxt, t0 = blocks, 0
    for r in range(len(kv)):
        for j in range(kv[r]):
            if j % 4 == 0:
                table[r, j // 4] = nxt
                nxt += 1
            blk, i = table[r, j // 4], j % 4
            if j < b.prefix[r]:
                src = b.table[b.req_index[r], j // 4], j % 4
                kc[blk, :, i], vc[blk, :, i] = b.kc[src[0], :, src[1]], b.vc[src[0], :, src[1]]
            else:
                kc[blk, :, i], vc[blk, :, i] = b.k[t0 + j - b.prefix[r]], b.v[t0 + j - b.prefix[r]]
        t0 += b.extend[r]
    out = np.zeros((sum(b.extend), b.hq, b.dv), np.float32)
    cu_q = np.concatenate([[0], np.cumsum(b.extend)]).astype(np.int32)
    cu_kv = np.concatenate([[0], np.cumsum(kv)]).astype(np.int32)
    flash_attn_varlen_func(out, b.q, kc, vc, cu_q, cu_kv, max(b.extend), max(kv), b.d ** -0.5, True, table)
    check(out, b.oracle(), "f32")


# ---- torch (the venv of scripts/make-venv.sh) ------------------------------------------
@pytest.mark.parametrize("fn", TORCH_CHECKS, ids=lambda f: f.__name__)
def test_torch(fn):
    torch = pytest.importorskip("torch", reason="torch is not installed in this Python "
                                "(ctest peers.binding_torch runs these checks in the venv of scripts/make-venv.sh)")
    fn(torch)
