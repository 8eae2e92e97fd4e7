/* Workload suites from JSON files (format: bench/suites/README.md).
 * Every error is one line "file: field: reason". Unknown fields are errors so
 * that a typo never silently falls back to a default. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/workload.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xattn_common/files.h"
#include "xattn_common/json_strict.h"
#include "xattn_common/hash.h"

#define MAX_BATCH 65536
#define MAX_LEN (1 << 24)

typedef struct ctx {
  const char *path;
  char *err;
  size_t errlen;
} ctx;

static int fail(const ctx *c, const char *field, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  char line[1024];
  snprintf(line, sizeof line, "%s: %s: %s", c->path, field, why);
  xc_printable(c->err, c->errlen, line); /* names from the file: no raw non-UTF-8 bytes on stderr */
  return -1;
}

/* Generated batches draw from splitmix64 (xattn_common/hash.h): seeded, portable. */

/* Parameters a workload inherits: built-in < suite "defaults" < shape < workload. */
typedef struct params {
  int32_t heads_q, heads_kv, head_dim, head_dim_v;
  xattn_mode mode;
  xattn_align align;
  int32_t window_left, window_right;
  float logit_cap;
  int has_sinks;
  double tree_density;
  int32_t slot_run;
  int32_t page_size;
  xattn_cache_layout cache_layout;
  xattn_dtype kv_cache;
  int ndtypes;
  xattn_dtype dtypes[3];
  uint64_t seed;
} params;

static int get_int(const ctx *c, const char *field, const cJSON *v, int64_t lo, int64_t hi, int64_t *out) {
  if (!cJSON_IsNumber(v)) return fail(c, field, "expected an integer");
  double d = v->valuedouble;
  if (d != floor(d)) return fail(c, field, "expected an integer, got %g", d);
  if (d < (double)lo || d > (double)hi)
    return fail(c, field, "%g out of range [%lld, %lld]", d, (long long)lo, (long long)hi);
  *out = (int64_t)d;
  return 0;
}

/* Applies the parameter fields present in object o; others are left to the
 * caller, who rejects what nobody knows. */
