/* Case folder loader (docs/formats.md §1); see case_io.h for the division of labour with
 * xattn_validate(). */
#define _POSIX_C_SOURCE 200809L
#include "case_io.h"
#include "err_line.h"
#include "xattn_common/files.h"
#include "xattn_common/json_strict.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CASE_JSON_MAX (16u << 20) /* a case.json is small; bigger is a wrong file */

npy_dtype xattn_case_npy_dtype(xattn_dtype t) {
  switch (t) {
    case XATTN_BF16: return NPY_U2;
    case XATTN_F16: return NPY_F2;
    case XATTN_E4M3FN:
    case XATTN_E5M2: return NPY_U1; /* fp8 codes */
    default: return NPY_F4;
  }
}

/* ---- case.json ----------------------------------------------------------- */
typedef struct json_ctx {
  const char *file; /* path of case.json, for messages */
  const cJSON *root;
  char *err;
  size_t errlen;
} json_ctx;

static const char *const known_keys[] = {
    "dtype", "heads_q", "heads_kv", "head_dim", "head_dim_v", "scale", "logit_cap", "mode",
    "align", "window", "prefix_lens", "extend_lens", "encoder_lens", "has_sinks",
    "page_size", "cache_layout", "req_start_col", "cache_slots", "strides",
    "cache_dtype", "k_scale", "v_scale", "has_kv_scales",
    /* informational, ignored */
    "name", "seed", "comment", "description", "source", NULL};

static int json_integer(const cJSON *v, int64_t lo, int64_t hi, int64_t *out) {
  if (!cJSON_IsNumber(v)) return -1;
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) return -1;
  *out = (int64_t)d;
  return 0;
}

/* Required (dflt == NULL) or optional integer key within [lo, hi]. */
static int get_int(json_ctx *j, const char *key, const int64_t *dflt, int64_t lo, int64_t hi,
                   int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j->root, key);
  if (!v) {
    if (dflt) return *out = *dflt, 0;
    err_line(j->err, j->errlen, "%s: missing required key '%s'", j->file, key);
    return -1;
  }
  if (json_integer(v, lo, hi, out)) {
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble < (double)lo)
      err_line(j->err, j->errlen, "%s: %s: %g is below the minimum %lld", j->file, key,
              v->valuedouble, (long long)lo);
    else
      err_line(j->err, j->errlen, "%s: %s: not an integer in [%lld, %lld]", j->file, key,
              (long long)lo, (long long)hi);
    return -1;
  }
  return 0;
}

static int get_float(json_ctx *j, const char *key, double dflt, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j->root, key);
  if (!v) return *out = dflt, 0;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
    err_line(j->err, j->errlen, "%s: %s: not a finite number", j->file, key);
    return -1;
  }
  *out = v->valuedouble;
  return 0;
}

/* A float field of the problem: also refused when the value does not survive
 * the conversion to float (1e-46 would silently become 0, 1e39 infinity). */
static int get_float32(json_ctx *j, const char *key, double dflt, float *out) {
  double d;
  if (get_float(j, key, dflt, &d)) return -1;
  const float f = (float)d;
  if (!isfinite(f) || (d != 0.0 && f == 0.0f)) {
    err_line(j->err, j->errlen, "%s: %s: %g is outside the range of a float (it would become %g)", j->file, key, d,
             (double)f);
    return -1;
  }
  *out = f;
  return 0;
}

static int get_str(json_ctx *j, const char *key, const char *dflt, const char **out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j->root, key);
  if (!v) {
    if (dflt) return *out = dflt, 0;
    err_line(j->err, j->errlen, "%s: missing required key '%s'", j->file, key);
    return -1;
  }
  if (!cJSON_IsString(v)) {
    err_line(j->err, j->errlen, "%s: %s: not a string", j->file, key);
    return -1;
  }
  *out = v->valuestring;
  return 0;
}

/* Integer array key; *n receives its length (or must equal *n when want_n >= 0).
 * Entries must be >= lo: for lengths lo = 0, so a negative length is refused
 * here, where its index can be named, before it can corrupt T or the shapes. */
static int get_int_array(json_ctx *j, const char *key, int64_t want_n, int64_t lo, int32_t **out,
                         int64_t *n) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j->root, key);
  if (!v) {
    err_line(j->err, j->errlen, "%s: missing required key '%s'", j->file, key);
    return -1;
  }
  if (!cJSON_IsArray(v)) {
    err_line(j->err, j->errlen, "%s: %s: not an array", j->file, key);
    return -1;
  }
  int64_t len = cJSON_GetArraySize(v);
  if (want_n >= 0 && len != want_n) {
    err_line(j->err, j->errlen, "%s: %s: %lld entries but prefix_lens has %lld", j->file, key,
            (long long)len, (long long)want_n);
    return -1;
  }
  *out = malloc((size_t)(len ? len : 1) * sizeof **out);
  if (!*out) {
    err_line(j->err, j->errlen, "%s: out of memory", j->file);
    return -1;
  }
  int64_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, ++i) {
    int64_t x;
    if (json_integer(e, INT32_MIN, INT32_MAX, &x)) {
      err_line(j->err, j->errlen, "%s: %s[%lld]: not a 32-bit integer", j->file, key, (long long)i);
      return -1;
    }
    if (x < lo) {
      err_line(j->err, j->errlen, "%s: %s[%lld]: negative length %lld", j->file, key, (long long)i,
              (long long)x);
      return -1;
    }
    (*out)[i] = (int32_t)x;
  }
  *n = len;
  return 0;
}

