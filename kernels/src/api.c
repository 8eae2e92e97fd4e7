/* Defaults, what this build has (the ISA registry, layouts) and option
 * resolution: explicit option > XATTN_ISA env (isa only) > config-header row >
 * defaults. Plans and xattn_extend_attention are in plan.c. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "internal/cache.h"
#include "internal/error.h"
#include "internal/fp8.h"
#include "internal/kernel.h"
#include "internal/plan.h"
#include "xattn/xattn_introspect.h"

void xattn_problem_init(xattn_problem *p) {
  memset(p, 0, sizeof *p);
  p->dtype = XATTN_F32;
  p->req_to_token_type = XATTN_I32;
  p->mode = XATTN_MODE_CAUSAL;
  p->align = XATTN_ALIGN_BOTTOM_RIGHT;
  p->window_left = -1;
  p->window_right = -1;
  p->scale = 1.0f;
  p->page_size = 1;
  p->cache_dtype = XATTN_DTYPE_SAME;
  p->k_scale = p->v_scale = 1.0f;
  p->cache_layout = XATTN_CACHE_TOKEN_MAJOR;
}

size_t xattn_problem_size(void) { return sizeof(xattn_problem); }

const void *xattn_cache_row(const xattn_problem *p, int32_t b, int64_t j, int32_t kvh, int v) {
  const xattn_tensor *t = v ? &p->v_cache : &p->k_cache;
  return (const char *)t->data + xattn_cache_offset(p, b, j, kvh, v) * (int64_t)xattn_dtype_size(xattn_cache_dtype(p));
}
size_t xattn_options_size(void) { return sizeof(xattn_options); }

void xattn_options_init(xattn_options *o) {
  memset(o, 0, sizeof *o);
  o->schedule = XATTN_SCHED_AUTO;
}

/* ---- ISAs: the registry of src/isa/isas.def ------------------------------- */
#define ISA_INDEX(name, features, f32_isa) ISA_INDEX_##name,
enum { XATTN_ISA_LIST(ISA_INDEX) ISA_COUNT };
#undef ISA_INDEX
enum { ISA_INDEX_self = -1 };
#define ISA_ROW(name, features, f32_isa) \
  {#name, features, &xattn_kernels_##name, ISA_INDEX_##f32_isa < 0 ? NULL : &isa_table[ISA_INDEX_##f32_isa]},
static const xattn_isa isa_table[ISA_COUNT] = {XATTN_ISA_LIST(ISA_ROW)};
#undef ISA_ROW

const xattn_isa *xattn_isa_at(int i) { return i >= 0 && i < ISA_COUNT ? &isa_table[i] : NULL; }
int xattn_isa_count(void) { return ISA_COUNT; }
const char *xattn_isa_name(int i) { return i >= 0 && i < ISA_COUNT ? isa_table[i].name : NULL; }

const xattn_isa *xattn_isa_find(const char *name) {
  for (int i = 0; i < ISA_COUNT; i++)
    if (name && strcmp(name, isa_table[i].name) == 0) return &isa_table[i];
  return NULL;
}

static int cpu_can_run(const xattn_isa *k) { return xattn_cpu_has_features(k->cpu_features); }

int xattn_isa_runnable(const char *isa) {
  const xattn_isa *k = xattn_isa_find(isa);
  return k != NULL && cpu_can_run(k);
}

static const char *best_runnable(void) {
  for (int i = 0; i < ISA_COUNT; i++)
    if (cpu_can_run(&isa_table[i])) return isa_table[i].name;
  return isa_table[ISA_COUNT - 1].name; /* the portable row comes last */
}

/* The ISA a call runs: explicit option, else XATTN_ISA, else the best runnable. */
static xattn_status resolve_isa(const char *requested, const xattn_isa **out) {
  const char *what = "options.isa";
  if (!requested) {
    const char *env = getenv("XATTN_ISA");
    if (env && *env) {
      requested = env;
      what = "XATTN_ISA";
    }
  }
  if (!requested) requested = best_runnable();
  const xattn_isa *k = xattn_isa_find(requested);
  if (!k) return xattn_fail(XATTN_ERR_UNSUPPORTED, "%s: unknown or not built ISA '%s'", what, requested);
  if (!cpu_can_run(k))
    return xattn_fail(XATTN_ERR_UNSUPPORTED, "%s: this CPU cannot run ISA '%s'", what, requested);
  *out = k;
  return XATTN_OK;
}

const char *xattn_best_isa(void) {
  const xattn_isa *k = NULL;
  if (resolve_isa(NULL, &k) != XATTN_OK) return best_runnable();
  return k->name;
}

/* The kernels that really run a dtype: bf16-only ISAs hand f32/f16 to another. */
static const xattn_isa *running_isa(const xattn_isa *k, xattn_dtype dtype) {
  return k->f32_isa && dtype != XATTN_BF16 ? k->f32_isa : k;
}

const char *xattn_running_isa(const char *isa, xattn_dtype dtype) {
  const xattn_isa *k = xattn_isa_find(isa ? isa : xattn_best_isa());
  return k ? running_isa(k, dtype)->name : NULL;
}

/* ---- layouts ----------------------------------------------------------------- */
static const char *const layout_names[] = {"flat", "gqa", "kvsplit", "decode", "lanes"};
enum { LAYOUT_COUNT = sizeof(layout_names) / sizeof(layout_names[0]) };
int xattn_layout_count(void) { return LAYOUT_COUNT; }
const char *xattn_layout_name(int i) { return i >= 0 && i < LAYOUT_COUNT ? layout_names[i] : NULL; }
static int layout_find(const char *name) {
  for (int i = 0; i < LAYOUT_COUNT; i++)
    if (name && strcmp(name, layout_names[i]) == 0) return i;
  return -1;
}

/* ---- resolution ---------------------------------------------------------- */
/* Fills the resolved fields of r (isa, variant, layout, schedule, threads)
 * for a problem with a valid shape. */
xattn_status xattn_resolve_into(const xattn_problem *p, const xattn_options *opts, xattn_plan *r) {
  xattn_options defaults;
  if (!opts) {
    xattn_options_init(&defaults);
    opts = &defaults;
  }
  xattn_status s = resolve_isa(opts->isa, &r->isa);
  if (s != XATTN_OK) return s;
  r->isa = running_isa(r->isa, p->dtype);

  int64_t max_e = 0, max_p = 0;
  for (int b = 0; b < p->batch; b++) {
    if (p->extend_lens[b] > max_e) max_e = p->extend_lens[b];
    if (p->prefix_lens[b] > max_p) max_p = p->prefix_lens[b];
  }
  if ((s = xattn_config_cpu_check()) != XATTN_OK) return s;
  const xattn_config_row *row = xattn_config_lookup(r->isa->name, p->dtype, p->head_dim, p->head_dim_v,
                                                    p->mode, xattn_extend_bucket(max_e),
                                                    xattn_prefix_bucket(max_p));
  if (opts->variant) {
    r->variant = xattn_variant_index(opts->variant);
    if (r->variant < 0)
      return xattn_fail(XATTN_ERR_UNSUPPORTED, "options.variant: '%s' is not a compiled BMxBN variant",
                        opts->variant);
  } else {
    /* a row may name a variant this build left out (XATTN_VARIANTS): nearest one */
    r->variant = row ? xattn_variant_nearest(row->variant) : -1;
    if (r->variant < 0) r->variant = xattn_variant_nearest("64x64");
  }
  if (opts->layout) {
    r->layout = (xattn_layout_kind)layout_find(opts->layout);
    if ((int)r->layout < 0)
      return xattn_fail(XATTN_ERR_UNSUPPORTED, "options.layout: unknown layout '%s' (flat, gqa, kvsplit, decode, lanes)",
                        opts->layout);
  } else {
    const int from_row = row ? layout_find(row->layout) : -1;
    r->layout = from_row < 0 ? XATTN_LAYOUT_GQA : (xattn_layout_kind)from_row;
    /* large query groups (MQA, or a few tokens on a big group): the row's
       lanes_rows says from how many rows of one KV group the lanes tile beats
       decode's blocks of 4 rows; an fp8 cache has its own column, since both
       paths widen fp8 rows at their own cost and the crossover moves
       (bench/README.md "the lanes threshold of fp8 caches") */
    const int lanes_rows = row && xattn_is_fp8(p->cache_dtype) && row->lanes_rows_fp8 > 0 ? row->lanes_rows_fp8
                           : row                                                       ? row->lanes_rows
                                                                                       : 0;
    if (r->layout == XATTN_LAYOUT_DECODE && lanes_rows > 0 && max_e * (p->heads_q / p->heads_kv) >= lanes_rows)
      r->layout = XATTN_LAYOUT_LANES;
  }
  /* the few-rows path holds a request's rows in one item: too many, and the
     flash path runs (what xattn_resolve reports too) */
  if (xattn_layout_is_few_rows(r->layout) && !xattn_decode_fits(p)) r->layout = XATTN_LAYOUT_GQA;
  r->kv_splits = opts->kv_splits > 0 ? opts->kv_splits : row ? row->kv_splits : 0;
  r->prefetch = opts->prefetch != 0 ? opts->prefetch : row ? row->prefetch : 0;
  if (opts->prefetch_level < 0 || opts->prefetch_level > 2)
    return xattn_fail(XATTN_ERR_UNSUPPORTED, "options.prefetch_level: %d is not 0 (from the config header), 1 (L1) or 2 (L2)",
                      opts->prefetch_level);
  r->prefetch_level = opts->prefetch_level ? opts->prefetch_level : row && row->prefetch_level == 1 ? 1 : 2;
  if (opts->schedule == XATTN_SCHED_STATIC || opts->schedule == XATTN_SCHED_DYNAMIC)
    r->schedule = opts->schedule;
  else if (opts->schedule != XATTN_SCHED_AUTO)
    return xattn_fail(XATTN_ERR_UNSUPPORTED, "options.schedule: unknown schedule %d", (int)opts->schedule);
  else
    r->schedule = row && xattn_schedule_parse(row->schedule, &r->schedule) == 0 && r->schedule != XATTN_SCHED_AUTO
                      ? r->schedule
                      : XATTN_SCHED_DYNAMIC;
  r->threads = opts->threads > 0 ? opts->threads : row && row->threads > 0 ? row->threads : omp_get_max_threads();
  return XATTN_OK;
}

xattn_status xattn_resolve(const xattn_problem *p, const xattn_options *opts, const char **variant,
                           const char **layout, const char **isa, int *threads) {
  xattn_status s = xattn_validate(p);
  if (s != XATTN_OK) return s;
  xattn_plan r;
  memset(&r, 0, sizeof r);
  if ((s = xattn_resolve_into(p, opts, &r)) != XATTN_OK) return s;
  if (variant) *variant = xattn_variant_name(r.variant);
  if (layout) *layout = layout_names[r.layout];
  if (isa) *isa = r.isa->name;
  if (threads) *threads = r.threads;
  xattn_clear_error();
  return XATTN_OK;
}