static int apply_params(const ctx *c, const char *where, const cJSON *o, params *p) {
  char f[256];
  const cJSON *v;
  int64_t x = 0;
#define INTFIELD(key, lo, hi, dst)                                  \
  if ((v = cJSON_GetObjectItemCaseSensitive(o, key))) {             \
    snprintf(f, sizeof f, "%s.%s", where, key);                     \
    if (get_int(c, f, v, lo, hi, &x)) return -1;                    \
    dst = (int32_t)x;                                               \
  }
  INTFIELD("heads_q", 1, 4096, p->heads_q)
  INTFIELD("heads_kv", 1, 4096, p->heads_kv)
  INTFIELD("head_dim", 1, 4096, p->head_dim)
  INTFIELD("head_dim_v", 1, 4096, p->head_dim_v)
#undef INTFIELD
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "mode"))) {
    snprintf(f, sizeof f, "%s.mode", where);
    if (!cJSON_IsString(v) || xattn_mode_parse(v->valuestring, &p->mode) != 0)
      return fail(c, f, "expected \"causal\", \"bidirectional\", \"cross\" or \"tree\"");
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "align"))) {
    snprintf(f, sizeof f, "%s.align", where);
    if (!cJSON_IsString(v) || xattn_align_parse(v->valuestring, &p->align))
      return fail(c, f, "expected \"bottom_right\" or \"top_left\"");
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "window"))) {
    snprintf(f, sizeof f, "%s.window", where);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2) return fail(c, f, "expected [left, right] (-1 = unbounded)");
    int64_t l = 0, r = 0;
    if (get_int(c, f, cJSON_GetArrayItem(v, 0), -1, MAX_LEN, &l) ||
        get_int(c, f, cJSON_GetArrayItem(v, 1), -1, MAX_LEN, &r))
      return -1;
    p->window_left = (int32_t)l;
    p->window_right = (int32_t)r;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "logit_cap"))) {
    snprintf(f, sizeof f, "%s.logit_cap", where);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0) return fail(c, f, "expected a number >= 0 (0 = off)");
    p->logit_cap = (float)v->valuedouble;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "sinks"))) {
    snprintf(f, sizeof f, "%s.sinks", where);
    if (!cJSON_IsBool(v)) return fail(c, f, "expected true or false");
    p->has_sinks = cJSON_IsTrue(v);
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "tree_density"))) {
    snprintf(f, sizeof f, "%s.tree_density", where);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1)
      return fail(c, f, "expected a probability in [0, 1]");
    p->tree_density = v->valuedouble;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "slots"))) {
    snprintf(f, sizeof f, "%s.slots", where);
    if (xb_slot_layout_parse(cJSON_IsString(v) ? v->valuestring : "", &p->slot_run) != 0)
      return fail(c, f, "expected \"shuffled\", \"contiguous\" or \"runsN\" (N in 1..%d)", XB_SLOT_RUN_MAX);
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "page_size"))) {
    snprintf(f, sizeof f, "%s.page_size", where);
    if (get_int(c, f, v, 1, XB_SLOT_RUN_MAX, &x)) return -1;
    p->page_size = (int32_t)x;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "cache_layout"))) {
    snprintf(f, sizeof f, "%s.cache_layout", where);
    if (!cJSON_IsString(v) || xattn_cache_layout_parse(v->valuestring, &p->cache_layout) != 0)
      return fail(c, f, "expected \"token_major\" or \"head_major\"");
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "kv_cache"))) {
    snprintf(f, sizeof f, "%s.kv_cache", where);
    xattn_dtype t = XATTN_DTYPE_SAME;
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "same") &&
                               (xattn_dtype_parse(v->valuestring, &t) || (t != XATTN_E4M3FN && t != XATTN_E5M2))))
      return fail(c, f, "expected \"same\", \"e4m3fn\" or \"e5m2\"");
    p->kv_cache = t;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "dtypes"))) {
    snprintf(f, sizeof f, "%s.dtypes", where);
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 1 || n > 3) return fail(c, f, "expected a list of 1 to 3 of \"f32\", \"bf16\", \"f16\"");
    for (int i = 0; i < n; i++) {
      const cJSON *e = cJSON_GetArrayItem(v, i);
      if (!cJSON_IsString(e) || xattn_dtype_parse(e->valuestring, &p->dtypes[i]) != 0)
        return fail(c, f, "entry %d: expected \"f32\", \"bf16\" or \"f16\"", i);
    }
    p->ndtypes = n;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "seed"))) {
    snprintf(f, sizeof f, "%s.seed", where);
    if (get_int(c, f, v, 0, 9007199254740991ll, &x)) return -1;
    p->seed = (uint64_t)x;
  }
  return 0;
}

static int is_param_key(const char *k) {
  static const char *keys[] = {"heads_q", "heads_kv", "head_dim", "head_dim_v", "mode", "align", "window",
                               "logit_cap", "sinks", "tree_density", "slots", "page_size", "cache_layout",
                               "kv_cache", "dtypes", "seed", NULL};
  for (int i = 0; keys[i]; i++)
    if (strcmp(k, keys[i]) == 0) return 1;
  return 0;
}

static int check_keys(const ctx *c, const char *where, const cJSON *o, const char *const *extra) {
  for (const cJSON *it = o->child; it; it = it->next) {
    int known = is_param_key(it->string);
    for (int i = 0; extra && extra[i] && !known; i++) known = strcmp(it->string, extra[i]) == 0;
    if (!known) return fail(c, where, "unknown field \"%s\"", it->string);
  }
  return 0;
}

static int valid_name(const char *s) {
  if (!*s || strlen(s) >= 100) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
          *s == '-' || *s == '_' || *s == '+' || *s == '='))
      return 0;
  return 1;
}

