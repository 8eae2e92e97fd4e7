/* _xattn_call: the call path of the Python binding (python/xattn/api.py).
 *
 * Turns the Python arguments of xattn.extend_attention / reference / resolve
 * into an xattn_problem and xattn_options and makes the call. Written in C
 * because the same work through ctypes (a field store per struct member, an
 * attribute lookup per array property) cost ~20 us per call against a C call of
 * a few us on a decode step; here it is a buffer-protocol view per array.
 *
 * The structs come from kernels/include/xattn/xattn.h itself, so no copy of
 * their layout exists on the Python side. The library is not linked: api.py
 * loads libxattn.so with ctypes and hands this module its function addresses
 * (bind()), so one copy of the library serves both; bind() refuses a library
 * whose sizeof(xattn_problem) / sizeof(xattn_options) differ from the header
 * this module was compiled with.
 *
 * Arrays are used in place (no copy): anything with the buffer protocol whose
 * element type and layout the call takes directly (NumPy arrays). Anything
 * else (torch tensors, lists of lengths, a table of another integer type)
 * makes the call return NotImplemented before anything is done; api.py then
 * turns those arguments into NumPy views or small arrays and calls again with
 * strict=True, when every refusal is an XattnError naming the field and the
 * reason. The GIL is released while the library runs; the buffers stay
 * exported (so not resizable) until the call returns. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o) {
  Py_INCREF(o);
  return o;
}
#endif

/* ---- the library, as api.py hands it over ------------------------------------- */
typedef struct library {
  xattn_status (*extend)(const xattn_problem *, const xattn_options *);
  xattn_status (*reference)(const xattn_problem *, double *);
  xattn_status (*resolve)(const xattn_problem *, const xattn_options *, const char **, const char **,
                          const char **, int *);
  const char *(*last_error)(void);
  const char *(*status_name)(xattn_status);
  void (*problem_init)(xattn_problem *);
  void (*options_init)(xattn_options *);
  PyObject *error_type; /* xattn.api.XattnError(message, status) */
} library;
static library lib;

enum { RUN = 0, REFERENCE = 1, RESOLVE = 2, PREPARE = 3 };
enum { OK = 0, FAILED = -1, NEEDS_NORMALIZING = 1 };

/* Raises XattnError(message, status name); returns FAILED. */
static int fail(xattn_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (!msg) return FAILED;
  PyObject *exc = PyObject_CallFunction(lib.error_type, "Os", msg, lib.status_name(st));
  Py_DECREF(msg);
  if (exc) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return FAILED;
}

/* "[a, b, c]" into buf */
static const char *dims(char *buf, size_t n, int ndim, const Py_ssize_t *v) {
  size_t at = 0;
  buf[at++] = '[';
  for (int i = 0; i < ndim && at < n - 24; i++)
    at += (size_t)snprintf(buf + at, n - at, i ? ", %lld" : "%lld", (long long)v[i]);
  snprintf(buf + at, n - at, "]");
  return buf;
}

/* ---- element types ------------------------------------------------------------- */
/* E_BF16, E_E4M3, E_E5M2: torch tensors, which say what their bytes are; a
 * buffer's uint16 / uint8 are bf16 / fp8 when the dtype options say so. */
typedef enum elem { E_F32, E_U16, E_F16, E_U8, E_BF16, E_E4M3, E_E5M2, E_F64, E_I32, E_I64, E_OTHER } elem;
static const char *const elem_names[] = {"float32", "uint16", "float16", "uint8", "bfloat16", "float8_e4m3fn",
                                         "float8_e5m2", "float64", "int32", "int64"};


/* The element type of a buffer; native (little-endian) byte order only. */
static elem format_elem(const Py_buffer *v) {
  const char *f = v->format ? v->format : "B";
  if (*f == '@' || *f == '=' || *f == '<') f++;
  if (!f[0] || f[1]) return E_OTHER;
  switch (f[0]) {
    case 'f': return v->itemsize == 4 ? E_F32 : E_OTHER;
    case 'd': return v->itemsize == 8 ? E_F64 : E_OTHER;
    case 'e': return v->itemsize == 2 ? E_F16 : E_OTHER;
    case 'H': return v->itemsize == 2 ? E_U16 : E_OTHER;
    case 'B': return v->itemsize == 1 ? E_U8 : E_OTHER;
    case 'i': case 'l': case 'q':
      return v->itemsize == 4 ? E_I32 : v->itemsize == 8 ? E_I64 : E_OTHER;
    default: return E_OTHER;
  }
}

/* Does a buffer of element e hold library dtype dt? bf16 is uint16 bits, fp8 bytes. */
static int holds_dtype(elem e, int dt) {
  switch (dt) {
    case XATTN_F32: return e == E_F32;
    case XATTN_BF16: return e == E_U16 || e == E_BF16;
    case XATTN_F16: return e == E_F16;
    case XATTN_E4M3FN: return e == E_U8 || e == E_E4M3;
    case XATTN_E5M2: return e == E_U8 || e == E_E5M2;
    default: return 0;
  }
}
static int dtype_size(int dt) { return dt == XATTN_F32 ? 4 : dt == XATTN_BF16 || dt == XATTN_F16 ? 2 : 1; }
static const char *dtype_what(int dt) {
  return dt == XATTN_F32 ? "f32" : dt == XATTN_BF16 ? "bf16" : dt == XATTN_F16 ? "f16" : "an fp8 code";
}

/* ---- torch tensors ----------------------------------------------------------------
 * Read through their own accessors (data_ptr(), stride(), shape, dtype, is_cpu:
 * ~0.05-0.08 us each) once api.py has registered torch (set_torch), which it does
 * the first time it meets a torch tensor. */
