"""The compiled library from Python: xattn.extend_attention() and friends.

    import xattn
    o = xattn.extend_attention(q, k_ext, v_ext, k_cache, v_cache, req_to_token,
                               req_index, prefix_lens, extend_lens, mode="causal")

Tensors are NumPy arrays or torch CPU tensors (anything with __array_interface__
works too), used in place: no copy is made, strides are honoured (element
strides; only the last dimension must have stride 1, as in the C API), so views
and non-contiguous slices go straight to the kernels. bf16 is torch.bfloat16 or
a NumPy uint16 array of bf16 bit patterns with dtype="bf16"; fp8 caches are
torch.float8_e4m3fn / float8_e5m2 tensors or NumPy uint8 arrays with
cache_dtype="e4m3fn" / "e5m2". Small integer arrays (lengths, req_index) are
converted when their dtype differs (a copy of B numbers).

The call goes through ctypes, which releases the GIL while the C function
runs: two Python threads run two calls at once. A refused call raises
XattnError (a ValueError) carrying the library's one-line reason.

The library is found at $XATTN_LIBRARY, next to this file (pip install .), or
in the build trees of the source checkout (build/*/lib/libxattn.so).
The semantics of every argument are those of the C API (kernels/include/xattn/xattn.h,
docs/contract.md).
"""
import ctypes
import glob
import os
import threading

import numpy as np  # the binding needs it; `import xattn` alone does not load this module

__all__ = ["XattnError", "extend_attention", "reference", "resolve", "info", "library_path"]


class XattnError(ValueError):
    """A call the library refused; str() is its one-line reason. .status is the
    C status name ("shape", "index", ...)."""

    def __init__(self, message, status="error"):
        super().__init__(message)
        self.status = status


# ---- the C structs (kernels/include/xattn/xattn.h), checked against the library ----
_P = ctypes.c_void_p
_I32, _I64, _F32 = ctypes.c_int32, ctypes.c_int64, ctypes.c_float


class _Tensor(ctypes.Structure):
    _fields_ = [("data", _P), ("token_stride", _I64), ("head_stride", _I64)]


class _Problem(ctypes.Structure):
    _fields_ = [
        ("batch", _I32), ("prefix_lens", _P), ("extend_lens", _P), ("extend_start", _P),
        ("encoder_lens", _P), ("total_tokens", _I64),
        ("heads_q", _I32), ("heads_kv", _I32), ("head_dim", _I32), ("head_dim_v", _I32),
        ("dtype", ctypes.c_int),
        ("q", _Tensor), ("k_ext", _Tensor), ("v_ext", _Tensor), ("k_cache", _Tensor), ("v_cache", _Tensor),
        ("cache_slots", _I64), ("cache_dtype", ctypes.c_int), ("k_scale", _F32), ("v_scale", _F32),
        ("k_scales", _P), ("v_scales", _P),
        ("o", _P), ("o_token_stride", _I64), ("o_head_stride", _I64),
        ("req_to_token", _P), ("req_to_token_type", ctypes.c_int), ("max_reqs", _I64), ("max_ctx", _I64),
        ("req_index", _P), ("req_start_col", _P),
        ("page_size", _I32), ("cache_layout", ctypes.c_int),
        ("k_cache_block_stride", _I64), ("v_cache_block_stride", _I64),
        ("scale", _F32), ("logit_cap", _F32), ("sinks", _P),
        ("mode", ctypes.c_int), ("align", ctypes.c_int), ("window_left", _I32), ("window_right", _I32),
        ("tree_mask", _P), ("tree_max_extend", _I32),
    ]


class _Options(ctypes.Structure):
    _fields_ = [("variant", ctypes.c_char_p), ("layout", ctypes.c_char_p), ("isa", ctypes.c_char_p),
                ("threads", ctypes.c_int), ("schedule", ctypes.c_int), ("kv_splits", ctypes.c_int)]