/* A length distribution: an integer, {"dist":"uniform"|"loguniform","min","max"} or {"dist":"choice","values":[..]}. */
static int draw(const ctx *c, const char *field, const cJSON *d, uint64_t *rng, int64_t *out) {
  if (cJSON_IsNumber(d)) return get_int(c, field, d, 0, MAX_LEN, out);
  if (!cJSON_IsObject(d)) return fail(c, field, "expected an integer or a distribution object");
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(d, "dist");
  if (!cJSON_IsString(kind)) return fail(c, field, "missing \"dist\" (uniform, loguniform, choice)");
  char f[256];
  if (strcmp(kind->valuestring, "choice") == 0) {
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(d, "values");
    int n = cJSON_IsArray(vals) ? cJSON_GetArraySize(vals) : 0;
    snprintf(f, sizeof f, "%s.values", field);
    if (n < 1) return fail(c, f, "expected a non-empty list of integers");
    int pick = (int)(xc_uniform01(rng) * n);
    if (pick >= n) pick = n - 1;
    for (int i = 0; i < n; i++) { /* validate every entry, not only the one drawn */
      int64_t tmp = 0;
      if (get_int(c, f, cJSON_GetArrayItem(vals, i), 0, MAX_LEN, &tmp)) return -1;
      if (i == pick) *out = tmp;
    }
    return 0;
  }
  int64_t lo = 0, hi = 0;
  snprintf(f, sizeof f, "%s.min", field);
  if (get_int(c, f, cJSON_GetObjectItemCaseSensitive(d, "min"), 0, MAX_LEN, &lo)) return -1;
  snprintf(f, sizeof f, "%s.max", field);
  if (get_int(c, f, cJSON_GetObjectItemCaseSensitive(d, "max"), lo, MAX_LEN, &hi)) return -1;
  if (strcmp(kind->valuestring, "uniform") == 0) {
    *out = lo + (int64_t)(xc_uniform01(rng) * (double)(hi - lo + 1));
    if (*out > hi) *out = hi;
  } else if (strcmp(kind->valuestring, "loguniform") == 0) {
    double a = log((double)(lo > 0 ? lo : 1)), b = log((double)(hi > 0 ? hi : 1));
    *out = (int64_t)llround(exp(a + xc_uniform01(rng) * (b - a)));
    if (*out < lo) *out = lo;
    if (*out > hi) *out = hi;
  } else {
    return fail(c, field, "unknown dist \"%s\" (uniform, loguniform, choice)", kind->valuestring);
  }
  return 0;
}

typedef struct req { int64_t p, e, enc; } req;

