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
cache_dtype="e4m3fn" / "e5m2". Small integer arrays (lengths, req_index, the
token table) are converted when their dtype or layout differs (a copy of a few
numbers; int32 lengths, int64 req_index and a C-contiguous int32/int64 table
are used in place).

The call path is the C module _xattn_call (python/ext/xattn_call.c): it fills
the library's xattn_problem from the arrays' buffers, or from torch tensors'
data_ptr()/stride() once torch is in use (the struct comes from
xattn.h itself; Python holds no copy of its layout) and calls the library
with the GIL released, so two Python threads run two calls at once. The
library itself is loaded here with ctypes and its functions handed to that
module. A refused call raises XattnError (a ValueError) carrying the
library's one-line reason.

The library is found at $XATTN_LIBRARY, next to this file (pip install .), or
in the newest build tree of the source checkout (build/*/lib/libxattn.so)
that is not a sanitizer build; the call
module is the _xattn_call*.so next to it, built for this Python.
The semantics of every argument are those of the C API (kernels/include/xattn/xattn.h,
docs/contract.md).
"""
import ctypes
import glob
import importlib.machinery
import importlib.util
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


_lib = None
_call = None  # _xattn_call.call once loaded
_lib_lock = threading.Lock()
RUN, REFERENCE, RESOLVE, PREPARE = 0, 1, 2, 3  # _xattn_call.call's first argument


def library_path():
    """Where libxattn.so is taken from (see the module docstring)."""
    env = os.environ.get("XATTN_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "libxattn.so")
    if os.path.exists(local):
        return local
    return checkout_library(os.path.dirname(os.path.dirname(here)))


_SANITIZER_RUNTIMES = (b"libasan.so", b"libubsan.so", b"libtsan.so", b"liblsan.so")


def _needs_sanitizer_runtime(path):
    """True when the library names a sanitizer runtime among its needed
    libraries: loaded into a Python that did not preload that runtime, ASan
    aborts the whole process (no exception to catch), so such a build is never
    picked by itself."""
    with open(path, "rb") as f:
        data = f.read()
    return any(name in data for name in _SANITIZER_RUNTIMES)


def checkout_library(repo):
    """The newest build/*/lib/libxattn.so of a source checkout that is not a
    sanitizer build (scripts/test.sh builds build/release and build/sanitize)."""
    found = sorted(glob.glob(os.path.join(repo, "build", "*", "lib", "libxattn.so")), key=os.path.getmtime)
    usable = [p for p in found if not _needs_sanitizer_runtime(p)]
    if usable:
        return usable[-1]
    skipped = f" (skipped sanitizer builds: {', '.join(found)})" if found else ""
    raise ImportError(f"xattn: libxattn.so not found{skipped}: set XATTN_LIBRARY, build the project "
                      "(cmake --build build/release) or `pip install .`")


def _call_module(folder):
    """The _xattn_call extension built for this Python, from `folder`."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, "_xattn_call" + suffix)
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("xattn._xattn_call", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    others = [os.path.basename(p) for p in glob.glob(os.path.join(folder, "_xattn_call*.so"))]
    raise ImportError(f"xattn: no _xattn_call{importlib.machinery.EXTENSION_SUFFIXES[0]} in {folder} "
                      f"(found: {', '.join(others) or 'none'}): the binding's call module is built for the "
                      "Python that CMake or pip built with (python3-dev needed); rebuild with this Python")


def _load():
    global _lib, _call
    with _lib_lock:
        if _lib is not None:
            return _lib
        path = library_path()
        lib = ctypes.CDLL(path)
        for name in ("xattn_isa_name", "xattn_variant_name", "xattn_layout_name"):
            getattr(lib, name).restype = ctypes.c_char_p
            getattr(lib, name).argtypes = [ctypes.c_int]
        for name in ("xattn_best_isa", "xattn_config_header_path", "xattn_config_provenance"):
            getattr(lib, name).restype = ctypes.c_char_p
        lib.xattn_isa_runnable.argtypes = [ctypes.c_char_p]
        ext = _call_module(os.path.dirname(os.path.abspath(path)))
        addr = [ctypes.cast(getattr(lib, "xattn_" + f), ctypes.c_void_p).value for f in
                ("extend_attention", "reference", "resolve", "last_error", "status_name", "problem_init",
                 "options_init", "problem_size", "options_size")]
        ext.bind(*addr, XattnError)  # ImportError if the two were built from different xattn.h
        _call, _lib = ext.call, lib
        return lib


# ---- arguments the call module does not take as they are ------------------------------
_TORCH_BITS = {"bfloat16": ("int16", np.uint16, "bf16"), "float8_e4m3fn": ("uint8", np.uint8, "e4m3fn"),
               "float8_e5m2": ("uint8", np.uint8, "e5m2")}


def _is_torch(x):
    return hasattr(x, "data_ptr") and hasattr(x, "stride") and hasattr(x, "device")


_torch_known = False


def _read_torch_in_place():
    """From now on the call module reads torch tensors itself (data_ptr, stride,
    shape, dtype), without this converting path: torch is in use."""
    global _torch_known
    if not _torch_known:
        import torch
        _call.__self__.set_torch(torch.Tensor, *(getattr(torch, n, None) for n in (
            "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float64", "int32", "int64", "uint8")))
        _torch_known = True


def _tensor(name, t):
    """A NumPy view of a tensor argument (no copy) and the library dtype its
    element type implies (bf16, e4m3fn, e5m2: types NumPy lacks) or None."""
    if t is None or type(t) is np.ndarray:
        return t, None
    if _is_torch(t):
        _read_torch_in_place()
        if t.device.type != "cpu":
            raise XattnError(f"{name}: on {t.device}, want a CPU tensor", "null")
        kind = str(t.dtype).replace("torch.", "")
        t = t.detach()
        if kind in _TORCH_BITS:  # the same bytes as integers NumPy has
            torch_int, np_int, implied = _TORCH_BITS[kind]
            return t.view(getattr(__import__("torch"), torch_int)).numpy().view(np_int), implied
        try:
            return t.numpy(), None
        except TypeError:
            raise XattnError(f"{name}: element type {t.dtype}, want float32, float16, bfloat16 or float8", "dtype")
    if hasattr(t, "__array_interface__"):
        return np.asarray(t), None
    raise XattnError(f"{name}: a NumPy array or torch CPU tensor, not {type(t).__name__}", "null")


def _host(x):
    """A small array argument (torch: a zero-copy view) as NumPy."""
    return x.numpy() if _is_torch(x) else x


def _normalized(args, out, options):
    """The arguments as the call module takes them: NumPy views of tensors,
    dense int32/int64/float32/uint8 arrays of the small ones. The dtypes torch
    states (bf16, fp8 caches) become the dtype / cache_dtype options."""
    q, k_ext, v_ext, k_cache, v_cache, table, req_index, prefix_lens, extend_lens = args
    options = dict(options)
    q, qdt = _tensor("q", q)
    if qdt is not None and "dtype" not in options:
        options["dtype"] = qdt
    k_ext, _ = _tensor("k_ext", k_ext)
    v_ext, _ = _tensor("v_ext", v_ext)
    out, _ = _tensor("out", out)
    caches = []
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        t, implied = _tensor(name, t)
        if implied in ("e4m3fn", "e5m2"):  # torch fp8 tensors say their format
            given = options.get("cache_dtype")
            if given is not None and given != implied:
                raise XattnError(f"{name}: float8_{implied} but cache_dtype={given!r}", "dtype")
            options["cache_dtype"] = implied
        caches.append(t)
    table = np.asarray(_host(table))
    if table.dtype not in (np.int32, np.int64):
        table = table.astype(np.int64)
    table = np.ascontiguousarray(table)  # the C API has no row stride
    ints = [np.ascontiguousarray(_host(x), dtype=t) for x, t in
            ((req_index, np.int64), (prefix_lens, np.int32), (extend_lens, np.int32))]
    for key, typ in (("extend_start", np.int32), ("encoder_lens", np.int32), ("req_start_col", np.int64),
                     ("sinks", np.float32), ("k_scales", np.float32), ("v_scales", np.float32),
                     ("tree_mask", np.uint8)):
        if options.get(key) is not None:
            options[key] = np.ascontiguousarray(_host(options[key]), dtype=typ)
    return (q, k_ext, v_ext, caches[0], caches[1], table, *ints, out), options


def _invoke(which, args, out, options):
    """One call of the call module; when an argument needs converting, again on
    the converted arguments (strict: then every refusal is an XattnError)."""
    r = _call(which, *args, out, options, False)
    if r is NotImplemented:
        args, options = _normalized(args, out, options)
        r = _call(which, *args, options, True)
    return r


def _out_shape(q, v_ext, v_cache):
    """[T, H_Q, DV] of the output, or None when q is not a 3-D tensor (the call says why)."""
    def shape_of(t):
        s = getattr(t, "shape", None)
        if s is None and hasattr(t, "__array_interface__"):
            s = t.__array_interface__["shape"]
        return tuple(s) if s is not None else None
    shape = shape_of(q)
    if shape is None or len(shape) != 3:
        return None
    v = shape_of(v_ext if v_ext is not None else v_cache)
    return (shape[0], shape[1], v[-1] if v else shape[2])


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
    req_start_col, cache_dtype, k_scale, v_scale, k_scales, v_scales, page_size,
    variant, layout, isa, threads, schedule, kv_splits, prefetch, prefetch_level.
    Returns out (a new array/tensor like q when not given)."""
    if _call is None:
        _load()
    if out is None:
        shape = _out_shape(q, v_ext, v_cache)
        if shape is not None:
            out = __import__("torch").zeros(shape, dtype=q.dtype) if _is_torch(q) else \
                np.zeros(shape, dtype=np.asarray(q).dtype)
    _invoke(RUN, (q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens),
            out, options)
    return out


_RUN_OPTIONS = ("variant", "layout", "isa", "threads", "schedule", "kv_splits", "prefetch", "prefetch_level")


def reference(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens,
              **options):
    """The fp64 reference (xattn_reference) of the same call: a float64 [T, H_Q, DV] NumPy array."""
    if _call is None:
        _load()
    for k in _RUN_OPTIONS:
        options.pop(k, None)
    shape = _out_shape(q, v_ext, v_cache)
    ref = np.zeros(shape, dtype=np.float64) if shape is not None else None
    _invoke(REFERENCE, (q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens),
            ref, options)
    return ref


def resolve(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens,
            **options):
    """What a call with these arguments would run: dict(variant, layout, isa, threads)."""
    if _call is None:
        _load()
    options.pop("out", None)
    return _invoke(RESOLVE, (q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens,
                             extend_lens), None, options)


def _prepare(q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens, extend_lens, *, out,
             **options):
    """(run, problem): the problem of this call filled once, and run(problem)
    making the C call alone (python/xattn/perf/binding_overhead.py). The caller
    keeps every array alive while it uses the problem."""
    if _call is None:
        _load()
    problem = _invoke(PREPARE, (q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index, prefix_lens,
                                extend_lens), out, options)
    return _call.__self__.run_prepared, problem


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