enum { T_F32, T_F16, T_BF16, T_E4M3, T_E5M2, T_F64, T_I32, T_I64, T_U8, N_TORCH_DTYPES };
static const elem torch_elems[N_TORCH_DTYPES] = {E_F32, E_F16, E_BF16, E_E4M3, E_E5M2, E_F64, E_I32, E_I64, E_U8};
static const int torch_sizes[N_TORCH_DTYPES] = {4, 2, 2, 1, 1, 8, 4, 8, 1};
static PyTypeObject *torch_tensor;
static PyObject *torch_dtypes[N_TORCH_DTYPES];
static PyObject *s_data_ptr, *s_stride, *s_shape, *s_dtype, *s_is_cpu; /* interned names */

/* ---- buffers held for the call --------------------------------------------------- */
#define MAX_VIEWS 20
typedef struct views {
  Py_buffer v[MAX_VIEWS];
  elem e[MAX_VIEWS];
  Py_ssize_t dims[MAX_VIEWS][8]; /* shape and byte strides of a torch tensor */
  void *owned[MAX_VIEWS];        /* arrays converted here (lengths of another int type) */
  int n, n_owned;
} views;
static void release(views *h) {
  for (int i = 0; i < h->n; i++) PyBuffer_Release(&h->v[i]); /* a torch slot has obj NULL: nothing */
  for (int i = 0; i < h->n_owned; i++) free(h->owned[i]);
  h->n = h->n_owned = 0;
}
static elem elem_of(const views *h, const Py_buffer *v) { return h->e[v - h->v]; }

/* A torch CPU tensor of a known dtype and at most 4 dimensions as a Py_buffer
 * (obj NULL: the caller's reference keeps it alive). Anything else about it:
 * NEEDS_NORMALIZING (api.py's converting path says what is wrong). */
static int torch_view(views *h, PyObject *obj, Py_buffer *v) {
  int r = NEEDS_NORMALIZING;
  PyObject *cpu = NULL, *dtype = NULL, *shape = NULL, *stride = NULL, *ptr = NULL;
  if (!(cpu = PyObject_GetAttr(obj, s_is_cpu)) || cpu != Py_True) goto done;
  if (!(dtype = PyObject_GetAttr(obj, s_dtype))) goto done;
  int d = 0;
  while (d < N_TORCH_DTYPES && torch_dtypes[d] != dtype) d++;
  if (d == N_TORCH_DTYPES) goto done;
  if (!(shape = PyObject_GetAttr(obj, s_shape)) || !PyTuple_Check(shape)) goto done;
  if (!(stride = PyObject_CallMethodObjArgs(obj, s_stride, NULL)) || !PyTuple_Check(stride)) goto done;
  Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
  if (ndim > 4 || PyTuple_GET_SIZE(stride) != ndim) goto done;
  if (!(ptr = PyObject_CallMethodObjArgs(obj, s_data_ptr, NULL))) goto done;
  Py_ssize_t *dims = h->dims[h->n], n = 1;
  for (Py_ssize_t i = 0; i < ndim; i++) {
    dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    dims[4 + i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(stride, i)) * torch_sizes[d];
    n *= dims[i];
  }
  void *buf = PyLong_AsVoidPtr(ptr);
  if (PyErr_Occurred()) goto done;
  memset(v, 0, sizeof *v);
  v->buf = buf;
  v->itemsize = torch_sizes[d];
  v->len = n * v->itemsize;
  v->ndim = (int)ndim;
  v->shape = dims;
  v->strides = dims + 4;
  h->e[h->n] = torch_elems[d];
  r = OK;
done:
  PyErr_Clear();
  Py_XDECREF(cpu);
  Py_XDECREF(dtype);
  Py_XDECREF(shape);
  Py_XDECREF(stride);
  Py_XDECREF(ptr);
  return r;
}

/* A strided view of obj (writable for the output). Not a buffer: NEEDS_NORMALIZING
 * (FAILED with the reason when strict). */