static int parse_batch(const ctx *c, const char *where, const cJSON *w, const params *pp, const char *name,
                       req **out, int *count) {
  const cJSON *batch = cJSON_GetObjectItemCaseSensitive(w, "batch");
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(w, "generate");
  char f[256];
  if ((batch != NULL) == (gen != NULL)) return fail(c, where, "needs exactly one of \"batch\" or \"generate\"");
  req *r = NULL;
  int n = 0;
  if (batch) {
    snprintf(f, sizeof f, "%s.batch", where);
    if (!cJSON_IsArray(batch) || cJSON_GetArraySize(batch) < 1)
      return fail(c, f, "expected a non-empty list of [prefix, extend] pairs");
    int64_t total = 0;
    for (const cJSON *e = batch->child; e; e = e->next) {
      const cJSON *cnt = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "count") : NULL;
      int64_t k = 1;
      if (cnt && get_int(c, f, cnt, 1, MAX_BATCH, &k)) return -1;
      total += k;
    }
    if (total > MAX_BATCH) return fail(c, f, "%lld requests, at most %d", (long long)total, MAX_BATCH);
    r = calloc((size_t)total, sizeof *r);
    int idx = 0;
    for (const cJSON *e = batch->child; e; e = e->next, idx++) {
      snprintf(f, sizeof f, "%s.batch[%d]", where, idx);
      req one = {0, 0, 0};
      int64_t k = 1;
      if (cJSON_IsArray(e)) {
        int m = cJSON_GetArraySize(e);
        if (m < 2 || m > 3) { free(r); return fail(c, f, "expected [prefix, extend] or [prefix, extend, encoder_len]"); }
        if (get_int(c, f, cJSON_GetArrayItem(e, 0), 0, MAX_LEN, &one.p) ||
            get_int(c, f, cJSON_GetArrayItem(e, 1), 0, MAX_LEN, &one.e) ||
            (m == 3 && get_int(c, f, cJSON_GetArrayItem(e, 2), 0, MAX_LEN, &one.enc))) { free(r); return -1; }
      } else if (cJSON_IsObject(e)) {
        static const char *const keys[] = {"prefix", "extend", "encoder", "count", NULL};
        for (const cJSON *it = e->child; it; it = it->next) {
          int known = 0;
          for (int i = 0; keys[i]; i++) known |= strcmp(it->string, keys[i]) == 0;
          if (!known) { free(r); return fail(c, f, "unknown field \"%s\" (prefix, extend, encoder, count)", it->string); }
        }
        const cJSON *pv = cJSON_GetObjectItemCaseSensitive(e, "prefix"), *ev = cJSON_GetObjectItemCaseSensitive(e, "extend");
        const cJSON *nv = cJSON_GetObjectItemCaseSensitive(e, "encoder"), *cv = cJSON_GetObjectItemCaseSensitive(e, "count");
        char g[300];
        snprintf(g, sizeof g, "%s.extend", f);
        if (!ev) { free(r); return fail(c, g, "missing"); }
        if (get_int(c, g, ev, 0, MAX_LEN, &one.e)) { free(r); return -1; }
        snprintf(g, sizeof g, "%s.prefix", f);
        if (pv && get_int(c, g, pv, 0, MAX_LEN, &one.p)) { free(r); return -1; }
        snprintf(g, sizeof g, "%s.encoder", f);
        if (nv && get_int(c, g, nv, 0, MAX_LEN, &one.enc)) { free(r); return -1; }
        if (cv) get_int(c, f, cv, 1, MAX_BATCH, &k);
      } else {
        free(r);
        return fail(c, f, "expected [prefix, extend] or {\"prefix\":..,\"extend\":..,\"count\":..}");
      }
      for (int64_t j = 0; j < k; j++) r[n++] = one;
    }
  } else {
    static const char *const keys[] = {"requests", "prefix", "extend", "encoder", "seed", NULL};
    snprintf(f, sizeof f, "%s.generate", where);
    if (!cJSON_IsObject(gen)) return fail(c, f, "expected an object {requests, prefix, extend, seed}");
    for (const cJSON *it = gen->child; it; it = it->next) {
      int known = 0;
      for (int i = 0; keys[i]; i++) known |= strcmp(it->string, keys[i]) == 0;
      if (!known) return fail(c, f, "unknown field \"%s\" (requests, prefix, extend, encoder, seed)", it->string);
    }
    int64_t nreq = 0, seed = (int64_t)((pp->seed ^ xc_fnv1a64_str(XC_FNV1A64_BENCH_SEED, name)) & 0x1FFFFFFFFFFFFFull);
    char g[300];
    snprintf(g, sizeof g, "%s.requests", f);
    if (get_int(c, g, cJSON_GetObjectItemCaseSensitive(gen, "requests"), 1, MAX_BATCH, &nreq)) return -1;
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(gen, "seed");
    snprintf(g, sizeof g, "%s.seed", f);
    if (sv && get_int(c, g, sv, 0, 9007199254740991ll, &seed)) return -1;
    const cJSON *pd = cJSON_GetObjectItemCaseSensitive(gen, "prefix"), *ed = cJSON_GetObjectItemCaseSensitive(gen, "extend");
    const cJSON *nd = cJSON_GetObjectItemCaseSensitive(gen, "encoder");
    if (!ed) { snprintf(g, sizeof g, "%s.extend", f); return fail(c, g, "missing"); }
    uint64_t rng = (uint64_t)seed;
    r = calloc((size_t)nreq, sizeof *r);
    for (n = 0; n < nreq; n++) {
      snprintf(g, sizeof g, "%s.prefix", f);
      if (pd && draw(c, g, pd, &rng, &r[n].p)) { free(r); return -1; }
      snprintf(g, sizeof g, "%s.extend", f);
      if (draw(c, g, ed, &rng, &r[n].e)) { free(r); return -1; }
      snprintf(g, sizeof g, "%s.encoder", f);
      if (nd && draw(c, g, nd, &rng, &r[n].enc)) { free(r); return -1; }
    }
  }
  *out = r;
  *count = n;
  return 0;
}

