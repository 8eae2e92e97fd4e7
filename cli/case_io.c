/* Case folder loader (docs/formats.md §1); see case_io.h for the division of labour with
 * xattn_validate(). */
#define _POSIX_C_SOURCE 200809L
#include "case_io.h"
#include "err_line.h"

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
  FILE *f = fopen(path, "rb");
  if (!f) {
    err_line(err, errlen, "%s: cannot open", path);
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)CASE_JSON_MAX) {
    err_line(err, errlen, "%s: not a regular file of at most %u bytes", path, CASE_JSON_MAX);
    fclose(f);
    return NULL;
  }
  char *s = malloc((size_t)st.st_size + 1);
  if (!s || fread(s, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    err_line(err, errlen, "%s: cannot read", path);
    free(s);
    fclose(f);
    return NULL;
  }
  s[st.st_size] = '\0';
  fclose(f);
  if (strlen(s) != (size_t)st.st_size) {
    err_line(err, errlen, "%s: NUL byte in JSON text", path);
    free(s);
    return NULL;
  }
  return s;
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
  root = cJSON_Parse(text);
  if (!root || !cJSON_IsObject(root)) {
    const char *at = cJSON_GetErrorPtr();
    if (!root && at && at >= text && at <= text + strlen(text))
      err_line(err, errlen, "%s: invalid JSON near byte %ld", jpath, (long)(at - text));
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
  double scale, cap;
  if (get_float(&j, "scale", 1.0 / sqrt((double)d), &scale) ||
      get_float(&j, "logit_cap", 0.0, &cap))
    goto fail;
  p->scale = (float)scale;
  p->logit_cap = (float)cap;

  const char *s;
  st = XATTN_ERR_DTYPE;
  if (get_str(&j, "dtype", NULL, &s)) goto fail;
  if (xattn_dtype_parse(s, &p->dtype)) {
    err_line(err, errlen, "%s: dtype: unknown dtype '%s' (want f32, bf16 or f16)", jpath, s);
    goto fail;
  }
  st = XATTN_ERR_MODE;
  if (get_str(&j, "mode", "causal", &s)) goto fail;
  if (xattn_mode_parse(s, &p->mode)) {
    err_line(err, errlen, "%s: mode: unknown mode '%s' (want causal, bidirectional, cross or tree)",
            jpath, s);
    goto fail;
  }
  if (get_str(&j, "align", "bottom_right", &s)) goto fail;
  if (!strcmp(s, "bottom_right"))
    p->align = XATTN_ALIGN_BOTTOM_RIGHT;
  else if (!strcmp(s, "top_left"))
    p->align = XATTN_ALIGN_TOP_LEFT;
  else {
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

  /* tensors */
  const int kv_dt[] = {(int)xattn_case_npy_dtype(p->dtype), -1};
  const int idx_dt[] = {NPY_I4, NPY_I8, -1};
  const int f4_dt[] = {NPY_F4, -1};
  const int b1_dt[] = {NPY_B1, -1};
  const char *const tok_names_q[] = {"T", "heads_q", "head_dim"};
  const char *const tok_names_k[] = {"T", "heads_kv", "head_dim"};
  const char *const tok_names_v[] = {"T", "heads_kv", "head_dim_v"};
  const char *const slot_names_k[] = {"slots", "heads_kv", "head_dim"};
  const char *const slot_names_v[] = {"slots", "heads_kv", "head_dim_v"};
  const char *const table_names[] = {"max_reqs", "max_ctx"};
  const char *const batch_names[] = {"B"};
  const char *const sink_names[] = {"heads_q"};
  const char *const tree_names[] = {"B", "max_E", "max_E"};
  int64_t sq[3] = {T, hq, d}, sk[3] = {T, hkv, d}, sv[3] = {T, hkv, dv};
  if ((st = load_npy(dir, "q", kv_dt, 3, sq, tok_names_q, &c->q, err, errlen)) ||
      (st = load_npy(dir, "k_ext", kv_dt, 3, sk, tok_names_k, &c->k_ext, err, errlen)) ||
      (st = load_npy(dir, "v_ext", kv_dt, 3, sv, tok_names_v, &c->v_ext, err, errlen)))
    goto fail;
  int64_t ck[3] = {-1, hkv, d};
  if ((st = load_npy(dir, "k_cache", kv_dt, 3, ck, slot_names_k, &c->k_cache, err, errlen)))
    goto fail;
  int64_t cv[3] = {c->k_cache.shape[0], hkv, dv};
  if ((st = load_npy(dir, "v_cache", kv_dt, 3, cv, slot_names_v, &c->v_cache, err, errlen)))
    goto fail;
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

  /* tensors are dense C-order arrays: strides follow from the shapes */
  p->q = (xattn_tensor){c->q.data, hq * d, d};
  p->k_ext = (xattn_tensor){c->k_ext.data, hkv * d, d};
  p->v_ext = (xattn_tensor){c->v_ext.data, hkv * dv, dv};
  p->k_cache = (xattn_tensor){c->k_cache.data, hkv * d, d};
  p->v_cache = (xattn_tensor){c->v_cache.data, hkv * dv, dv};
  p->cache_slots = c->k_cache.shape[0];
  p->o = NULL;
  p->o_token_stride = hq * dv;
  p->o_head_stride = dv;
  p->req_to_token = c->req_to_token.data;
  p->req_to_token_type = c->req_to_token.dtype == NPY_I8 ? XATTN_I64 : XATTN_I32;
  p->max_reqs = c->req_to_token.shape[0];
  p->max_ctx = c->req_to_token.shape[1];
  c->req_index = malloc((size_t)(B ? B : 1) * sizeof *c->req_index);
  if (!c->req_index) {
    st = XATTN_ERR_NOMEM;
    err_line(err, errlen, "%s: out of memory", dir);
    goto fail;
  }
  for (int64_t b = 0; b < B; ++b)
    c->req_index[b] = c->req_index_file.dtype == NPY_I8 ? ((const int64_t *)c->req_index_file.data)[b]
                                                        : ((const int32_t *)c->req_index_file.data)[b];
  p->req_index = c->req_index;
  p->sinks = c->has_sinks ? c->sinks.data : NULL;

  /* every semantic rule belongs to the library: ask it, with a scratch o so
   * that a NULL output is not what it complains about */
  float o_probe;
  p->o = &o_probe;
  st = xattn_validate(p);
  p->o = NULL;
  if (st != XATTN_OK) {
    err_line(err, errlen, "%s: %s", dir, xattn_last_error());
    goto fail;
  }
  cJSON_Delete(root);
  free(text);
  free(jpath);
  return XATTN_OK;
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
  npy_array *arrays[] = {&c->q, &c->k_ext, &c->v_ext, &c->k_cache, &c->v_cache,
                         &c->req_to_token, &c->req_index_file, &c->sinks, &c->tree_mask};
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
  if (!probe.o) probe.o = &o_probe; /* the output is not part of a case */
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
  bufs[3] = dense_rows(&p->k_cache, slots, slots_n, hkv, d, es);
  bufs[4] = dense_rows(&p->v_cache, slots, slots_n, hkv, dv, es);
  for (int i = 0; i < 5; ++i)
    if (!bufs[i]) goto out;
  st = XATTN_ERR_IO;
  int64_t sq[3] = {T, hq, d}, sk[3] = {T, hkv, d}, sv[3] = {T, hkv, dv};
  int64_t ck[3] = {slots_n, hkv, d}, cv[3] = {slots_n, hkv, dv}, sb[1] = {B};
  if (save_npy(dir, "q", nt, 3, sq, bufs[0], err, errlen) ||
      save_npy(dir, "k_ext", nt, 3, sk, bufs[1], err, errlen) ||
      save_npy(dir, "v_ext", nt, 3, sv, bufs[2], err, errlen) ||
      save_npy(dir, "k_cache", nt, 3, ck, bufs[3], err, errlen) ||
      save_npy(dir, "v_cache", nt, 3, cv, bufs[4], err, errlen) ||
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
  cJSON_AddStringToObject(root, "align", p->align == XATTN_ALIGN_TOP_LEFT ? "top_left" : "bottom_right");
  int win[2] = {p->window_left, p->window_right};
  cJSON_AddItemToObject(root, "window", cJSON_CreateIntArray(win, 2));
  cJSON_AddItemToObject(root, "prefix_lens", cJSON_CreateIntArray(B ? p->prefix_lens : win, B));
  cJSON_AddItemToObject(root, "extend_lens", cJSON_CreateIntArray(B ? p->extend_lens : win, B));
  if (p->mode == XATTN_MODE_CROSS)
    cJSON_AddItemToObject(root, "encoder_lens", cJSON_CreateIntArray(B ? p->encoder_lens : win, B));
  cJSON_AddBoolToObject(root, "has_sinks", p->sinks != NULL);
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