static char *read_text(const char *path, char *err, size_t errlen) {
  const char *why = "";
  char *s = NULL;
  switch (xc_read_text_file(path, CASE_JSON_MAX, &s, NULL, &why)) {
  case XC_READ_OK: return s;
  case XC_READ_OPEN: err_line(err, errlen, "%s: cannot open: %s", path, why); break;
  case XC_READ_TOO_LARGE: err_line(err, errlen, "%s: not a regular file of at most %u bytes", path, CASE_JSON_MAX); break;
  case XC_READ_NUL: err_line(err, errlen, "%s: NUL byte in JSON text", path); break;
  case XC_READ_IO: err_line(err, errlen, "%s: cannot read", path); break;
  }
  return NULL;
}

/* ---- tensors --------------------------------------------------------------- */
static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Loads dir/name.npy; dtypes[] lists the accepted dtypes (ended by -1); want[]
 * the shape (-1: any) and dim_names[] what each dimension is called in
 * case.json, so a mismatch can say which field disagrees. */
static xattn_status load_npy(const char *dir, const char *name, const int *dtypes, int ndim,
                             const int64_t *want, const char *const *dim_names, npy_array *a,
                             char *err, size_t errlen) {
  char file[64];
  snprintf(file, sizeof file, "%s.npy", name);
  char *path = join(dir, file);
  if (!path) return err_line(err, errlen, "%s: out of memory", file), XATTN_ERR_NOMEM;
  xattn_status st = XATTN_OK;
  if (npy_read(path, a, err, errlen)) {
    st = XATTN_ERR_IO;
    goto out;
  }
  int ok = 0;
  char accepted[64] = "";
  for (int i = 0; dtypes[i] >= 0; ++i) {
    ok |= (int)a->dtype == dtypes[i];
    snprintf(accepted + strlen(accepted), sizeof accepted - strlen(accepted), "%s%s",
             i ? " or " : "", npy_dtype_descr((npy_dtype)dtypes[i]));
  }
  if (!ok) {
    err_line(err, errlen, "%s: dtype %s, want %s", path, npy_dtype_descr(a->dtype), accepted);
    st = XATTN_ERR_DTYPE;
    goto out;
  }
  int match = a->ndim == ndim;
  for (int i = 0; match && i < ndim; ++i) match = want[i] < 0 || want[i] == a->shape[i];
  if (!match) {
    char got[160], exp[256];
    size_t n = 0;
    npy_shape_string(a->ndim, a->shape, got, sizeof got);
    n += (size_t)snprintf(exp, sizeof exp, "[");
    for (int i = 0; i < ndim && n < sizeof exp; ++i) {
      if (want[i] < 0)
        n += (size_t)snprintf(exp + n, sizeof exp - n, "%s%s", i ? ", " : "", dim_names[i]);
      else
        n += (size_t)snprintf(exp + n, sizeof exp - n, "%s%s=%lld", i ? ", " : "", dim_names[i],
                              (long long)want[i]);
    }
    if (n < sizeof exp) snprintf(exp + n, sizeof exp - n, "]");
    err_line(err, errlen, "%s: shape %s, case.json implies %s", path, got, exp);
    st = XATTN_ERR_SHAPE;
  }
out:
  if (st != XATTN_OK) npy_free(a);
  free(path);
  return st;
}


/* ---- strided tensors (optional "strides" object of case.json) --------------- */
static const char *const view_names[5] = {"q", "k_ext", "v_ext", "k_cache", "v_cache"};

/* "strides": {"q": [token, head], ..., "k_cache": [token, head, block]} in
 * elements; a tensor named there is stored as a flat 1-D array its strides
 * index (the layout of the caller's memory, padding included). */
static int get_strides(json_ctx *j, int64_t strides[5][3], int strided[5]) {
  memset(strided, 0, 5 * sizeof *strided);
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(j->root, "strides");
  if (!o) return 0;
  if (!cJSON_IsObject(o)) {
    err_line(j->err, j->errlen, "%s: strides: not an object", j->file);
    return -1;
  }
  for (const cJSON *e = o->child; e; e = e->next) {
    int k = -1;
    for (int i = 0; i < 5; ++i)
      if (e->string && !strcmp(e->string, view_names[i])) k = i;
    if (k < 0) {
      err_line(j->err, j->errlen, "%s: strides: unknown tensor '%s' (want q, k_ext, v_ext, k_cache or v_cache)",
               j->file, e->string ? e->string : "?");
      return -1;
    }
    const int n = cJSON_IsArray(e) ? cJSON_GetArraySize(e) : -1, want = k >= 3 ? 3 : 2;
    if (n != want && !(k >= 3 && n == 2)) {
      err_line(j->err, j->errlen, "%s: strides.%s: want [token_stride, head_stride%s]", j->file, e->string,
               k >= 3 ? "] or [token_stride, head_stride, block_stride" : "");
      return -1;
    }
    strides[k][2] = 0;
    for (int i = 0; i < n; ++i)
      if (json_integer(cJSON_GetArrayItem(e, i), 0, INT64_MAX / 4, &strides[k][i])) {
        err_line(j->err, j->errlen, "%s: strides.%s[%d]: not a non-negative integer", j->file, e->string, i);
        return -1;
      }
    strided[k] = 1;
  }
  return 0;
}

static xattn_tensor dense_or_strided(const void *data, int64_t ts, int64_t hs, int strided, const int64_t *s) {
  return strided ? (xattn_tensor){data, s[0], s[1]} : (xattn_tensor){data, ts, hs};
}

static int xattn_is_fp8_dtype(xattn_dtype t) { return t == XATTN_E4M3FN || t == XATTN_E5M2; }

static int file_exists(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  struct stat st;
  return stat(path, &st) == 0;
}