static void params_defaults(params *p) {
  memset(p, 0, sizeof *p);
  p->heads_q = 32;
  p->heads_kv = 8;
  p->head_dim = 128;
  p->head_dim_v = 128;
  p->mode = XATTN_MODE_CAUSAL;
  p->align = XATTN_ALIGN_BOTTOM_RIGHT;
  p->window_left = p->window_right = -1;
  p->tree_density = 0.5;
  p->page_size = 1;
  p->cache_layout = XATTN_CACHE_TOKEN_MAJOR;
  p->kv_cache = XATTN_DTYPE_SAME;
  p->ndtypes = 1;
  p->dtypes[0] = XATTN_F32;
  p->seed = 42;
}

static int finish_workload(const ctx *c, const char *where, xb_workload *w, const params *p, const req *r, int n) {
  w->batch = n;
  w->heads_q = p->heads_q;
  w->heads_kv = p->heads_kv;
  w->head_dim = p->head_dim;
  w->head_dim_v = p->head_dim_v;
  w->mode = p->mode;
  w->align = p->align;
  w->window_left = p->window_left;
  w->window_right = p->window_right;
  w->logit_cap = p->logit_cap;
  w->has_sinks = p->has_sinks;
  w->tree_density = p->tree_density;
  w->slot_run = p->slot_run;
  w->page_size = p->page_size;
  w->cache_layout = p->cache_layout;
  w->kv_cache = p->kv_cache;
  w->ndtypes = p->ndtypes;
  memcpy(w->dtypes, p->dtypes, sizeof w->dtypes);
  w->seed = p->seed;
  if (w->heads_q % w->heads_kv != 0)
    return fail(c, where, "heads_q %d is not a multiple of heads_kv %d", w->heads_q, w->heads_kv);
  if (w->align == XATTN_ALIGN_TOP_LEFT && w->mode != XATTN_MODE_CAUSAL)
    return fail(c, where, "align top_left is only defined for causal mode");
  w->prefix_lens = calloc((size_t)n, sizeof(int32_t));
  w->extend_lens = calloc((size_t)n, sizeof(int32_t));
  if (w->mode == XATTN_MODE_CROSS) w->encoder_lens = calloc((size_t)n, sizeof(int32_t));
  int64_t tokens = 0;
  for (int i = 0; i < n; i++) {
    if (r[i].p + r[i].e > MAX_LEN) return fail(c, where, "request %d: prefix + extend exceeds %d", i, MAX_LEN);
    if (w->mode == XATTN_MODE_CROSS && r[i].enc < 1)
      return fail(c, where, "request %d: cross mode needs an encoder length >= 1 ([prefix, extend, encoder])", i);
    if (w->mode != XATTN_MODE_CROSS && r[i].enc) return fail(c, where, "request %d: encoder length given but mode is not cross", i);
    w->prefix_lens[i] = (int32_t)r[i].p;
    w->extend_lens[i] = (int32_t)r[i].e;
    if (w->encoder_lens) w->encoder_lens[i] = (int32_t)r[i].enc;
    tokens += r[i].e;
  }
  if (tokens < 1) return fail(c, where, "no extend tokens in the batch");
  if (tokens > ((int64_t)1 << 31) - 1) return fail(c, where, "too many extend tokens");
  return 0;
}