static int get_view(views *h, PyObject *obj, const char *name, int writable, int strict, Py_buffer **out) {
  if (torch_tensor && PyObject_TypeCheck(obj, torch_tensor)) {
    if (torch_view(h, obj, &h->v[h->n]) != OK) {
      if (!strict) return NEEDS_NORMALIZING;
      return fail(XATTN_ERR_DTYPE, "%s: a torch tensor the binding cannot read in place", name);
    }
    *out = &h->v[h->n++];
    return OK;
  }
  if (!PyObject_CheckBuffer(obj)) {
    if (!strict) return NEEDS_NORMALIZING;
    return fail(XATTN_ERR_NULL, "%s: a NumPy array or torch CPU tensor, not %s", name, Py_TYPE(obj)->tp_name);
  }
  Py_buffer *v = &h->v[h->n];
  if (PyObject_GetBuffer(obj, v, PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
    PyErr_Clear();
    if (!strict) return NEEDS_NORMALIZING;
    if (writable && PyObject_GetBuffer(obj, v, PyBUF_STRIDES | PyBUF_FORMAT) == 0) {
      PyBuffer_Release(v);
      return fail(XATTN_ERR_NULL, "%s: read-only array", name);
    }
    PyErr_Clear();
    return fail(XATTN_ERR_DTYPE, "%s: not readable as a strided array of numbers", name);
  }
  h->e[h->n++] = format_elem(v);
  *out = v;
  return OK;
}

/* A q/k/v/cache/out tensor: a view with a float element type, ndim (3, or 3 or 4
 * when ndim is 0) dimensions, element strides, a contiguous last dimension. */
typedef struct tensor {
  Py_buffer *v;
  elem e;
  int ndim;
  const Py_ssize_t *shape;
  int64_t st[4]; /* element strides */
} tensor;

static int get_tensor(views *h, PyObject *obj, const char *name, int ndim, int writable, int strict, tensor *t) {
  int r = get_view(h, obj, name, writable, strict, &t->v);
  if (r != OK) return r;
  Py_buffer *v = t->v;
  char buf[160];
  t->e = elem_of(h, v);
  if (t->e > E_E5M2) /* E_F32 .. E_E5M2: the element types a q/k/v/cache/out tensor may have */
    return fail(XATTN_ERR_DTYPE, "%s: element type %s, want float32, float16, uint16 (bf16 bits) or uint8 (fp8 codes)",
                name, t->e == E_OTHER ? v->format : elem_names[t->e]);
  if (ndim ? v->ndim != ndim : v->ndim != 3 && v->ndim != 4)
    return fail(XATTN_ERR_SHAPE, "%s: %d dimensions %s, want %s", name, v->ndim, dims(buf, sizeof buf, v->ndim, v->shape),
                ndim == 3 ? "3" : "3 (slots) or 4 (paged)");
  t->ndim = v->ndim;
  t->shape = v->shape;
  for (int i = 0; i < v->ndim; i++) {
    if (v->strides[i] % v->itemsize)
      return fail(XATTN_ERR_STRIDE, "%s: byte strides %s are not multiples of the element size", name,
                  dims(buf, sizeof buf, v->ndim, v->strides));
    t->st[i] = v->strides[i] / v->itemsize;
  }
  if (v->shape[v->ndim - 1] > 1 && t->st[v->ndim - 1] != 1)
    return fail(XATTN_ERR_STRIDE, "%s: the last dimension has stride %lld; it must be contiguous (stride 1)", name,
                (long long)t->st[v->ndim - 1]);
  return OK;
}

/* A tensor that must hold dtype dt (k_ext, v_ext, out; a cache: `cache`, where a
 * float of another type is named first, as the likelier mistake). */
static int check_dtype(const tensor *t, const char *name, int dt, int cache) {
  const char *suffix = cache ? " (fp8 caches: cache_dtype=)" : "";
  int differs = !holds_dtype(t->e, dt);
  if (cache && differs && t->v->itemsize != 1 && dt <= XATTN_F16)
    return fail(XATTN_ERR_DTYPE, "%s: element type differs from q's%s", name, suffix);
  if (t->v->itemsize != dtype_size(dt))
    return fail(XATTN_ERR_DTYPE, "%s: %d-byte elements, want %d (%s)", name, (int)t->v->itemsize, dtype_size(dt),
                dtype_what(dt));
  if (differs) return fail(XATTN_ERR_DTYPE, "%s: element type differs from q's%s", name, suffix);
  return OK;
}
static xattn_tensor as_tensor(const tensor *t, int token_dim, int head_dim) {
  xattn_tensor x = {t->v->buf, t->st[token_dim], t->st[head_dim]};
  return x;
}

/* int64 lengths where the C API takes int32 (NumPy's and torch's default
 * integer) or the other way round: a converted copy of the few numbers. */
static int convert_ints(views *h, const Py_buffer *v, const char *name, elem from, elem to, const void **data) {
  Py_ssize_t n = v->len / v->itemsize;
  void *copy = malloc(n ? (size_t)n * (to == E_I32 ? 4 : 8) : 1);
  if (!copy) return PyErr_NoMemory(), FAILED;
  h->owned[h->n_owned++] = copy;
  for (Py_ssize_t i = 0; i < n; i++) {
    int64_t x = from == E_I32 ? ((const int32_t *)v->buf)[i] : ((const int64_t *)v->buf)[i];
    if (to == E_I32) {
      if (x < INT32_MIN || x > INT32_MAX)
        return fail(XATTN_ERR_SHAPE, "%s[%zd]: %lld does not fit the C API's int32", name, i, (long long)x);
      ((int32_t *)copy)[i] = (int32_t)x;
    } else {
      ((int64_t *)copy)[i] = x;
    }
  }
  *data = copy;
  return OK;
}

/* A C-contiguous array of element e (ndim 1 unless any_ndim) and its element count. */
static int get_array(views *h, PyObject *obj, const char *name, elem e, int any_ndim, int strict, const void **data,
                     Py_ssize_t *n) {
  Py_buffer *v;
  int r = get_view(h, obj, name, 0, strict, &v);
  if (r != OK) return r;
  elem got = elem_of(h, v);
  int shaped = (any_ndim || v->ndim == 1) && PyBuffer_IsContiguous(v, 'C');
  if (shaped && got != e && (got == E_I32 || got == E_I64) && (e == E_I32 || e == E_I64)) {
    *n = v->len / v->itemsize;
    return convert_ints(h, v, name, got, e, data);
  }
  if (got != e || !shaped) {
    if (!strict) return NEEDS_NORMALIZING;
    if (!any_ndim && v->ndim != 1) return fail(XATTN_ERR_SHAPE, "%s: %d dimensions, want 1", name, v->ndim);
    return fail(XATTN_ERR_DTYPE, "%s: want a contiguous %s array", name, elem_names[e]);
  }
  *data = v->buf;
  *n = v->len / v->itemsize;
  return OK;
}

/* ---- options ---------------------------------------------------------------------- */
#define OPTION_LIST(X)                                                                                     \
  X(dtype) X(mode) X(cache_layout) X(cache_dtype) X(extend_start) X(encoder_lens) X(req_start_col) X(sinks) \
  X(k_scales) X(v_scales) X(tree_mask) X(scale) X(logit_cap) X(align) X(window) X(k_scale) X(v_scale)       \
  X(page_size) X(variant) X(layout) X(isa) X(threads) X(schedule) X(kv_splits) X(prefetch) X(prefetch_level)
typedef struct given {
#define FIELD(name) PyObject *name;
  OPTION_LIST(FIELD)
#undef FIELD
} given;

/* Sorts the keyword options into *g (None counts as not given); an unknown one
 * is a TypeError listing every unknown name. */
static int read_options(PyObject *options, given *g) {
  memset(g, 0, sizeof *g);
  if (!options || options == Py_None || PyDict_GET_SIZE(options) == 0) return OK;
  PyObject *key, *value, *unknown = NULL;
  Py_ssize_t pos = 0;
  while (PyDict_Next(options, &pos, &key, &value)) {
    const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!k) {
      PyErr_Clear();
      k = "";
    }
#define MATCH(name)                               \
  if (strcmp(k, #name) == 0) {                    \
    g->name = value == Py_None ? NULL : value;    \
    continue;                                     \
  }
    OPTION_LIST(MATCH)
#undef MATCH
    if (!unknown && !(unknown = PyList_New(0))) return FAILED;
    if (PyList_Append(unknown, key) < 0) {
      Py_DECREF(unknown);
      return FAILED;
    }
  }
  if (!unknown) return OK;
  PyList_Sort(unknown);
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *names = sep ? PyUnicode_Join(sep, unknown) : NULL;
  if (names) PyErr_Format(PyExc_TypeError, "extend_attention: unknown argument(s) %U", names);
  Py_XDECREF(names);
  Py_XDECREF(sep);
  Py_DECREF(unknown);
  return FAILED;
}

/* index of s in names[0..n) or -1; not a str: -1 */
static int choice(PyObject *s, const char *const *names, int n) {
  if (!PyUnicode_Check(s)) return -1;
  for (int i = 0; i < n; i++)
    if (PyUnicode_CompareWithASCIIString(s, names[i]) == 0) return i;
  return -1;
}
static const char *const dtype_names[] = {"f32", "bf16", "f16", "e4m3fn", "e5m2"};
static const char *const mode_names[] = {"causal", "bidirectional", "cross", "tree"};
static const char *const align_names[] = {"bottom_right", "top_left"};
static const char *const layout_names[] = {"token_major", "head_major"};
static const char *const schedule_names[] = {"auto", "static", "dynamic"};

static int as_int(PyObject *x, const char *name, long lo, long hi, long *out) {
  long v = PyLong_AsLong(x);
  if (v == -1 && PyErr_Occurred()) return FAILED;
  if (v < lo || v > hi) return fail(XATTN_ERR_SHAPE, "%s: %ld is out of range", name, v);
  *out = v;
  return OK;
}
static int as_float(PyObject *x, float *out) {
  double v = PyFloat_AsDouble(x);
  if (v == -1.0 && PyErr_Occurred()) return FAILED;
  *out = (float)v;
  return OK;
}
static int as_name(PyObject *x, const char *name, const char **out) {
  if (!x) return OK;
  if (PyUnicode_Check(x)) *out = PyUnicode_AsUTF8(x);
  else if (PyBytes_Check(x)) *out = PyBytes_AsString(x);
  else return PyErr_Format(PyExc_TypeError, "%s: a str, not %s", name, Py_TYPE(x)->tp_name), FAILED;
  return *out ? OK : FAILED;
}

/* ---- the problem ------------------------------------------------------------------ */
/* The positional tensors and arrays of a call, in extend_attention's order. */
enum { A_Q, A_K_EXT, A_V_EXT, A_K_CACHE, A_V_CACHE, A_TABLE, A_REQ_INDEX, A_PREFIX, A_EXTEND, A_OUT, N_ARGS };

static int fill_caches(views *h, PyObject *const *a, const given *g, int strict, int k_ext_given,
                       xattn_problem *p) {
  static const char *const names[2] = {"k_cache", "v_cache"};
  int head_major = 0;
  if (g->cache_layout) {
    head_major = choice(g->cache_layout, layout_names, 2);
    if (head_major < 0)
      return fail(XATTN_ERR_MODE, "cache_layout: %R, want 'token_major' or 'head_major'", g->cache_layout);
    p->cache_layout = head_major ? XATTN_CACHE_HEAD_MAJOR : XATTN_CACHE_TOKEN_MAJOR;
  }
  if (g->cache_dtype) {
    int c = choice(g->cache_dtype, dtype_names, 5);
    if (c < 0) return fail(XATTN_ERR_DTYPE, "cache_dtype: %R, want 'e4m3fn' or 'e5m2'", g->cache_dtype);
    p->cache_dtype = (xattn_dtype)c;
  }
  for (int v = 0; v < 2; v++) {
    PyObject *obj = a[A_K_CACHE + v];
    if (obj == Py_None) continue;
    tensor t;
    int r = get_tensor(h, obj, names[v], 0, 0, strict, &t);
    if (r != OK) return r;
    if (t.e == E_E4M3 || t.e == E_E5M2) { /* torch fp8 tensors say their format */
      xattn_dtype says = t.e == E_E4M3 ? XATTN_E4M3FN : XATTN_E5M2;
      if (g->cache_dtype && p->cache_dtype != says)
        return fail(XATTN_ERR_DTYPE, "%s: %s but cache_dtype=%R", names[v], elem_names[t.e], g->cache_dtype);
      if (p->cache_dtype != XATTN_DTYPE_SAME && p->cache_dtype != says)
        return fail(XATTN_ERR_DTYPE, "%s: %s, but k_cache is %s", names[v], elem_names[t.e],
                    dtype_names[p->cache_dtype]);
      p->cache_dtype = says;
    }
    int eff = p->cache_dtype == XATTN_DTYPE_SAME ? (int)p->dtype : (int)p->cache_dtype;
    if ((r = check_dtype(&t, names[v], eff, 1)) != OK) return r;
    Py_ssize_t heads, dim;
    xattn_tensor x;
    int64_t block_stride = 0;
    if (t.ndim == 3) {
      p->cache_slots = t.shape[0], heads = t.shape[1], dim = t.shape[2];
      x = as_tensor(&t, 0, 1);
    } else if (head_major) { /* [blocks, H_KV, page, D] */
      p->cache_slots = t.shape[0], heads = t.shape[1], p->page_size = (int32_t)t.shape[2], dim = t.shape[3];
      x = as_tensor(&t, 2, 1), block_stride = t.st[0];
    } else { /* [blocks, page, H_KV, D] */
      p->cache_slots = t.shape[0], p->page_size = (int32_t)t.shape[1], heads = t.shape[2], dim = t.shape[3];
      x = as_tensor(&t, 1, 2), block_stride = t.st[0];
    }
    if (v == 0) p->k_cache = x, p->k_cache_block_stride = block_stride;
    else p->v_cache = x, p->v_cache_block_stride = block_stride;
    if (!k_ext_given) {
      if (v == 0) p->heads_kv = (int32_t)heads;
      else p->head_dim_v = (int32_t)dim;
    }
  }
  return OK;
}

static int fill_table(views *h, PyObject *obj, int strict, xattn_problem *p) {
  Py_buffer *v;
  int r = get_view(h, obj, "req_to_token", 0, strict, &v);
  if (r != OK) return r;
  elem e = elem_of(h, v);
  if (v->ndim != 2)
    return fail(XATTN_ERR_SHAPE, "req_to_token: %d dimensions, want 2 [rows, columns]", v->ndim);
  /* the C API has no row stride: rows must be dense */
  int dense = (v->shape[1] <= 1 || v->strides[1] == v->itemsize) &&
              (v->shape[0] <= 1 || v->strides[0] == v->shape[1] * v->itemsize);
  if ((e != E_I32 && e != E_I64) || !dense) {
    if (!strict) return NEEDS_NORMALIZING;
    return fail(XATTN_ERR_DTYPE, "req_to_token: want a C-contiguous int32 or int64 table");
  }
  p->req_to_token = v->buf;
  p->req_to_token_type = e == E_I64 ? XATTN_I64 : XATTN_I32;
  p->max_reqs = v->shape[0];
  p->max_ctx = v->shape[1];
  return OK;
}

/* One length-B array option (extend_start, encoder_lens, req_start_col, req_index). */
static int per_request(views *h, PyObject *obj, const char *name, elem e, int strict, const xattn_problem *p,
                       const void **out) {
  Py_ssize_t n;
  int r = get_array(h, obj, name, e, 0, strict, out, &n);
  if (r != OK) return r;
  if (n != p->batch) return fail(XATTN_ERR_SHAPE, "%s: %zd entries, want %d (one per request)", name, n, p->batch);
  return OK;
}

static int fill_arrays(views *h, PyObject *const *a, const given *g, int strict, xattn_problem *p) {
  const void *pl, *el;
  Py_ssize_t npl, nel, n;
  int r;
  if ((r = get_array(h, a[A_PREFIX], "prefix_lens", E_I32, 0, strict, &pl, &npl)) != OK) return r;
  if ((r = get_array(h, a[A_EXTEND], "extend_lens", E_I32, 0, strict, &el, &nel)) != OK) return r;
  if (npl != nel) return fail(XATTN_ERR_SHAPE, "extend_lens: %zd entries but prefix_lens has %zd", nel, npl);
  if (npl > INT32_MAX) return fail(XATTN_ERR_SHAPE, "prefix_lens: %zd requests, too many", npl);
  p->batch = (int32_t)npl;
  p->prefix_lens = pl, p->extend_lens = el;
  const void *x;
  if ((r = per_request(h, a[A_REQ_INDEX], "req_index", E_I64, strict, p, &x)) != OK) return r;
  p->req_index = x;
  if (g->extend_start) {
    if ((r = per_request(h, g->extend_start, "extend_start", E_I32, strict, p, &x)) != OK) return r;
    p->extend_start = x;
  }
  if (g->encoder_lens) {
    if ((r = per_request(h, g->encoder_lens, "encoder_lens", E_I32, strict, p, &x)) != OK) return r;
    p->encoder_lens = x;
  }
  if (g->req_start_col) {
    if ((r = per_request(h, g->req_start_col, "req_start_col", E_I64, strict, p, &x)) != OK) return r;
    p->req_start_col = x;
  }
  if (g->sinks) {
    if ((r = get_array(h, g->sinks, "sinks", E_F32, 0, strict, &x, &n)) != OK) return r;
    if (n != p->heads_q) return fail(XATTN_ERR_SHAPE, "sinks: %zd entries, want H_Q = %d", n, p->heads_q);
    p->sinks = x;
  }
  PyObject *scales[2] = {g->k_scales, g->v_scales};
  for (int v = 0; v < 2; v++) {
    if (!scales[v]) continue;
    const char *name = v ? "v_scales" : "k_scales";
    if ((r = get_array(h, scales[v], name, E_F32, 1, strict, &x, &n)) != OK) return r;
    int64_t want = p->cache_slots * (p->page_size > 1 ? p->page_size : 1) * p->heads_kv;
    if (n != want)
      return fail(XATTN_ERR_SHAPE, "%s: %zd entries, want %lld (cache tokens x H_KV)", name, n, (long long)want);
    if (v) p->v_scales = x;
    else p->k_scales = x;
  }
  if (g->tree_mask) {
    Py_buffer *v;
    if ((r = get_view(h, g->tree_mask, "tree_mask", 0, strict, &v)) != OK) return r;
    if (elem_of(h, v) != E_U8 || !PyBuffer_IsContiguous(v, 'C')) {
      if (!strict) return NEEDS_NORMALIZING;
      return fail(XATTN_ERR_DTYPE, "tree_mask: want a contiguous uint8 array");
    }
    char buf[160];
    if (v->ndim != 3 || v->shape[1] != v->shape[2])
      return fail(XATTN_ERR_SHAPE, "tree_mask: shape %s, want [B, max_E, max_E]", dims(buf, sizeof buf, v->ndim, v->shape));
    p->tree_mask = v->buf, p->tree_max_extend = (int32_t)v->shape[1];
  }
  return OK;
}

static int fill_scalars(const given *g, xattn_problem *p) {
  long l;
  p->scale = (float)pow((double)p->head_dim, -0.5); /* Python's d ** -0.5 */
  if (g->scale && as_float(g->scale, &p->scale) != OK) return FAILED;
  if (g->logit_cap && as_float(g->logit_cap, &p->logit_cap) != OK) return FAILED;
  if (g->align) {
    int i = choice(g->align, align_names, 2);
    if (i < 0) return fail(XATTN_ERR_MODE, "align: %R, want 'bottom_right' or 'top_left'", g->align);
    p->align = (xattn_align)i;
  }
  if (g->window) {
    PyObject *w = PySequence_Check(g->window) ? PySequence_Tuple(g->window) : NULL;
    if (!w || PyTuple_GET_SIZE(w) != 2) {
      Py_XDECREF(w);
      PyErr_Clear();
      return fail(XATTN_ERR_MODE, "window: %R, want a pair (left, right)", g->window);
    }
    long left, right;
    int r = as_int(PyTuple_GET_ITEM(w, 0), "window", INT32_MIN, INT32_MAX, &left);
    if (r == OK) r = as_int(PyTuple_GET_ITEM(w, 1), "window", INT32_MIN, INT32_MAX, &right);
    Py_DECREF(w);
    if (r != OK) return r;
    p->window_left = (int32_t)left, p->window_right = (int32_t)right;
  }
  if (g->k_scale && as_float(g->k_scale, &p->k_scale) != OK) return FAILED;
  if (g->v_scale && as_float(g->v_scale, &p->v_scale) != OK) return FAILED;
  if (g->page_size) {
    if (as_int(g->page_size, "page_size", INT32_MIN, INT32_MAX, &l) != OK) return FAILED;
    p->page_size = (int32_t)l;
  }
  return OK;
}

static int fill_options(const given *g, xattn_options *o) {
  long l;
  lib.options_init(o);
  if (as_name(g->variant, "variant", &o->variant) != OK || as_name(g->layout, "layout", &o->layout) != OK ||
      as_name(g->isa, "isa", &o->isa) != OK)
    return FAILED;
  if (g->threads) {
    if (as_int(g->threads, "threads", INT32_MIN, INT32_MAX, &l) != OK) return FAILED;
    o->threads = (int)l;
  }
  if (g->schedule) {
    int i = choice(g->schedule, schedule_names, 3);
    if (i < 0) return fail(XATTN_ERR_MODE, "schedule: %R, want 'auto', 'static' or 'dynamic'", g->schedule);
    o->schedule = (xattn_schedule)i;
  }
  if (g->kv_splits) {
    if (as_int(g->kv_splits, "kv_splits", INT32_MIN, INT32_MAX, &l) != OK) return FAILED;
    o->kv_splits = (int)l;
  }
  if (g->prefetch) {
    if (as_int(g->prefetch, "prefetch", INT32_MIN, INT32_MAX, &l) != OK) return FAILED;
    o->prefetch = (int)l;
  }
  if (g->prefetch_level) {
    if (as_int(g->prefetch_level, "prefetch_level", INT32_MIN, INT32_MAX, &l) != OK) return FAILED;
    o->prefetch_level = (int)l;
  }
  return OK;
}

/* The output: a writable [T, H_Q, DV] tensor of dtype (RUN, PREPARE) or a
 * C-contiguous float64 array (REFERENCE, returned in *ref). */
static int fill_out(views *h, PyObject *obj, int which, int strict, xattn_problem *p, double **ref) {
  char buf[160], want[96];
  Py_ssize_t shape[3] = {(Py_ssize_t)p->total_tokens, p->heads_q, p->head_dim_v};
  if (obj == Py_None) return fail(XATTN_ERR_NULL, "out: required");
  if (which == REFERENCE) {
    Py_buffer *v;
    int r = get_view(h, obj, "out", 1, 1, &v);
    if (r != OK) return r;
    if (elem_of(h, v) != E_F64 || v->ndim != 3 || !PyBuffer_IsContiguous(v, 'C') || v->shape[0] != shape[0] ||
        v->shape[1] != shape[1] || v->shape[2] != shape[2])
      return fail(XATTN_ERR_SHAPE, "reference: out must be a C-contiguous float64 array %s",
                  dims(want, sizeof want, 3, shape));
    *ref = v->buf;
    return OK;
  }
  tensor t;
  int r = get_tensor(h, obj, "out", 3, 1, strict, &t);
  if (r != OK) return r;
  if ((r = check_dtype(&t, "out", p->dtype, 0)) != OK) return r;
  if (t.shape[0] != shape[0] || t.shape[1] != shape[1] || t.shape[2] != shape[2])
    return fail(XATTN_ERR_SHAPE, "out: shape %s, want %s", dims(buf, sizeof buf, 3, t.shape),
                dims(want, sizeof want, 3, shape));
  p->o = as_tensor(&t, 0, 1);
  return OK;
}

/* Everything but the output. */
static int fill_problem(views *h, PyObject *const *a, const given *g, int strict, xattn_problem *p) {
  int r, want = -1;
  lib.problem_init(p);
  if (g->dtype) {
    want = choice(g->dtype, dtype_names, 3);
    if (want < 0) return fail(XATTN_ERR_DTYPE, "dtype: %R, want 'f32', 'bf16' or 'f16'", g->dtype);
  }
  tensor q;
  if ((r = get_tensor(h, a[A_Q], "q", 3, 0, strict, &q)) != OK) return r;
  int qdt = q.e == E_F32 ? XATTN_F32 : q.e == E_F16 ? XATTN_F16 : q.e == E_U16 || q.e == E_BF16 ? XATTN_BF16 : -1;
  if (q.e == E_U8 || q.e == E_E4M3 || q.e == E_E5M2)
    return fail(XATTN_ERR_DTYPE, "q: element type is an fp8 format; q, k_ext, v_ext and out are f32, bf16 or f16");
  if (q.e == E_U16 && want < 0) return fail(XATTN_ERR_DTYPE, "q: uint16 data needs dtype='bf16' (NumPy has no bf16)");
  if (want >= 0 && qdt != want) return fail(XATTN_ERR_DTYPE, "q: element type does not match dtype=%R", g->dtype);
  p->dtype = (xattn_dtype)qdt;
  p->total_tokens = q.shape[0];
  p->heads_q = (int32_t)q.shape[1];
  p->head_dim = p->head_dim_v = (int32_t)q.shape[2];
  p->q = as_tensor(&q, 0, 1);
  if (g->mode) {
    int m = choice(g->mode, mode_names, 4);
    if (m < 0) return fail(XATTN_ERR_MODE, "mode: %R, want one of ['bidirectional', 'causal', 'cross', 'tree']", g->mode);
    p->mode = (xattn_mode)m;
  }
  static const char *const ext_names[2] = {"k_ext", "v_ext"};
  for (int v = 0; v < 2; v++) {
    PyObject *obj = a[A_K_EXT + v];
    if (obj == Py_None) continue;
    tensor t;
    if ((r = get_tensor(h, obj, ext_names[v], 3, 0, strict, &t)) != OK) return r;
    if ((r = check_dtype(&t, ext_names[v], p->dtype, 0)) != OK) return r;
    if (v == 0) p->k_ext = as_tensor(&t, 0, 1), p->heads_kv = (int32_t)t.shape[1];
    else p->v_ext = as_tensor(&t, 0, 1), p->head_dim_v = (int32_t)t.shape[2];
  }
  if ((r = fill_caches(h, a, g, strict, a[A_K_EXT] != Py_None, p)) != OK) return r;
  if ((r = fill_table(h, a[A_TABLE], strict, p)) != OK) return r;
  if ((r = fill_arrays(h, a, g, strict, p)) != OK) return r;
  return fill_scalars(g, p);
}

static PyObject *library_error(xattn_status st) {
  fail(st, "%s", lib.last_error());
  return NULL;
}

typedef struct prepared {
  xattn_problem p;
  xattn_options o;
} prepared;

static void prepared_free(PyObject *capsule) { free(PyCapsule_GetPointer(capsule, "xattn.prepared")); }

/* call(which, q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index,
 *      prefix_lens, extend_lens, out, options, strict) */
static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != N_ARGS + 3) return PyErr_Format(PyExc_TypeError, "call: %d arguments, got %zd", N_ARGS + 3, nargs);
  if (!lib.extend) return PyErr_Format(PyExc_RuntimeError, "call: bind() first");
  int which = (int)PyLong_AsLong(args[0]);
  PyObject *const *a = args + 1;
  int strict = PyObject_IsTrue(args[N_ARGS + 2]);
  given g;
  if (read_options(args[N_ARGS + 1], &g) != OK) return NULL;
  views h;
  h.n = h.n_owned = 0;
  xattn_problem p;
  xattn_options o;
  double *ref = NULL;
  PyObject *result = NULL;
  int r = fill_problem(&h, a, &g, strict, &p);
  if (r == OK && which != RESOLVE) r = fill_out(&h, a[A_OUT], which, strict, &p, &ref);
  if (r == OK) r = fill_options(&g, &o);
  if (r == NEEDS_NORMALIZING) {
    result = Py_NewRef(Py_NotImplemented);
  } else if (r == OK) {
    xattn_status st = XATTN_OK;
    if (which == RUN) {
      Py_BEGIN_ALLOW_THREADS
      st = lib.extend(&p, &o);
      Py_END_ALLOW_THREADS
      result = st ? library_error(st) : Py_NewRef(Py_None);
    } else if (which == REFERENCE) {
      Py_BEGIN_ALLOW_THREADS
      st = lib.reference(&p, ref);
      Py_END_ALLOW_THREADS
      result = st ? library_error(st) : Py_NewRef(Py_None);
    } else if (which == RESOLVE) {
      const char *variant = NULL, *layout = NULL, *isa = NULL;
      int threads = 0;
      static const char one = 0; /* resolve reads o's shape, never writes through it */
      p.o.data = &one;
      p.o.head_stride = p.head_dim_v;
      p.o.token_stride = (int64_t)p.heads_q * p.head_dim_v;
      st = lib.resolve(&p, &o, &variant, &layout, &isa, &threads);
      result = st ? library_error(st)
                  : Py_BuildValue("{s:s,s:s,s:s,s:i}", "variant", variant, "layout", layout, "isa", isa, "threads",
                                  threads);
    } else if (which == PREPARE) {
      prepared *keep = malloc(sizeof *keep);
      if (!keep) {
        result = PyErr_NoMemory();
      } else {
        keep->p = p, keep->o = o;
        keep->o.variant = keep->o.layout = keep->o.isa = NULL; /* the strings are the caller's */
        result = PyCapsule_New(keep, "xattn.prepared", prepared_free);
        if (!result) free(keep);
      }
    } else {
      PyErr_Format(PyExc_ValueError, "call: which=%d", which);
    }
  }
  release(&h);
  return result;
}