static xattn_status load_npy(const char *dir, const char *name, const int *dtypes, int ndim,
                             const int64_t *want, const char *const *dim_names, npy_array *a,
                             char *err, size_t errlen);

/* A tensor file: the dense shape case.json implies, or a flat 1-D array when
 * case.json gives its strides (check_extents then checks it is long enough). */
static xattn_status load_view(const char *dir, const char *name, const int *dtypes, int ndim,
                              const int64_t *want, const char *const *dim_names, int strided,
                              const int64_t *strides, npy_array *a, char *err, size_t errlen) {
  (void)strides;
  if (!strided) return load_npy(dir, name, dtypes, ndim, want, dim_names, a, err, errlen);
  const int64_t any[1] = {-1};
  const char *const flat[1] = {"elements"};
  return load_npy(dir, name, dtypes, 1, any, flat, a, err, errlen);
}

/* Last element + 1 a strided view reaches (0 when it has no element). */
static int64_t view_extent(int64_t rows, int64_t heads, int64_t dim, int64_t ts, int64_t hs) {
  if (rows <= 0) return 0;
  return (rows - 1) * ts + (heads - 1) * hs + dim;
}

/* Every flat (strided) file holds the last element its view reaches. Runs
 * after the library accepted the strides (no overflow past that point). */
static int check_extents(const xattn_case *c, const xattn_problem *p, const char *dir, const int *strided,
                         char *err, size_t errlen) {
  const npy_array *arr[5] = {&c->q, &c->k_ext, &c->v_ext, &c->k_cache, &c->v_cache};
  const xattn_tensor *v[5] = {&p->q, &p->k_ext, &p->v_ext, &p->k_cache, &p->v_cache};
  for (int k = 0; k < 5; ++k) {
    if (!strided[k]) continue;
    const int64_t dim = k == 0 || k == 1 || k == 3 ? p->head_dim : p->head_dim_v;
    const int64_t heads = k == 0 ? p->heads_q : p->heads_kv;
    int64_t need;
    if (k < 3) {
      need = view_extent(p->total_tokens, heads, dim, v[k]->token_stride, v[k]->head_stride);
    } else {
      const int64_t page = p->page_size > 1 ? p->page_size : 1;
      int64_t bs = k == 3 ? p->k_cache_block_stride : p->v_cache_block_stride;
      if (bs <= 0) bs = p->cache_layout == XATTN_CACHE_HEAD_MAJOR ? heads * v[k]->head_stride : page * v[k]->token_stride;
      need = p->cache_slots <= 0 ? 0 : (p->cache_slots - 1) * bs + view_extent(page, heads, dim, v[k]->token_stride, v[k]->head_stride);
    }
    if (arr[k]->count < need) {
      err_line(err, errlen, "%s/%s.npy: %lld elements, its strides reach element %lld", dir, view_names[k],
               (long long)arr[k]->count, (long long)need - 1);
      return -1;
    }
  }
  return 0;
}

int xattn_case_reads(const xattn_case *c, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return 0;
  const unsigned long long dev = (unsigned long long)st.st_dev, ino = (unsigned long long)st.st_ino;
  if (dev == c->json_dev && ino == c->json_ino) return 1;
  const npy_array *arrays[] = {&c->q, &c->k_ext, &c->v_ext, &c->k_cache, &c->v_cache, &c->req_to_token,
                               &c->req_index_file, &c->sinks, &c->tree_mask, &c->k_scales, &c->v_scales};
  for (size_t i = 0; i < sizeof arrays / sizeof *arrays; ++i)
    if (arrays[i]->file_ino && arrays[i]->file_dev == dev && arrays[i]->file_ino == ino) return 1;
  return 0;
}