static void workload_free_fields(xb_workload *w) {
  free(w->prefix_lens);
  free(w->extend_lens);
  free(w->encoder_lens);
}

void xb_suite_free(xb_suite *s) {
  if (!s) return;
  for (int i = 0; i < s->count; i++) workload_free_fields(&s->workloads[i]);
  free(s->workloads);
  free(s);
}

static void stem_of(const char *path, char *out, size_t outlen) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  snprintf(out, outlen, "%s", base);
  char *dot = strrchr(out, '.');
  if (dot && strcmp(dot, ".json") == 0) *dot = 0;
}

xb_suite *xb_suite_parse(const char *text, const char *path, char *err, size_t errlen) {
  ctx c = {path, err, errlen};
  char why[256];
  cJSON *root = xc_json_parse_strict(text, strlen(text), why, sizeof why); /* no trailing garbage, no duplicate keys */
  if (!root) {
    fail(&c, "(json)", "%s", why);
    return NULL;
  }
  xb_suite *s = calloc(1, sizeof *s);
  req *r = NULL;
  snprintf(s->path, sizeof s->path, "%s", path);
  if (!cJSON_IsObject(root)) { fail(&c, "(top)", "expected an object"); goto bad; }
  static const char *const top_keys[] = {"suite", "description", "defaults", "shapes", "workloads", NULL};
  for (const cJSON *it = root->child; it; it = it->next) {
    int known = is_param_key(it->string) && (strcmp(it->string, "seed") == 0 || strcmp(it->string, "dtypes") == 0);
    for (int i = 0; top_keys[i]; i++) known |= strcmp(it->string, top_keys[i]) == 0;
    if (!known) { fail(&c, "(top)", "unknown field \"%s\"", it->string); goto bad; }
  }
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "suite");
  if (v) {
    if (!cJSON_IsString(v) || !valid_name(v->valuestring)) { fail(&c, "suite", "expected a name of [A-Za-z0-9._-+=]"); goto bad; }
    snprintf(s->name, sizeof s->name, "%s", v->valuestring);
  } else {
    stem_of(path, s->name, sizeof s->name);
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "description");
  if (v) {
    if (!cJSON_IsString(v)) { fail(&c, "description", "expected a string"); goto bad; }
    snprintf(s->description, sizeof s->description, "%s", v->valuestring);
  }
  params base;
  params_defaults(&base);
  if (apply_params(&c, "(top)", root, &base)) goto bad;
  const cJSON *defs = cJSON_GetObjectItemCaseSensitive(root, "defaults");
  if (defs) {
    if (!cJSON_IsObject(defs)) { fail(&c, "defaults", "expected an object"); goto bad; }
    if (check_keys(&c, "defaults", defs, NULL) || apply_params(&c, "defaults", defs, &base)) goto bad;
  }
  const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(root, "shapes");
  int nshapes = 0;
  if (shapes) {
    if (!cJSON_IsObject(shapes) || !shapes->child) { fail(&c, "shapes", "expected an object of named shapes"); goto bad; }
    static const char *const none[] = {NULL};
    for (const cJSON *sh = shapes->child; sh; sh = sh->next, nshapes++) {
      char f[256];
      snprintf(f, sizeof f, "shapes.%s", sh->string);
      if (!valid_name(sh->string)) { fail(&c, f, "shape name must be [A-Za-z0-9._-+=]"); goto bad; }
      if (!cJSON_IsObject(sh) || check_keys(&c, f, sh, none)) {
        if (!cJSON_IsObject(sh)) fail(&c, f, "expected an object of parameters");
        goto bad;
      }
    }
  }
  const cJSON *wls = cJSON_GetObjectItemCaseSensitive(root, "workloads");
  if (!cJSON_IsArray(wls) || cJSON_GetArraySize(wls) < 1) { fail(&c, "workloads", "expected a non-empty list"); goto bad; }
  int cap = cJSON_GetArraySize(wls) * (nshapes ? nshapes : 1);
  s->workloads = calloc((size_t)cap, sizeof *s->workloads);
  int idx = 0;
  for (const cJSON *w = wls->child; w; w = w->next, idx++) {
    char where[160];
    snprintf(where, sizeof where, "workloads[%d]", idx);
    if (!cJSON_IsObject(w)) { fail(&c, where, "expected an object"); goto bad; }
    static const char *const wkeys[] = {"name", "batch", "generate", "shapes", NULL};
    if (check_keys(&c, where, w, wkeys)) goto bad;
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(w, "name");
    char f[256];
    snprintf(f, sizeof f, "%s.name", where);
    if (!cJSON_IsString(nm) || !valid_name(nm->valuestring)) {
      fail(&c, f, nm ? "must be a name of [A-Za-z0-9._-+=] (no '/' or ':'), under 100 characters" : "missing");
      goto bad;
    }
    snprintf(where, sizeof where, "workloads[%d] (%s)", idx, nm->valuestring);
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(w, "shapes");
    if (only) {
      snprintf(f, sizeof f, "%s.shapes", where);
      if (!shapes) { fail(&c, f, "the suite declares no shapes"); goto bad; }
      if (!cJSON_IsArray(only) || cJSON_GetArraySize(only) < 1) { fail(&c, f, "expected a list of shape names"); goto bad; }
      for (const cJSON *e = only->child; e; e = e->next)
        if (!cJSON_IsString(e) || !cJSON_GetObjectItemCaseSensitive(shapes, e->valuestring)) {
          fail(&c, f, "unknown shape %s%s%s", cJSON_IsString(e) ? "\"" : "", cJSON_IsString(e) ? e->valuestring : "(not a string)", cJSON_IsString(e) ? "\"" : "");
          goto bad;
        }
    }
    const cJSON *sh = shapes ? shapes->child : NULL;
    do {
      if (sh && only) {
        int listed = 0;
        for (const cJSON *e = only->child; e; e = e->next) listed |= strcmp(e->valuestring, sh->string) == 0;
        if (!listed) { sh = sh->next; continue; }
      }
      params p = base;
      if (sh && apply_params(&c, "shapes", sh, &p)) goto bad;
      if (apply_params(&c, where, w, &p)) goto bad;
      xb_workload *out = &s->workloads[s->count];
      if (sh) snprintf(out->name, sizeof out->name, "%s.%s", nm->valuestring, sh->string);
      else snprintf(out->name, sizeof out->name, "%s", nm->valuestring);
      for (int i = 0; i < s->count; i++)
        if (strcmp(s->workloads[i].name, out->name) == 0) { fail(&c, where, "duplicate workload name \"%s\"", out->name); goto bad; }
      int n;
      if (parse_batch(&c, where, w, &p, out->name, &r, &n)) goto bad;
      s->count++;
      if (finish_workload(&c, where, out, &p, r, n)) goto bad;
      free(r);
      r = NULL;
      sh = sh ? sh->next : NULL;
    } while (sh);
  }
  cJSON_Delete(root);
  return s;