_DTYPES = {"f32": 0, "bf16": 1, "f16": 2, "e4m3fn": 3, "e5m2": 4}
_MODES = {"causal": 0, "bidirectional": 1, "cross": 2, "tree": 3}
_ALIGNS = {"bottom_right": 0, "top_left": 1}
_CACHE_LAYOUTS = {"token_major": 0, "head_major": 1}
_SCHEDULES = {"auto": 0, "static": 1, "dynamic": 2}
_STATUS = ["ok", "null", "shape", "index", "stride", "mode", "dtype", "unsupported", "nomem", "io"]
_ITEMSIZE = {0: 4, 1: 2, 2: 2, 3: 1, 4: 1}

_lib = None
_lib_lock = threading.Lock()


def library_path():
    """Where libxattn.so is taken from (see the module docstring)."""
    env = os.environ.get("XATTN_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "libxattn.so")
    if os.path.exists(local):
        return local
    repo = os.path.dirname(os.path.dirname(here))
    found = sorted(glob.glob(os.path.join(repo, "build", "*", "lib", "libxattn.so")), key=os.path.getmtime)
    if found:
        return found[-1]
    raise ImportError("xattn: libxattn.so not found: set XATTN_LIBRARY, build the project "
                      "(cmake --build build/release) or `pip install .`")


def _load():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        lib = ctypes.CDLL(library_path())
        lib.xattn_extend_attention.argtypes = [ctypes.POINTER(_Problem), ctypes.POINTER(_Options)]
        lib.xattn_extend_attention.restype = ctypes.c_int
        lib.xattn_reference.argtypes = [ctypes.POINTER(_Problem), _P]
        lib.xattn_reference.restype = ctypes.c_int
        lib.xattn_resolve.argtypes = [ctypes.POINTER(_Problem), ctypes.POINTER(_Options)] + \
            [ctypes.POINTER(ctypes.c_char_p)] * 3 + [ctypes.POINTER(ctypes.c_int)]
        lib.xattn_resolve.restype = ctypes.c_int
        lib.xattn_last_error.restype = ctypes.c_char_p
        lib.xattn_problem_init.argtypes = [ctypes.POINTER(_Problem)]
        lib.xattn_visible_pairs.argtypes = [ctypes.POINTER(_Problem)]
        lib.xattn_visible_pairs.restype = ctypes.c_int64
        for name in ("xattn_isa_name", "xattn_variant_name", "xattn_layout_name"):
            getattr(lib, name).restype = ctypes.c_char_p
            getattr(lib, name).argtypes = [ctypes.c_int]
        for name in ("xattn_best_isa", "xattn_config_header_path", "xattn_config_provenance"):
            getattr(lib, name).restype = ctypes.c_char_p
        lib.xattn_isa_runnable.argtypes = [ctypes.c_char_p]
        lib.xattn_problem_size.restype = ctypes.c_size_t
        lib.xattn_options_size.restype = ctypes.c_size_t
        if lib.xattn_problem_size() != ctypes.sizeof(_Problem) or lib.xattn_options_size() != ctypes.sizeof(_Options):
            raise ImportError(f"xattn: {library_path()}: xattn_problem is {lib.xattn_problem_size()} bytes, "
                              f"this binding mirrors {ctypes.sizeof(_Problem)}: update python/xattn/api.py")
        probe = _Problem()
        lib.xattn_problem_init(ctypes.byref(probe))
        if (probe.window_left, probe.scale, probe.page_size, probe.cache_dtype, probe.k_scale) != (-1, 1.0, 1, -1, 1.0):
            raise ImportError(f"xattn: {library_path()}: xattn_problem's field layout differs from "
                              "python/xattn/api.py's copy")
        _lib = lib
        return lib


def _fail(lib, status):
    name = _STATUS[status] if 0 <= status < len(_STATUS) else str(status)
    raise XattnError(lib.xattn_last_error().decode(), name)


# ---- tensors -------------------------------------------------------------------------
_TORCH_DTYPES = {"float32": 0, "bfloat16": 1, "float16": 2, "float8_e4m3fn": 3, "float8_e5m2": 4}
_NP_DTYPES = {"<f4": 0, "<f2": 2, "<u2": 1, "|u1": None}  # u2: bf16 bits; u1: fp8 codes


# The data pointer of a NumPy array without building __array_interface__ or
# .ctypes (each ~2 us, a dozen per call): PyArrayObject's first field after the
# object header is `char *data` (numpy/ndarraytypes.h, PyArrayObject_fields).
# Checked against .ctypes.data once; _ptr falls back to it if the layout differs.
_HEAD = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
_from_address = ctypes.c_void_p.from_address
_fast_ptr = None


def _ptr(a):
    global _fast_ptr
    if _fast_ptr is None:
        probe = np.arange(3.0)
        _fast_ptr = _from_address(id(probe) + _HEAD).value == probe.ctypes.data
    if _fast_ptr:
        return _from_address(id(a) + _HEAD).value or 0
    return a.ctypes.data


_NP_CODES = {"<f4": (0, 4), "<f2": (2, 2), "<u2": (1, 2), "|u1": (None, 1)}


def _view(name, t, ndim, want_dtype=None, want_itemsize=None, want_what=""):
    """(data pointer, shape, element strides, library dtype code or None) of a
    NumPy array / torch CPU tensor / __array_interface__ object, without a copy."""
    if type(t) is np.ndarray:  # the fast path
        code = _NP_CODES.get(t.dtype.str)
        if code is None:
            raise XattnError(f"{name}: element type {t.dtype}, want float32, float16, uint16 (bf16 bits) "
                             "or uint8 (fp8 codes)", "dtype")
        dt, size = code
        shape, ptr, strides = t.shape, _ptr(t), t.strides
        if size > 1:
            if any([x % size for x in strides]):
                raise XattnError(f"{name}: byte strides {strides} are not multiples of the element size", "stride")
            strides = [x // size for x in strides]
    elif hasattr(t, "data_ptr") and hasattr(t, "stride"):  # torch
        if t.device.type != "cpu":
            raise XattnError(f"{name}: on {t.device}, want a CPU tensor", "null")
        dt = _TORCH_DTYPES.get(str(t.dtype).replace("torch.", ""))
        shape, strides, ptr, size = tuple(t.shape), tuple(t.stride()), t.data_ptr(), t.element_size()
    else:
        ai = getattr(t, "__array_interface__", None)
        if ai is None:
            raise XattnError(f"{name}: a NumPy array or torch CPU tensor, not {type(t).__name__}", "null")
        ts = ai["typestr"]
        if ts not in _NP_DTYPES:
            raise XattnError(f"{name}: element type {ts}, want float32, float16, uint16 (bf16 bits) "
                             "or uint8 (fp8 codes)", "dtype")
        dt = _NP_DTYPES[ts]
        size = int(ts[2:])
        shape, ptr = tuple(ai["shape"]), ai["data"][0]
        strides = ai.get("strides")
        if strides is None:  # C-contiguous
            acc, el = 1, []
            for n in reversed(shape):
                el.append(acc)
                acc *= n
            strides = tuple(reversed(el))
        else:
            if any(s % size for s in strides):
                raise XattnError(f"{name}: byte strides {strides} are not multiples of the element size", "stride")
            strides = tuple(s // size for s in strides)
        if ts == "<u2" and want_dtype not in (None, 1):
            dt = None
    if len(shape) != ndim:
        raise XattnError(f"{name}: {len(shape)} dimensions {list(shape)}, want {ndim}", "shape")
    if shape[-1] > 1 and strides[-1] != 1:
        raise XattnError(f"{name}: the last dimension has stride {strides[-1]}; it must be contiguous (stride 1)",
                         "stride")
    if want_itemsize is not None and size != want_itemsize:
        raise XattnError(f"{name}: {size}-byte elements, want {want_itemsize} ({want_what})", "dtype")
    return ptr, shape, strides, dt


def _fast3(t, code):
    """The common case in one step: a 3-D NumPy array of library dtype `code`
    whose last dimension is contiguous -> (_Tensor, shape); None otherwise
    (then _view checks everything and says what is wrong)."""
    if type(t) is not np.ndarray or t.ndim != 3:
        return None
    c = _NP_CODES.get(t.dtype.str)
    if c is None or c[0] != code:
        return None
    size = c[1]
    s0, s1, s2 = t.strides
    if (s2 != size and t.shape[2] > 1) or s0 % size or s1 % size:
        return None
    return _Tensor(_ptr(t), s0 // size, s1 // size), t.shape


def _ints(name, x, np_dtype):
    """A small integer array as a C array of np_dtype (converted if needed; kept alive by the caller)."""
    if hasattr(x, "numpy") and hasattr(x, "device"):  # torch: zero-copy view on CPU
        x = x.numpy()
    a = np.ascontiguousarray(x, dtype=np_dtype)
    if a.ndim != 1:
        raise XattnError(f"{name}: {a.ndim} dimensions, want 1", "shape")
    return a


def _floats(name, x):
    if hasattr(x, "numpy") and hasattr(x, "device"):
        x = x.numpy()
    return np.ascontiguousarray(x, dtype=np.float32)


class _Call:
    """A filled xattn_problem plus every object it points into (kept alive for the call)."""

    def __init__(self):
        self.p = _Problem()
        self.keep = []

    def ptr_of(self, a):
        self.keep.append(a)
        return _ptr(a)


def _build(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens, out, kw):
    lib = _load()
    c = _Call()
    p = c.p
    lib.xattn_problem_init(ctypes.byref(p))
    dtype = kw.pop("dtype", None)
    want = _DTYPES.get(dtype) if dtype is not None else None
    if dtype is not None and want not in (0, 1, 2):
        raise XattnError(f"dtype: {dtype!r}, want 'f32', 'bf16' or 'f16'", "dtype")
    fast = _fast3(q, 0 if want is None else want)
    if fast is not None:  # f32 (or the dtype asked for) in one step
        qp, qs, qst, qdt = fast[0].data, fast[1], (fast[0].token_stride, fast[0].head_stride), (0 if want is None else want)
    else:
        qp, qs, qst, qdt = _view("q", q, 3, want)
    if qdt is None and want is None:
        raise XattnError("q: uint16 data needs dtype='bf16' (NumPy has no bf16)", "dtype")
    p.dtype = want if want is not None else qdt
    if want is not None and qdt is not None and qdt != want:
        raise XattnError(f"q: element type does not match dtype={dtype!r}", "dtype")
    if p.dtype not in (0, 1, 2):
        raise XattnError("q: element type is an fp8 format; q, k_ext, v_ext and out are f32, bf16 or f16", "dtype")
    size = _ITEMSIZE[p.dtype]
    what = ("f32", "bf16", "f16")[p.dtype]
    T, hq, d = qs
    p.total_tokens, p.heads_q, p.head_dim = T, hq, d
    p.q = _Tensor(qp, qst[0], qst[1])
    mode = kw.pop("mode", "causal")
    if mode not in _MODES:
        raise XattnError(f"mode: {mode!r}, want one of {sorted(_MODES)}", "mode")
    p.mode = _MODES[mode]
    for name, t, which in (("k_ext", k_ext, "k"), ("v_ext", v_ext, "v")):
        if t is None:
            continue
        fast = _fast3(t, p.dtype)
        if fast is not None:
            setattr(p, name, fast[0])
            if which == "k":
                p.heads_kv = fast[1][1]
            else:
                p.head_dim_v = fast[1][2]
            continue
        tp, ts, tst, tdt = _view(name, t, 3, p.dtype, size, what)
        if tdt is not None and tdt != p.dtype:
            raise XattnError(f"{name}: element type differs from q's", "dtype")
        setattr(p, name, _Tensor(tp, tst[0], tst[1]))
        if which == "k":
            p.heads_kv = ts[1]
        else:
            p.head_dim_v = ts[2]
    # the cache: [slots, H, D] (slot table) or [blocks, page, H, D] / [blocks, H, page, D]
    layout = kw.pop("cache_layout", "token_major")
    if layout not in _CACHE_LAYOUTS:
        raise XattnError(f"cache_layout: {layout!r}, want 'token_major' or 'head_major'", "mode")
    p.cache_layout = _CACHE_LAYOUTS[layout]
    cache_dtype = kw.pop("cache_dtype", None)
    if cache_dtype is not None:
        if cache_dtype not in _DTYPES:
            raise XattnError(f"cache_dtype: {cache_dtype!r}, want 'e4m3fn' or 'e5m2'", "dtype")
        p.cache_dtype = _DTYPES[cache_dtype]
    for name, t, v in (("k_cache", k_cache, 0), ("v_cache", v_cache, 1)):
        if t is None:
            continue
        fast = _fast3(t, p.dtype) if p.cache_dtype == -1 and layout == "token_major" else None
        if fast is not None:  # a slot table in q's dtype
            setattr(p, name, fast[0])
            p.cache_slots = fast[1][0]
            if k_ext is None:
                if v == 0:
                    p.heads_kv = fast[1][1]
                else:
                    p.head_dim_v = fast[1][2]
            continue
        ndim = len(t.shape)
        if ndim not in (3, 4):
            raise XattnError(f"{name}: {ndim} dimensions {list(t.shape)}, want 3 (slots) or 4 (paged)", "shape")
        tp, ts, tst, tdt = _view(name, t, ndim)
        if tdt in (3, 4):  # torch fp8 tensors say their format
            if cache_dtype is not None and _DTYPES[cache_dtype] != tdt:
                raise XattnError(f"{name}: {t.dtype} but cache_dtype={cache_dtype!r}", "dtype")
            p.cache_dtype = tdt
        elif tdt is not None and tdt != p.dtype:
            raise XattnError(f"{name}: element type differs from q's (fp8 caches: cache_dtype=)", "dtype")
        eff = p.cache_dtype if p.cache_dtype in (3, 4) else p.dtype
        isz = t.itemsize if hasattr(t, "itemsize") else t.element_size()
        if isz != _ITEMSIZE[eff]:
            raise XattnError(f"{name}: {isz}-byte elements, want {_ITEMSIZE[eff]} "
                             f"({'an fp8 code' if eff in (3, 4) else what})", "dtype")
        if ndim == 3:
            p.cache_slots, heads, dim = ts
            ten = _Tensor(tp, tst[0], tst[1])
            bs = 0
        elif layout == "head_major":
            p.cache_slots, heads, p.page_size, dim = ts
            ten, bs = _Tensor(tp, tst[2], tst[1]), tst[0]
        else:
            p.cache_slots, p.page_size, heads, dim = ts
            ten, bs = _Tensor(tp, tst[1], tst[2]), tst[0]
        setattr(p, name, ten)
        setattr(p, name[0] + "_cache_block_stride", bs)
        if k_ext is None:
            if v == 0:
                p.heads_kv = heads
            else:
                p.head_dim_v = dim
    if v_ext is None and v_cache is None:
        p.head_dim_v = d
    # token table
    tt = req_to_token
    if hasattr(tt, "numpy") and hasattr(tt, "device"):
        tt = tt.numpy()
    tt = np.asarray(tt)
    if tt.dtype not in (np.int32, np.int64):
        tt = tt.astype(np.int64)
    if tt.ndim != 2 or tt.strides[1] != tt.itemsize or tt.strides[0] % tt.itemsize:
        tt = np.ascontiguousarray(tt)
    c.keep.append(tt)
    p.req_to_token = _ptr(tt)
    p.req_to_token_type = 1 if tt.dtype == np.int64 else 0
    p.max_reqs, p.max_ctx = tt.shape[0], tt.strides[0] // tt.itemsize  # a row stride > width is fine
    if p.max_ctx != tt.shape[1] and tt.shape[0] > 0:
        # the C API has no table row stride: a row-strided table must be dense
        tt = np.ascontiguousarray(tt)
        c.keep.append(tt)
        p.req_to_token, p.max_ctx = _ptr(tt), tt.shape[1]
    pl = _ints("prefix_lens", prefix_lens, np.int32)
    el = _ints("extend_lens", extend_lens, np.int32)
    if len(pl) != len(el):
        raise XattnError(f"extend_lens: {len(el)} entries but prefix_lens has {len(pl)}", "shape")
    p.batch = len(pl)
    p.prefix_lens, p.extend_lens = c.ptr_of(pl), c.ptr_of(el)
    p.req_index = c.ptr_of(_ints("req_index", req_index, np.int64))
    for key, typ in (("extend_start", np.int32), ("encoder_lens", np.int32), ("req_start_col", np.int64)):
        x = kw.pop(key, None)
        if x is not None:
            setattr(p, key, c.ptr_of(_ints(key, x, typ)))
    for key in ("sinks", "k_scales", "v_scales"):
        x = kw.pop(key, None)
        if x is not None:
            setattr(p, key, c.ptr_of(_floats(key, x)))
    tree = kw.pop("tree_mask", None)
    if tree is not None:
        if hasattr(tree, "numpy") and hasattr(tree, "device"):
            tree = tree.numpy()
        tree = np.ascontiguousarray(tree, dtype=np.uint8)
        if tree.ndim != 3 or tree.shape[1] != tree.shape[2]:
            raise XattnError(f"tree_mask: shape {list(tree.shape)}, want [B, max_E, max_E]", "shape")
        p.tree_mask, p.tree_max_extend = c.ptr_of(tree), tree.shape[1]
    scale = kw.pop("scale", None)
    p.scale = d ** -0.5 if scale is None else scale
    p.logit_cap = kw.pop("logit_cap", 0.0) or 0.0
    align = kw.pop("align", "bottom_right")
    if align not in _ALIGNS:
        raise XattnError(f"align: {align!r}, want 'bottom_right' or 'top_left'", "mode")
    p.align = _ALIGNS[align]
    p.window_left, p.window_right = kw.pop("window", (-1, -1))
    p.k_scale = kw.pop("k_scale", 1.0)
    p.v_scale = kw.pop("v_scale", 1.0)
    if "page_size" in kw:
        ps = kw.pop("page_size")
        if ps is not None:
            p.page_size = ps
    o = _Options()
    o.variant, o.layout, o.isa = (_enc(kw.pop(k, None)) for k in ("variant", "layout", "isa"))
    o.threads = kw.pop("threads", 0) or 0
    sched = kw.pop("schedule", "auto")
    if sched not in _SCHEDULES:
        raise XattnError(f"schedule: {sched!r}, want 'auto', 'static' or 'dynamic'", "mode")
    o.schedule = _SCHEDULES[sched]
    o.kv_splits = kw.pop("kv_splits", 0) or 0
    if kw:
        raise TypeError(f"extend_attention: unknown argument(s) {', '.join(sorted(kw))}")
    return lib, c, o


def _enc(s):
    return s.encode() if isinstance(s, str) else s


def _out_for(c, q, out):
    """Binds the output (given, or a new array like q's kind) into the problem."""
    p = c.p
    T, hq, dv = p.total_tokens, p.heads_q, p.head_dim_v
    if out is None:
        if hasattr(q, "data_ptr"):
            import torch
            out = torch.zeros((T, hq, dv), dtype=q.dtype)
        else:
            out = np.zeros((T, hq, dv), dtype=np.asarray(q).dtype)
    fast = _fast3(out, p.dtype)
    if fast is not None:
        op, os_, ost = fast[0].data, fast[1], (fast[0].token_stride, fast[0].head_stride)
    else:
        op, os_, ost, odt = _view("out", out, 3, p.dtype, _ITEMSIZE[p.dtype], ("f32", "bf16", "f16")[p.dtype])
        if odt is not None and odt != p.dtype:
            raise XattnError("out: element type differs from q's", "dtype")
    if tuple(os_) != (T, hq, dv):
        raise XattnError(f"out: shape {list(os_)}, want [{T}, {hq}, {dv}]", "shape")
    if hasattr(out, "flags") and not out.flags.writeable:
        raise XattnError("out: read-only array", "null")
    p.o, p.o_token_stride, p.o_head_stride = op, ost[0], ost[1]
    c.keep.append(out)
    return out


def extend_attention(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens,
                     extend_lens, *, out=None, **options):
    """o[t, h, :] for every extend token of the batch (the C API's xattn_extend_attention).

    q [T, H_Q, D], k_ext [T, H_KV, D], v_ext [T, H_KV, DV] (None in cross mode),
    k_cache / v_cache [slots, H_KV, D] or paged [blocks, page, H_KV, D]
    (cache_layout="token_major") / [blocks, H_KV, page, D] ("head_major"),
    req_to_token [max_reqs, max_ctx] int32/int64 (slots, or blocks when paged),
    req_index, prefix_lens, extend_lens [B]. Keyword options: out, dtype ("bf16"
    for NumPy uint16 data), mode, align, window=(left, right), scale (default
    1/sqrt(D)), logit_cap, sinks, tree_mask, extend_start, encoder_lens,
    req_start_col, cache_dtype, k_scale, v_scale, k_scales, v_scales,
    variant, layout, isa, threads, schedule, kv_splits.
    Returns out (a new array/tensor like q when not given)."""
    lib, c, o = _build(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens,
                       extend_lens, out, options)
    out = _out_for(c, q, out)
    st = lib.xattn_extend_attention(ctypes.byref(c.p), ctypes.byref(o))  # GIL released by ctypes
    if st:
        _fail(lib, st)
    return out


def reference(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens,
              **options):
    """The fp64 reference (xattn_reference) of the same call: a float64 [T, H_Q, DV] NumPy array."""
    for k in ("variant", "layout", "isa", "threads", "schedule", "kv_splits"):
        options.pop(k, None)
    lib, c, o = _build(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens,
                       extend_lens, None, options)
    ref = np.zeros((c.p.total_tokens, c.p.heads_q, c.p.head_dim_v), dtype=np.float64)
    st = lib.xattn_reference(ctypes.byref(c.p), ctypes.c_void_p(ref.ctypes.data))
    if st:
        _fail(lib, st)
    return ref


def resolve(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens,
            **options):
    """What a call with these arguments would run: dict(variant, layout, isa, threads)."""
    options.pop("out", None)
    lib, c, o = _build(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens,
                       extend_lens, None, options)
    c.p.o, c.p.o_token_stride, c.p.o_head_stride = 1, c.p.heads_q * c.p.head_dim_v, c.p.head_dim_v  # not written
    v, l, i = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
    th = ctypes.c_int()
    st = lib.xattn_resolve(ctypes.byref(c.p), ctypes.byref(o), ctypes.byref(v), ctypes.byref(l),
                           ctypes.byref(i), ctypes.byref(th))
    if st:
        _fail(lib, st)
    return {"variant": v.value.decode(), "layout": l.value.decode(), "isa": i.value.decode(), "threads": th.value}


def info():
    """What the loaded library has: ISAs (runnable here or not), variants, layouts, config header."""
    lib = _load()
    isas = [lib.xattn_isa_name(i).decode() for i in range(lib.xattn_isa_count())]
    return {
        "library": library_path(),
        "isas": isas,
        "runnable_isas": [n for n in isas if lib.xattn_isa_runnable(n.encode())],
        "best_isa": lib.xattn_best_isa().decode(),
        "variants": [lib.xattn_variant_name(i).decode() for i in range(lib.xattn_variant_count())],
        "layouts": [lib.xattn_layout_name(i).decode() for i in range(lib.xattn_layout_count())],
        "config_header": lib.xattn_config_header_path().decode(),
        "config_provenance": lib.xattn_config_provenance().decode(),
    }