/* ---- load ------------------------------------------------------------------ */
xattn_status xattn_case_load(const char *dir, xattn_case *c, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  xattn_problem *p = &c->problem;
  xattn_problem_init(p);
  xattn_status st = XATTN_ERR_IO;
  cJSON *root = NULL;
  char *jpath = join(dir, "case.json");
  char *text = jpath ? read_text(jpath, err, errlen) : NULL;
  if (!text) goto fail;
  struct stat jst;
  if (stat(jpath, &jst) == 0) c->json_dev = (unsigned long long)jst.st_dev, c->json_ino = (unsigned long long)jst.st_ino;
  char why[256];
  root = xc_json_parse_strict(text, strlen(text), why, sizeof why); /* no trailing garbage, no duplicate keys */
  if (!root || !cJSON_IsObject(root)) {
    if (!root)
      err_line(err, errlen, "%s: %s", jpath, why);
    else
      err_line(err, errlen, "%s: not a JSON object", jpath);
    goto fail;
  }
  st = XATTN_ERR_SHAPE;
  json_ctx j = {jpath, root, err, errlen};
  for (const cJSON *e = root->child; e; e = e->next) {
    int known = 0;
    for (int i = 0; known_keys[i]; ++i) known |= e->string && !strcmp(e->string, known_keys[i]);
    if (!known) {
      err_line(err, errlen, "%s: unknown key '%s'", jpath, e->string ? e->string : "?");
      goto fail;
    }
  }

  /* shapes and scalars */
  int64_t hq, hkv, d, dv, big = INT32_MAX;
  if (get_int(&j, "heads_q", NULL, 1, big, &hq) || get_int(&j, "heads_kv", NULL, 1, big, &hkv) ||
      get_int(&j, "head_dim", NULL, 1, big, &d) || get_int(&j, "head_dim_v", &d, 1, big, &dv))
    goto fail;
  p->heads_q = (int32_t)hq;
  p->heads_kv = (int32_t)hkv;
  p->head_dim = (int32_t)d;
  p->head_dim_v = (int32_t)dv;
  if (get_float32(&j, "scale", 1.0 / sqrt((double)d), &p->scale) || get_float32(&j, "logit_cap", 0.0, &p->logit_cap))
    goto fail;

  const char *s;
  st = XATTN_ERR_DTYPE;
  if (get_str(&j, "dtype", NULL, &s)) goto fail;
  if (xattn_dtype_parse(s, &p->dtype)) {
    err_line(err, errlen, "%s: dtype: unknown dtype '%s' (want f32, bf16 or f16)", jpath, s);
    goto fail;
  }
  if (get_str(&j, "cache_dtype", "same", &s)) goto fail;
  if (strcmp(s, "same") && (xattn_dtype_parse(s, &p->cache_dtype) ||
                            (p->cache_dtype != XATTN_E4M3FN && p->cache_dtype != XATTN_E5M2 && p->cache_dtype != p->dtype))) {
    err_line(err, errlen, "%s: cache_dtype: '%s' (want same, %s, e4m3fn or e5m2)", jpath, s, xattn_dtype_name(p->dtype));
    goto fail;
  }
  if (get_float32(&j, "k_scale", 1.0, &p->k_scale) || get_float32(&j, "v_scale", 1.0, &p->v_scale)) goto fail;
  const cJSON *hks = cJSON_GetObjectItemCaseSensitive(root, "has_kv_scales");
  if (hks && !cJSON_IsBool(hks)) {
    err_line(err, errlen, "%s: has_kv_scales: not true or false", jpath);
    goto fail;
  }
  const int has_kv_scales = hks && cJSON_IsTrue(hks);
  st = XATTN_ERR_MODE;
  if (get_str(&j, "mode", "causal", &s)) goto fail;
  if (xattn_mode_parse(s, &p->mode)) {
    err_line(err, errlen, "%s: mode: unknown mode '%s' (want causal, bidirectional, cross or tree)",
            jpath, s);
    goto fail;
  }
  if (get_str(&j, "align", "bottom_right", &s)) goto fail;
  if (xattn_align_parse(s, &p->align)) {
    err_line(err, errlen, "%s: align: unknown alignment '%s' (want bottom_right or top_left)", jpath,
            s);
    goto fail;
  }
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "window");
  p->window_left = p->window_right = -1;
  if (w) {
    int64_t l, r;
    if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) != 2 ||
        json_integer(cJSON_GetArrayItem(w, 0), INT32_MIN, INT32_MAX, &l) ||
        json_integer(cJSON_GetArrayItem(w, 1), INT32_MIN, INT32_MAX, &r)) {
      err_line(err, errlen, "%s: window: not [left, right] integers", jpath);
      goto fail;
    }
    p->window_left = (int32_t)l;
    p->window_right = (int32_t)r;
  }
  const cJSON *hs = cJSON_GetObjectItemCaseSensitive(root, "has_sinks");
  if (hs && !cJSON_IsBool(hs)) {
    err_line(err, errlen, "%s: has_sinks: not true or false", jpath);
    goto fail;
  }
  c->has_sinks = hs && cJSON_IsTrue(hs);

  /* batch */
  st = XATTN_ERR_SHAPE;
  int64_t B, n2;
  if (get_int_array(&j, "prefix_lens", -1, 0, &c->prefix_lens, &B) ||
      get_int_array(&j, "extend_lens", B, 0, &c->extend_lens, &n2))
    goto fail;
  const cJSON *enc = cJSON_GetObjectItemCaseSensitive(root, "encoder_lens");
  if (p->mode == XATTN_MODE_CROSS) {
    if (get_int_array(&j, "encoder_lens", B, 0, &c->encoder_lens, &n2)) goto fail;
  } else if (enc) {
    err_line(err, errlen, "%s: encoder_lens: given but mode is %s (cross only)", jpath,
            xattn_mode_name(p->mode));
    goto fail;
  }
  if (B > INT32_MAX) {
    err_line(err, errlen, "%s: prefix_lens: too many requests", jpath);
    goto fail;
  }
  int64_t T = 0;
  for (int64_t b = 0; b < B; ++b) {
    T += c->extend_lens[b];
    if (c->extend_lens[b] > c->max_extend) c->max_extend = c->extend_lens[b];
  }
  p->batch = (int32_t)B;
  p->prefix_lens = c->prefix_lens;
  p->extend_lens = c->extend_lens;
  p->encoder_lens = c->encoder_lens;
  p->total_tokens = T;

  /* KV cache storage: slot table or paged blocks (either layout), table start columns */
  int64_t page, one = 1;
  if (get_int(&j, "page_size", &one, 1, INT32_MAX, &page)) goto fail;
  p->page_size = (int32_t)page;
  st = XATTN_ERR_MODE;
  if (get_str(&j, "cache_layout", "token_major", &s)) goto fail;
  if (xattn_cache_layout_parse(s, &p->cache_layout)) {
    err_line(err, errlen, "%s: cache_layout: unknown layout '%s' (want token_major or head_major)", jpath, s);
    goto fail;
  }
  st = XATTN_ERR_SHAPE;
  if (cJSON_GetObjectItemCaseSensitive(root, "req_start_col")) {
    int32_t *cols = NULL;
    if (get_int_array(&j, "req_start_col", B, 0, &cols, &n2)) {
      free(cols);
      goto fail;
    }
    c->req_start_col = malloc((size_t)(B ? B : 1) * sizeof *c->req_start_col);
    if (c->req_start_col)
      for (int64_t b = 0; b < B; ++b) c->req_start_col[b] = cols[b];
    free(cols);
    if (!c->req_start_col) goto oom;
    p->req_start_col = c->req_start_col;
  }
  int64_t strides[5][3];
  int strided[5];
  if (get_strides(&j, strides, strided)) goto fail;
  const int paged = page > 1 || p->cache_layout == XATTN_CACHE_HEAD_MAJOR;
  int64_t slots = -1;
  if ((strided[3] || strided[4]) && get_int(&j, "cache_slots", NULL, 0, INT64_MAX / 2, &slots)) goto fail;

  /* tensors */
  const int kv_dt[] = {(int)xattn_case_npy_dtype(p->dtype), -1};
  const int cache_dt[] = {(int)xattn_case_npy_dtype(xattn_is_fp8_dtype(p->cache_dtype) ? p->cache_dtype : p->dtype), -1};
  const int idx_dt[] = {NPY_I4, NPY_I8, -1};
  const int f4_dt[] = {NPY_F4, -1};
  const int b1_dt[] = {NPY_B1, -1};
  const char *const tok_names_q[] = {"T", "heads_q", "head_dim"};
  const char *const tok_names_k[] = {"T", "heads_kv", "head_dim"};
  const char *const tok_names_v[] = {"T", "heads_kv", "head_dim_v"};
  const char *const slot_names_k[] = {"slots", "heads_kv", "head_dim"};
  const char *const slot_names_v[] = {"slots", "heads_kv", "head_dim_v"};
  const char *const tm_names_k[] = {"blocks", "page_size", "heads_kv", "head_dim"};
  const char *const tm_names_v[] = {"blocks", "page_size", "heads_kv", "head_dim_v"};
  const char *const hm_names_k[] = {"blocks", "heads_kv", "page_size", "head_dim"};
  const char *const hm_names_v[] = {"blocks", "heads_kv", "page_size", "head_dim_v"};
  const char *const table_names[] = {"max_reqs", "max_ctx"};
  const char *const batch_names[] = {"B"};
  const char *const sink_names[] = {"heads_q"};
  const char *const tree_names[] = {"B", "max_E", "max_E"};
  int64_t sq[3] = {T, hq, d}, sk[3] = {T, hkv, d}, sv[3] = {T, hkv, dv};
  /* cross mode never reads k_ext / v_ext: the files may be absent */
  const int ext_files = p->mode != XATTN_MODE_CROSS || file_exists(dir, "k_ext") || file_exists(dir, "v_ext");
  if ((st = load_view(dir, "q", kv_dt, 3, sq, tok_names_q, strided[0], strides[0], &c->q, err, errlen)) ||
      (ext_files && (st = load_view(dir, "k_ext", kv_dt, 3, sk, tok_names_k, strided[1], strides[1], &c->k_ext, err, errlen))) ||
      (ext_files && (st = load_view(dir, "v_ext", kv_dt, 3, sv, tok_names_v, strided[2], strides[2], &c->v_ext, err, errlen))))
    goto fail;
  const int hm = p->cache_layout == XATTN_CACHE_HEAD_MAJOR;
  int64_t ck3[3] = {slots, hkv, d}, ck4[4] = {slots, hm ? hkv : page, hm ? page : hkv, d};
  if ((st = load_view(dir, "k_cache", cache_dt, paged ? 4 : 3, paged ? ck4 : ck3,
                      paged ? (hm ? hm_names_k : tm_names_k) : slot_names_k, strided[3], strides[3], &c->k_cache,
                      err, errlen)))
    goto fail;
  if (slots < 0) slots = c->k_cache.shape[0];
  int64_t cv3[3] = {slots, hkv, dv}, cv4[4] = {slots, hm ? hkv : page, hm ? page : hkv, dv};
  if ((st = load_view(dir, "v_cache", cache_dt, paged ? 4 : 3, paged ? cv4 : cv3,
                      paged ? (hm ? hm_names_v : tm_names_v) : slot_names_v, strided[4], strides[4], &c->v_cache,
                      err, errlen)))
    goto fail;
  if (has_kv_scales) { /* [cache tokens, heads_kv]: tokens = slots, or blocks x page_size */
    const char *const scale_names[] = {"cache tokens", "heads_kv"};
    int64_t ss[2] = {slots * page, hkv};
    if ((st = load_npy(dir, "k_scales", f4_dt, 2, ss, scale_names, &c->k_scales, err, errlen)) ||
        (st = load_npy(dir, "v_scales", f4_dt, 2, ss, scale_names, &c->v_scales, err, errlen)))
      goto fail;
    p->k_scales = c->k_scales.data;
    p->v_scales = c->v_scales.data;
  }
  int64_t tt[2] = {-1, -1}, ri[1] = {B};
  if ((st = load_npy(dir, "req_to_token", idx_dt, 2, tt, table_names, &c->req_to_token, err,
                     errlen)) ||
      (st = load_npy(dir, "req_index", idx_dt, 1, ri, batch_names, &c->req_index_file, err,
                     errlen)))
    goto fail;
  int64_t sh[1] = {hq};
  if (c->has_sinks &&
      (st = load_npy(dir, "sinks", f4_dt, 1, sh, sink_names, &c->sinks, err, errlen)))
    goto fail;
  if (p->mode == XATTN_MODE_TREE) {
    int64_t tm[3] = {B, -1, -1};
    if ((st = load_npy(dir, "tree_mask", b1_dt, 3, tm, tree_names, &c->tree_mask, err, errlen)))
      goto fail;
    st = XATTN_ERR_SHAPE;
    if (c->tree_mask.shape[1] != c->tree_mask.shape[2] || c->tree_mask.shape[1] < c->max_extend ||
        c->tree_mask.shape[1] > INT32_MAX) {
      err_line(err, errlen, "%s/tree_mask.npy: shape [%lld, %lld, %lld], want [B, max_E, max_E] "
              "with max_E >= max(extend_lens) = %lld", dir, (long long)c->tree_mask.shape[0],
              (long long)c->tree_mask.shape[1], (long long)c->tree_mask.shape[2],
              (long long)c->max_extend);
      goto fail;
    }
    const uint8_t *m = c->tree_mask.data;
    for (int64_t i = 0; i < c->tree_mask.count; ++i)
      if (m[i] > 1) {
        err_line(err, errlen, "%s/tree_mask.npy: element %lld is %u, not a bool", dir, (long long)i,
                m[i]);
        goto fail;
      }
    p->tree_mask = m;
    p->tree_max_extend = (int32_t)c->tree_mask.shape[1];
  }

  /* dense C-order arrays unless case.json gives strides (elements) */
  p->q = dense_or_strided(c->q.data, hq * d, d, strided[0], strides[0]);
  p->k_ext = dense_or_strided(c->k_ext.data, hkv * d, d, strided[1], strides[1]);
  p->v_ext = dense_or_strided(c->v_ext.data, hkv * dv, dv, strided[2], strides[2]);
  p->k_cache = dense_or_strided(c->k_cache.data, hm ? d : hkv * d, hm ? page * d : d, strided[3], strides[3]);
  p->v_cache = dense_or_strided(c->v_cache.data, hm ? dv : hkv * dv, hm ? page * dv : dv, strided[4], strides[4]);
  if (strided[3]) p->k_cache_block_stride = strides[3][2];
  if (strided[4]) p->v_cache_block_stride = strides[4][2];
  p->cache_slots = slots;
  p->o.data = NULL;
  p->o.token_stride = hq * dv;
  p->o.head_stride = dv;
  p->req_to_token = c->req_to_token.data;
  p->req_to_token_type = c->req_to_token.dtype == NPY_I8 ? XATTN_I64 : XATTN_I32;
  p->max_reqs = c->req_to_token.shape[0];
  p->max_ctx = c->req_to_token.shape[1];
  c->req_index = malloc((size_t)(B ? B : 1) * sizeof *c->req_index);
  if (!c->req_index) goto oom;
  for (int64_t b = 0; b < B; ++b)
    c->req_index[b] = c->req_index_file.dtype == NPY_I8 ? ((const int64_t *)c->req_index_file.data)[b]
                                                        : ((const int32_t *)c->req_index_file.data)[b];
  p->req_index = c->req_index;
  p->sinks = c->has_sinks ? c->sinks.data : NULL;

  /* every semantic rule belongs to the library: ask it, with a scratch o so
   * that a NULL output is not what it complains about */
  float o_probe;
  p->o.data = &o_probe;
  st = xattn_validate(p);
  p->o.data = NULL;
  if (st != XATTN_OK) {
    err_line(err, errlen, "%s: %s", dir, xattn_last_error());
    goto fail;
  }
  st = XATTN_ERR_SHAPE;
  if (check_extents(c, p, dir, strided, err, errlen)) goto fail;
  cJSON_Delete(root);
  free(text);
  free(jpath);
  return XATTN_OK;