bad:
  free(r);
  cJSON_Delete(root);
  xb_suite_free(s);
  return NULL;
}

const char *xb_suite_dirs(void) {
  static char dirs[4096];
  const char *env = getenv("XATTN_SUITES_DIR");
  snprintf(dirs, sizeof dirs, "%s%s%s:%s", env && *env ? env : "", env && *env ? ":" : "", XB_SOURCE_SUITES_DIR,
           XB_INSTALL_SUITES_DIR);
  return dirs;
}

static char *read_file(const char *path, char *err, size_t errlen) {
  const char *why = "";
  char *s = NULL;
  size_t nul_at = 0;
  switch (xc_read_text_file(path, (size_t)64 << 20, &s, &nul_at, &why)) {
  case XC_READ_OK: return s;
  case XC_READ_OPEN: snprintf(err, errlen, "%s: (file): cannot open: %s", path, why); break;
  case XC_READ_TOO_LARGE: snprintf(err, errlen, "%s: (file): larger than 64 MiB", path); break;
  case XC_READ_NUL: snprintf(err, errlen, "%s: (file): NUL byte at byte %zu", path, nul_at); break;
  case XC_READ_IO: snprintf(err, errlen, "%s: (file): cannot read", path); break;
  }
  return NULL;
}

xb_suite *xb_suite_load(const char *name_or_path, char *err, size_t errlen) {
  char path[1024];
  size_t len = strlen(name_or_path);
  if (strchr(name_or_path, '/') || (len > 5 && strcmp(name_or_path + len - 5, ".json") == 0)) {
    snprintf(path, sizeof path, "%s", name_or_path);
  } else {
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", xb_suite_dirs());
    path[0] = 0;
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      char cand[1024];
      snprintf(cand, sizeof cand, "%s/%s.json", d, name_or_path);
      struct stat cst;
      if (stat(cand, &cst) == 0) { /* read_file says what it is if not a regular file */
        snprintf(path, sizeof path, "%s", cand);
        break;
      }
    }
    if (!path[0]) {
      snprintf(err, errlen, "%s: (suite): no suite of that name in %s", name_or_path, xb_suite_dirs());
      return NULL;
    }
  }
  char *text = read_file(path, err, errlen);
  if (!text) return NULL;
  xb_suite *s = xb_suite_parse(text, path, err, errlen);
  free(text);
  return s;
}