/* run_prepared(capsule): the C call alone on a problem filled once by
 * call(3, ...), whose arrays the caller keeps alive (the overhead benchmark). */
static PyObject *run_prepared(PyObject *self, PyObject *capsule) {
  (void)self;
  prepared *keep = PyCapsule_GetPointer(capsule, "xattn.prepared");
  if (!keep) return NULL;
  xattn_status st;
  Py_BEGIN_ALLOW_THREADS
  st = lib.extend(&keep->p, &keep->o);
  Py_END_ALLOW_THREADS
  if (st) return library_error(st);
  Py_RETURN_NONE;
}

/* bind(extend, reference, resolve, last_error, status_name, problem_init,
 *      options_init, problem_size, options_size, XattnError): function addresses from ctypes. */
static PyObject *bind(PyObject *self, PyObject *args) {
  (void)self;
  unsigned long long f[9];
  PyObject *error_type;
  if (!PyArg_ParseTuple(args, "KKKKKKKKKO", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8],
                        &error_type))
    return NULL;
  for (int i = 0; i < 9; i++)
    if (!f[i]) return PyErr_Format(PyExc_ValueError, "bind: function %d is NULL", i);
  size_t problem = ((size_t (*)(void))(uintptr_t)f[7])(), options = ((size_t (*)(void))(uintptr_t)f[8])();
  if (problem != sizeof(xattn_problem) || options != sizeof(xattn_options))
    return PyErr_Format(PyExc_ImportError,
                        "xattn: the library's xattn_problem / xattn_options are %zu / %zu bytes, this binding "
                        "(_xattn_call) was compiled with %zu / %zu: it and libxattn.so come from different versions "
                        "of xattn.h (rebuild both)",
                        problem, options, sizeof(xattn_problem), sizeof(xattn_options));
  lib.extend = (xattn_status (*)(const xattn_problem *, const xattn_options *))(uintptr_t)f[0];
  lib.reference = (xattn_status (*)(const xattn_problem *, double *))(uintptr_t)f[1];
  lib.resolve = (xattn_status (*)(const xattn_problem *, const xattn_options *, const char **, const char **,
                                  const char **, int *))(uintptr_t)f[2];
  lib.last_error = (const char *(*)(void))(uintptr_t)f[3];
  lib.status_name = (const char *(*)(xattn_status))(uintptr_t)f[4];
  lib.problem_init = (void (*)(xattn_problem *))(uintptr_t)f[5];
  lib.options_init = (void (*)(xattn_options *))(uintptr_t)f[6];
  Py_XSETREF(lib.error_type, Py_NewRef(error_type));
  Py_RETURN_NONE;
}