oom:
  st = XATTN_ERR_NOMEM;
  err_line(err, errlen, "%s: out of memory", dir);
fail:
  cJSON_Delete(root);
  free(text);
  free(jpath);
  xattn_case_free(c);
  xattn_problem_init(&c->problem);
  return st;
}

void xattn_case_free(xattn_case *c) {
  free(c->prefix_lens);
  free(c->extend_lens);
  free(c->encoder_lens);
  free(c->req_index);
  free(c->req_start_col);
  npy_array *arrays[] = {&c->q, &c->k_ext, &c->v_ext, &c->k_cache, &c->v_cache,
                         &c->req_to_token, &c->req_index_file, &c->sinks, &c->tree_mask,
                         &c->k_scales, &c->v_scales};
  for (size_t i = 0; i < sizeof arrays / sizeof *arrays; ++i) npy_free(arrays[i]);
  memset(c, 0, sizeof *c);
}

xattn_status xattn_case_write_output(const char *path, const void *o, xattn_dtype t, int as_f64,
                                     int64_t tokens, int heads_q, int head_dim_v, char *err,
                                     size_t errlen) {
  int64_t shape[3] = {tokens, heads_q, head_dim_v};
  npy_dtype nt = as_f64 ? NPY_F8 : xattn_case_npy_dtype(t);
  return npy_write(path, nt, 3, shape, o, err, errlen) ? XATTN_ERR_IO : XATTN_OK;
}