int xb_suite_list(char *out, size_t outlen) {
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s", xb_suite_dirs());
  size_t used = 0;
  int count = 0;
  if (outlen) out[0] = 0;
  for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    DIR *dir = opendir(d);
    if (!dir) continue;
    for (struct dirent *e; (e = readdir(dir));) {
      size_t n = strlen(e->d_name);
      if (n <= 5 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
      int w = snprintf(out + used, outlen > used ? outlen - used : 0, "%.*s\t%s/%s\n", (int)(n - 5), e->d_name, d, e->d_name);
      if (w > 0 && used + (size_t)w < outlen) used += (size_t)w;
      count++;
    }
    closedir(dir);
  }
  return count;
}

int64_t xb_workload_tokens(const xb_workload *w) {
  int64_t t = 0;
  for (int i = 0; i < w->batch; i++) t += w->extend_lens[i];
  return t;
}

int64_t xb_workload_max_context(const xb_workload *w) {
  int64_t m = 0;
  for (int i = 0; i < w->batch; i++) {
    int64_t s = (int64_t)w->prefix_lens[i] + w->extend_lens[i];
    if (w->encoder_lens && w->encoder_lens[i] > s) s = w->encoder_lens[i];
    if (s > m) m = s;
  }
  return m;
}

double xb_flops(const xb_workload *w, int64_t visible_pairs) {
  return 2.0 * w->heads_q * (double)(w->head_dim + w->head_dim_v) * (double)visible_pairs;
}

int xb_slot_layout_parse(const char *name, int32_t *run) {
  if (strcmp(name, "shuffled") == 0) { *run = XB_SLOTS_SHUFFLED; return 0; }
  if (strcmp(name, "contiguous") == 0) { *run = XB_SLOTS_CONTIGUOUS; return 0; }
  if (strncmp(name, "runs", 4) != 0 || name[4] < '1' || name[4] > '9') return -1;
  char *end;
  const long n = strtol(name + 4, &end, 10);
  if (*end || n < 1 || n > XB_SLOT_RUN_MAX) return -1;
  *run = (int32_t)n;
  return 0;
}

const char *xb_slot_layout_name(int32_t run, char *buf, size_t len) {
  if (run == XB_SLOTS_SHUFFLED) snprintf(buf, len, "shuffled");
  else if (run == XB_SLOTS_CONTIGUOUS) snprintf(buf, len, "contiguous");
  else snprintf(buf, len, "runs%d", (int)run);
  return buf;
}