/* set_torch(torch.Tensor, float32, float16, bfloat16, float8_e4m3fn, float8_e5m2,
 *           float64, int32, int64, uint8): from api.py, once torch is in use. */
static PyObject *set_torch(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *type, *d[N_TORCH_DTYPES];
  if (!PyArg_ParseTuple(args, "O!OOOOOOOOO", &PyType_Type, &type, &d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6],
                        &d[7], &d[8]))
    return NULL;
  for (int i = 0; i < N_TORCH_DTYPES; i++) Py_XSETREF(torch_dtypes[i], Py_NewRef(d[i]));
  Py_XSETREF(torch_tensor, (PyTypeObject *)Py_NewRef(type));
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"set_torch", set_torch, METH_VARARGS, "read torch tensors in place from now on (api.py)"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "the call path of xattn.extend_attention (api.py)"},
    {"run_prepared", run_prepared, METH_O, "the C call alone on a problem prepared by call(3, ...)"},
    {"bind", bind, METH_VARARGS, "the library's function addresses (api.py, once)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_xattn_call", "xattn's call path (python/ext/xattn_call.c)",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__xattn_call(void) {
  if (!(s_data_ptr = PyUnicode_InternFromString("data_ptr")) || !(s_stride = PyUnicode_InternFromString("stride")) ||
      !(s_shape = PyUnicode_InternFromString("shape")) || !(s_dtype = PyUnicode_InternFromString("dtype")) ||
      !(s_is_cpu = PyUnicode_InternFromString("is_cpu")))
    return NULL;
  return PyModule_Create(&module);
}