/* ---- save ------------------------------------------------------------------ */
/* Dense copy of rows[0..n) of a strided [rows, heads, dim] view (NULL data: zeros). */
static void *dense_rows(const xattn_tensor *v, const int64_t *rows, int64_t n, int heads, int dim,
                        size_t es) {
  size_t row_bytes = (size_t)heads * (size_t)dim * es;
  char *out = calloc((size_t)(n ? n : 1), row_bytes ? row_bytes : 1);
  if (!out || !v->data) return out;
  for (int64_t r = 0; r < n; ++r)
    for (int h = 0; h < heads; ++h)
      memcpy(out + (size_t)r * row_bytes + (size_t)h * (size_t)dim * es,
             (const char *)v->data + (size_t)(rows[r] * v->token_stride + h * v->head_stride) * es,
             (size_t)dim * es);
  return out;
}

/* Dense copy of a paged cache tensor in its layout: [blocks, page, heads, dim]
 * (token-major) or [blocks, heads, page, dim] (head-major). */
static void *dense_blocks(const xattn_problem *p, int v, int dim, size_t es) {
  const xattn_tensor *t = v ? &p->v_cache : &p->k_cache;
  const int64_t page = p->page_size > 1 ? p->page_size : 1, heads = p->heads_kv, blocks = p->cache_slots;
  int64_t bs = v ? p->v_cache_block_stride : p->k_cache_block_stride;
  if (bs <= 0) bs = p->cache_layout == XATTN_CACHE_HEAD_MAJOR ? heads * t->head_stride : page * t->token_stride;
  const size_t row = (size_t)dim * es;
  char *out = calloc((size_t)(blocks ? blocks : 1) * (size_t)page * (size_t)heads, row ? row : 1);
  if (!out || !t->data) return out;
  char *dst = out;
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t a = 0; a < (p->cache_layout == XATTN_CACHE_HEAD_MAJOR ? heads : page); ++a)
      for (int64_t c = 0; c < (p->cache_layout == XATTN_CACHE_HEAD_MAJOR ? page : heads); ++c, dst += row) {
        const int64_t i = p->cache_layout == XATTN_CACHE_HEAD_MAJOR ? c : a, h = p->cache_layout == XATTN_CACHE_HEAD_MAJOR ? a : c;
        memcpy(dst, (const char *)t->data + (size_t)(blk * bs + i * t->token_stride + h * t->head_stride) * es, row);
      }
  return out;
}

static int save_npy(const char *dir, const char *name, npy_dtype t, int ndim, const int64_t *shape,
                    const void *data, char *err, size_t errlen) {
  char file[64];
  snprintf(file, sizeof file, "%s.npy", name);
  char *path = join(dir, file);
  int rc = path ? npy_write(path, t, ndim, shape, data, err, errlen) : -1;
  free(path);
  return rc;
}

xattn_status xattn_case_save(const char *dir, const xattn_problem *p, char *err, size_t errlen) {
  xattn_problem probe = *p;
  float o_probe;
  if (!probe.o.data) probe.o.data = &o_probe; /* the output is not part of a case */
  xattn_status st = xattn_validate(&probe);
  if (st != XATTN_OK) {
    err_line(err, errlen, "%s: %s", dir, xattn_last_error());
    return st;
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    err_line(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
    return XATTN_ERR_IO;
  }
  const int B = p->batch, hq = p->heads_q, hkv = p->heads_kv, d = p->head_dim, dv = p->head_dim_v;
  const size_t es = xattn_dtype_size(p->dtype);
  const npy_dtype nt = xattn_case_npy_dtype(p->dtype);
  const int fp8 = xattn_is_fp8_dtype(p->cache_dtype);
  const size_t ces = fp8 ? 1 : es; /* cache element size */
  const npy_dtype cnt = fp8 ? NPY_U1 : nt;
  int64_t T = 0;
  for (int b = 0; b < B; ++b) T += p->extend_lens[b];
  /* source rows of the packed extend tokens; all cache slots in order */
  int64_t *rows = malloc(sizeof *rows * (size_t)(T ? T : 1));
  int64_t *slots = malloc(sizeof *slots * (size_t)(p->cache_slots ? p->cache_slots : 1));
  int64_t *req_index = malloc(sizeof *req_index * (size_t)(B ? B : 1));
  void *bufs[6] = {0};
  cJSON *root = NULL;
  char *text = NULL;
  st = XATTN_ERR_NOMEM;
  if (!rows || !slots || !req_index) goto out;
  for (int b = 0, t = 0, next = 0; b < B; ++b) {
    int64_t start = p->extend_start ? p->extend_start[b] : next;
    for (int i = 0; i < p->extend_lens[b]; ++i) rows[t++] = start + i;
    next = (int)(start + p->extend_lens[b]);
    req_index[b] = p->req_index ? p->req_index[b] : 0;
  }
  for (int64_t s = 0; s < p->cache_slots; ++s) slots[s] = s;
  int64_t slots_n = p->k_cache.data ? p->cache_slots : 0;
  bufs[0] = dense_rows(&p->q, rows, T, hq, d, es);
  bufs[1] = dense_rows(&p->k_ext, rows, T, hkv, d, es);
  bufs[2] = dense_rows(&p->v_ext, rows, T, hkv, dv, es);
  const int paged = p->page_size > 1 || p->cache_layout == XATTN_CACHE_HEAD_MAJOR || p->k_cache_block_stride > 0 ||
                    p->v_cache_block_stride > 0;
  const int64_t page = p->page_size > 1 ? p->page_size : 1, hm = p->cache_layout == XATTN_CACHE_HEAD_MAJOR;
  bufs[3] = paged ? dense_blocks(p, 0, d, ces) : dense_rows(&p->k_cache, slots, slots_n, hkv, d, ces);
  bufs[4] = paged ? dense_blocks(p, 1, dv, ces) : dense_rows(&p->v_cache, slots, slots_n, hkv, dv, ces);
  for (int i = 0; i < 5; ++i)
    if (!bufs[i]) goto out;
  st = XATTN_ERR_IO;
  int64_t sq[3] = {T, hq, d}, sk[3] = {T, hkv, d}, sv[3] = {T, hkv, dv};
  int64_t ck[4] = {slots_n, hkv, d}, cv[4] = {slots_n, hkv, dv}, sb[1] = {B};
  if (paged) {
    int64_t k4[4] = {slots_n, hm ? hkv : page, hm ? page : hkv, d}, v4[4] = {slots_n, k4[1], k4[2], dv};
    memcpy(ck, k4, sizeof k4);
    memcpy(cv, v4, sizeof v4);
  }
  if (save_npy(dir, "q", nt, 3, sq, bufs[0], err, errlen) ||
      save_npy(dir, "k_ext", nt, 3, sk, bufs[1], err, errlen) ||
      save_npy(dir, "v_ext", nt, 3, sv, bufs[2], err, errlen) ||
      save_npy(dir, "k_cache", cnt, paged ? 4 : 3, ck, bufs[3], err, errlen) ||
      save_npy(dir, "v_cache", cnt, paged ? 4 : 3, cv, bufs[4], err, errlen) ||
      save_npy(dir, "req_index", NPY_I8, 1, sb, req_index, err, errlen))
    goto out;
  if (p->req_to_token) {
    int64_t tt[2] = {p->max_reqs, p->max_ctx};
    if (save_npy(dir, "req_to_token", p->req_to_token_type == XATTN_I64 ? NPY_I8 : NPY_I4, 2, tt,
                 p->req_to_token, err, errlen))
      goto out;
  } else { /* no request reads the cache: an all-zero table long enough for every request */
    int64_t ctx = 1;
    for (int b = 0; b < B; ++b) {
      int64_t s = p->mode == XATTN_MODE_CROSS ? p->encoder_lens[b] : (int64_t)p->prefix_lens[b] + p->extend_lens[b];
      if (s > ctx) ctx = s;
    }
    int64_t tt[2] = {1, ctx};
    bufs[5] = calloc((size_t)ctx, sizeof(int32_t));
    if (!bufs[5] || save_npy(dir, "req_to_token", NPY_I4, 2, tt, bufs[5], err, errlen)) goto out;
  }
  const int kv_scales = fp8 && p->k_scales && p->v_scales;
  if (fp8 && !kv_scales && (p->k_scales || p->v_scales)) {
    err_line(err, errlen, "%s: k_scales and v_scales: a case holds both or neither", dir);
    st = XATTN_ERR_NULL;
    goto out;
  }
  if (kv_scales) {
    int64_t ss[2] = {slots_n * page, hkv};
    if (save_npy(dir, "k_scales", NPY_F4, 2, ss, p->k_scales, err, errlen) ||
        save_npy(dir, "v_scales", NPY_F4, 2, ss, p->v_scales, err, errlen))
      goto out;
  }
  if (p->sinks) {
    int64_t sh[1] = {hq};
    if (save_npy(dir, "sinks", NPY_F4, 1, sh, p->sinks, err, errlen)) goto out;
  }
  if (p->mode == XATTN_MODE_TREE && p->tree_mask) {
    int64_t m = p->tree_max_extend, tm[3] = {B, m, m};
    if (save_npy(dir, "tree_mask", NPY_B1, 3, tm, p->tree_mask, err, errlen)) goto out;
  }
  root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "dtype", xattn_dtype_name(p->dtype));
  cJSON_AddNumberToObject(root, "heads_q", hq);
  cJSON_AddNumberToObject(root, "heads_kv", hkv);
  cJSON_AddNumberToObject(root, "head_dim", d);
  cJSON_AddNumberToObject(root, "head_dim_v", dv);
  cJSON_AddNumberToObject(root, "scale", (double)p->scale); /* exact: float -> double -> float */
  cJSON_AddNumberToObject(root, "logit_cap", (double)p->logit_cap);
  cJSON_AddStringToObject(root, "mode", xattn_mode_name(p->mode));
  cJSON_AddStringToObject(root, "align", xattn_align_name(p->align));
  int win[2] = {p->window_left, p->window_right};
  cJSON_AddItemToObject(root, "window", cJSON_CreateIntArray(win, 2));
  cJSON_AddItemToObject(root, "prefix_lens", cJSON_CreateIntArray(B ? p->prefix_lens : win, B));
  cJSON_AddItemToObject(root, "extend_lens", cJSON_CreateIntArray(B ? p->extend_lens : win, B));
  if (p->mode == XATTN_MODE_CROSS)
    cJSON_AddItemToObject(root, "encoder_lens", cJSON_CreateIntArray(B ? p->encoder_lens : win, B));
  cJSON_AddBoolToObject(root, "has_sinks", p->sinks != NULL);
  if (paged) {
    cJSON_AddNumberToObject(root, "page_size", (double)page);
    cJSON_AddStringToObject(root, "cache_layout", xattn_cache_layout_name(p->cache_layout));
  }
  if (fp8) {
    cJSON_AddStringToObject(root, "cache_dtype", xattn_dtype_name(p->cache_dtype));
    cJSON_AddNumberToObject(root, "k_scale", (double)p->k_scale);
    cJSON_AddNumberToObject(root, "v_scale", (double)p->v_scale);
    cJSON_AddBoolToObject(root, "has_kv_scales", kv_scales);
  }
  if (p->req_start_col && B > 0) {
    cJSON *cols = cJSON_AddArrayToObject(root, "req_start_col");
    for (int b = 0; b < B; ++b) cJSON_AddItemToArray(cols, cJSON_CreateNumber((double)p->req_start_col[b]));
  }
  text = cJSON_Print(root);
  char *jpath = join(dir, "case.json"), *tmp = join(dir, "case.json.tmp");
  FILE *f = text && tmp ? fopen(tmp, "w") : NULL;
  int ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, jpath) != 0) ok = 0;
  if (!ok) err_line(err, errlen, "%s/case.json: cannot write", dir);
  free(jpath);
  free(tmp);
  st = ok ? XATTN_OK : XATTN_ERR_IO;
out:
  if (st == XATTN_ERR_NOMEM) err_line(err, errlen, "%s: out of memory", dir);
  cJSON_Delete(root);
  free(text);
  for (int i = 0; i < 6; ++i) free(bufs[i]);
  free(rows);
  free(slots);
  free(req_index);
  return st;
}
