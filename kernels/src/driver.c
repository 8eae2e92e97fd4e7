/* The portable driver: cuts a validated call into work items for the chosen
 * thread layout, orders them heaviest first, runs them on an OpenMP team with
 * per-thread scratch allocated once, and (kvsplit) merges partial results. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "internal/kernel.h"
#include "internal/mask.h"

/* Upper bound on kvsplit partial storage per call; splits are reduced to fit. */
#define XATTN_KVSPLIT_MAX_BYTES ((size_t)256 << 20)
#define XATTN_KVSPLIT_MAX_SPLITS 64

typedef struct item_list {
  xattn_item *v;
  int64_t n, cap;
} item_list;

static int push_item(item_list *L, const xattn_item *it) {
  if (L->n == L->cap) {
    const int64_t cap = L->cap ? 2 * L->cap : 256;
    xattn_item *v = realloc(L->v, sizeof(xattn_item) * (size_t)cap);
    if (!v) return -1;
    L->v = v;
    L->cap = cap;
  }
  L->v[L->n++] = *it;
  return 0;
}

/* Visible-pair count of queries q0..q0+nq-1 (interval part; tree bits ignored:
 * this only orders work) and the union [*minlo, *maxhi] of their intervals. */
static int64_t block_cost(const xattn_problem *p, int b, int32_t q0, int32_t nq, int32_t *minlo,
                          int32_t *maxhi) {
  int64_t pairs = 0;
  *minlo = INT32_MAX;
  *maxhi = -1;
  for (int32_t i = q0; i < q0 + nq; i++) {
    int32_t lo, hi;
    xattn_query_interval(p, b, i, &lo, &hi);
    if (lo > hi) continue;
    pairs += hi - lo + 1;
    if (lo < *minlo) *minlo = lo;
    if (hi > *maxhi) *maxhi = hi;
  }
  return pairs;
}

static int by_cost_desc(const void *a, const void *b) {
  const xattn_item *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
  /* keep the enumeration order among equals (qsort is not stable) */
  if (x->b != y->b) return x->b - y->b;
  if (x->h0 != y->h0) return x->h0 - y->h0;
  if (x->q0 != y->q0) return x->q0 - y->q0;
  return x->key_lo - y->key_lo;
}

/* A kvsplit group: one (request, head group, query block) whose key range was
 * cut into `count` parts starting at partial slot `first`. */
typedef struct split_group {
  xattn_item whole;
  int64_t first;
  int32_t count;
} split_group;

static void store_row(const xattn_problem *p, const xattn_run *run, const xattn_item *it, int r,
                      const float *acc, float m, float l) {
  const int nh = it->nh, dv = p->head_dim_v;
  const int h = it->h0 + r % nh;
  char *dst = xattn_out_row(run, it->b, it->q0 + r / nh, h);
  const float inv = xattn_row_inv_denominator(p, h, m, l);
  for (int c = 0; c < dv; c++) {
    const float x = acc ? acc[c] * inv : 0.0f;
    if (p->dtype == XATTN_F32) ((float *)dst)[c] = x;
    else if (p->dtype == XATTN_BF16) ((uint16_t *)dst)[c] = xattn_f32_to_bf16(x);
    else ((uint16_t *)dst)[c] = xattn_f32_to_f16(x);
  }
}

/* Log-sum-exp merge of a group's partials into o. */
static void merge_group(const xattn_run *run, const split_group *g, float *parts, size_t part_floats,
                        int rows_max, float *row) {
  const xattn_problem *p = run->p;
  const int dv = p->head_dim_v, rows = g->whole.nq * g->whole.nh;
  for (int r = 0; r < rows; r++) {
    float mx = -INFINITY;
    int nan = 0;
    for (int s = 0; s < g->count; s++) {
      const float *base = parts + (size_t)(g->first + s) * part_floats;
      const float ms = base[(size_t)rows_max * dv + r];
      /* a NaN score leaves l NaN (m only sometimes): the row is NaN (docs/contract.md) */
      if (isnan(ms) || isnan(base[(size_t)rows_max * dv + rows_max + r])) nan = 1;
      else if (ms > mx) mx = ms;
    }
    if (nan) {
      for (int c = 0; c < dv; c++) row[c] = NAN;
      store_row(p, run, &g->whole, r, row, 0.0f, 1.0f);
      continue;
    }
    if (mx == -INFINITY) {
      store_row(p, run, &g->whole, r, NULL, mx, 0.0f);
      continue;
    }
    float l = 0.0f;
    for (int c = 0; c < dv; c++) row[c] = 0.0f;
    for (int s = 0; s < g->count; s++) {
      const float *base = parts + (size_t)(g->first + s) * part_floats;
      const float ms = base[(size_t)rows_max * dv + r];
      /* a part whose keys all scored -inf weighs exactly 0, but a NaN its value
         rows left in acc (0 x NaN, 0 x Inf) stays, as in the unsplit row */
      const float w = exp2f(ms - mx);
      l += w * base[(size_t)rows_max * dv + rows_max + r];
      const float *acc = base + (size_t)r * dv;
      for (int c = 0; c < dv; c++) row[c] += w * acc[c];
    }
    store_row(p, run, &g->whole, r, row, mx, l);
  }
}

/* One work item; a kvsplit part writes its (acc, m, l) into its slot of parts. */
static void run_item(xattn_item_fn fn, const xattn_run *run, const xattn_item *it, void *scratch,
                     float *parts, size_t part_floats, int rows_max, int dv) {
  if (it->part < 0) {
    fn(run, it, scratch, NULL);
    return;
  }
  float *base = parts + (size_t)it->part * part_floats;
  xattn_partial_view pv = {base, base + (size_t)rows_max * dv, base + (size_t)rows_max * dv + rows_max};
  fn(run, it, scratch, &pv);
}

static int32_t max_extend(const xattn_problem *p) {
  int32_t e = 0;
  for (int b = 0; b < p->batch; b++)
    if (p->extend_lens[b] > e) e = p->extend_lens[b];
  return e;
}

int xattn_decode_fits(const xattn_problem *p) {
  return (int64_t)max_extend(p) * p->heads_q <= XATTN_DECODE_MAX_ROWS;
}

/* decode layout, prefetch 0 = auto: about 128 KiB of K/V rows ahead (in L2
   beside the tile being read), at least one tile of 16 tokens */
static int auto_prefetch_tokens(const xattn_problem *p) {
  const int64_t token_bytes = (int64_t)p->heads_kv * (p->head_dim + p->head_dim_v) * (int64_t)xattn_dtype_size(p->dtype);
  int64_t t = ((int64_t)128 << 10) / (token_bytes > 0 ? token_bytes : 1);
  if (t < 16) t = 16;
  if (t > 256) t = 256;
  return (int)t;
}

xattn_status xattn_drive(const xattn_problem *p, const xattn_isa_kernels *isa, int variant,
                         xattn_layout_kind layout, xattn_schedule sched, int threads,
                         int kv_splits, int prefetch) {
  xattn_status st = XATTN_OK;
  xattn_run run;
  memset(&run, 0, sizeof run);
  run.p = p;
  xattn_variant_dims(variant, &run.bm, &run.bn);
  run.heads_per_kv = p->heads_q / p->heads_kv;
  run.score_scale2 = p->scale * XATTN_LOG2E;
  run.cap2 = p->logit_cap > 0.0f ? p->logit_cap * XATTN_LOG2E : 0.0f;
  const int decode = layout == XATTN_LAYOUT_DECODE;
  run.prefetch = !decode || prefetch < 0 ? 0 : prefetch > 0 ? prefetch : auto_prefetch_tokens(p);
  if (run.prefetch > (1 << 16)) run.prefetch = 1 << 16; /* beyond any use; keeps t0 + prefetch in int32 */
  if (layout == XATTN_LAYOUT_FLAT) {
    run.heads_per_item = 1;
  } else if (decode) {
    run.heads_per_item = p->heads_q; /* one item holds every row of its request */
  } else {
    int gs = XATTN_MAX_ITEM_ROWS / run.bm;
    if (gs < 1) gs = 1;
    if (gs > run.heads_per_kv) gs = run.heads_per_kv;
    run.heads_per_item = gs;
  }

  int64_t *ext_start = malloc(sizeof(int64_t) * (size_t)(p->batch > 0 ? p->batch : 1));
  item_list items = {0};
  split_group *groups = NULL;
  int64_t n_groups = 0, n_parts = 0;
  float *parts = NULL;
  char *scratch = NULL;
  if (!ext_start) return XATTN_ERR_NOMEM;
  for (int64_t b = 0, acc = 0; b < p->batch; b++) {
    ext_start[b] = p->extend_start ? p->extend_start[b] : acc;
    acc += p->extend_lens[b];
  }
  run.ext_start = ext_start;

  /* enumerate items: BLOCK_M queries x a head group, or (decode) a whole request */
  const int bm = decode ? max_extend(p) : run.bm, gs = run.heads_per_item;
  for (int b = 0; b < p->batch && st == XATTN_OK; b++) {
    for (int32_t q0 = 0; q0 < p->extend_lens[b] && st == XATTN_OK; q0 += bm) {
      const int32_t nq = p->extend_lens[b] - q0 < bm ? p->extend_lens[b] - q0 : bm;
      int32_t minlo, maxhi;
      const int64_t cost = block_cost(p, b, q0, nq, &minlo, &maxhi);
      for (int h0 = 0; h0 < p->heads_q && st == XATTN_OK;) {
        const int kvh = h0 / run.heads_per_kv;
        const int nh = layout == XATTN_LAYOUT_FLAT ? 1
                       : decode                                    ? p->heads_q /* every KV head */
                       : (kvh + 1) * run.heads_per_kv - h0 < gs ? (kvh + 1) * run.heads_per_kv - h0 : gs;
        xattn_item it = {b, kvh, h0, nh, q0, nq, 0, xattn_key_count(p, b), -1, cost * nh};
        if (push_item(&items, &it)) st = XATTN_ERR_NOMEM;
        h0 += nh;
      }
    }
  }
  if (threads < 1) threads = 1;

  /* kvsplit, decode: cut each item's key range into parts that different threads run */
  const int rows_max = bm * run.heads_per_item;
  if (st == XATTN_OK && (layout == XATTN_LAYOUT_KVSPLIT || decode) && items.n > 0) {
    const size_t part_floats = (size_t)rows_max * (p->head_dim_v + 2);
    int splits = kv_splits;
    if (splits <= 0) splits = (int)((4 * (int64_t)threads + items.n - 1) / items.n);
    if (splits > XATTN_KVSPLIT_MAX_SPLITS) splits = XATTN_KVSPLIT_MAX_SPLITS;
    while (splits > 1 && (size_t)items.n * splits * part_floats * sizeof(float) > XATTN_KVSPLIT_MAX_BYTES)
      splits--;
    if (splits > 1) {
      item_list cut = {0};
      groups = malloc(sizeof(split_group) * (size_t)items.n);
      if (!groups) st = XATTN_ERR_NOMEM;
      for (int64_t i = 0; i < items.n && st == XATTN_OK; i++) {
        const xattn_item *w = &items.v[i];
        int32_t minlo, maxhi;
        block_cost(p, w->b, w->q0, w->nq, &minlo, &maxhi);
        const int64_t len = maxhi >= minlo ? (int64_t)maxhi - minlo + 1 : 0;
        /* flash items: whole key tiles per part; decode: exactly `splits` parts
           (tiles are short there), some empty when there are fewer keys */
        int64_t chunk = (len + splits - 1) / splits;
        if (!decode) chunk = (chunk + run.bn - 1) / run.bn * run.bn;
        const int count = decode ? (len > 0 ? splits : 1) : chunk > 0 ? (int)((len + chunk - 1) / chunk) : 1;
        if (count <= 1) {
          if (push_item(&cut, w)) st = XATTN_ERR_NOMEM;
          continue;
        }
        groups[n_groups] = (split_group){*w, n_parts, count};
        n_groups++;
        for (int s = 0; s < count && st == XATTN_OK; s++) {
          xattn_item it = *w;
          if (decode) {
            it.key_lo = (int32_t)(minlo + len * s / count);
            it.key_hi = (int32_t)(minlo + len * (s + 1) / count);
          } else {
            it.key_lo = (int32_t)(minlo + s * chunk);
            it.key_hi = (int32_t)(minlo + (s + 1) * chunk < maxhi + 1 ? minlo + (s + 1) * chunk : maxhi + 1);
          }
          it.part = (int32_t)(n_parts++);
          it.cost = w->cost / count;
          if (push_item(&cut, &it)) st = XATTN_ERR_NOMEM;
        }
      }
      free(items.v);
      items = cut;
      if (st == XATTN_OK && n_parts > 0) {
        parts = malloc(sizeof(float) * part_floats * (size_t)n_parts);
        if (!parts) st = XATTN_ERR_NOMEM;
      }
    }
  }

  /* heaviest first: with dynamic scheduling the long causal rows start early,
     with static,1 consecutive heavy items go to different threads */
  if (st == XATTN_OK && items.n > 1) qsort(items.v, (size_t)items.n, sizeof(xattn_item), by_cost_desc);
  if (threads > items.n && items.n > 0) threads = (int)items.n;

  const size_t scratch_bytes = ((decode ? isa->decode_scratch_bytes : isa->scratch_bytes)(&run) + 63) / 64 * 64;
  if (st == XATTN_OK && items.n > 0) {
    scratch = aligned_alloc(64, scratch_bytes * (size_t)threads);
    if (!scratch) st = XATTN_ERR_NOMEM;
  }

  if (st == XATTN_OK && items.n > 0) {
    const xattn_item_fn fn = decode ? isa->decode_item : isa->items[variant];
    const int dv = p->head_dim_v;
    const size_t part_floats = (size_t)rows_max * (dv + 2);
    const int dynamic = sched != XATTN_SCHED_STATIC;
    const int64_t n_items = items.n;
    const xattn_item *iv = items.v;
#pragma omp parallel num_threads(threads)
    {
      void *mine = scratch + scratch_bytes * (size_t)omp_get_thread_num();
      if (dynamic) {
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t i = 0; i < n_items; i++) {
          run_item(fn, &run, &iv[i], mine, parts, part_floats, rows_max, dv);
        }
      } else {
#pragma omp for schedule(static, 1) nowait
        for (int64_t i = 0; i < n_items; i++) {
          run_item(fn, &run, &iv[i], mine, parts, part_floats, rows_max, dv);
        }
      }
      if (n_groups > 0) {
#pragma omp barrier
        float *row = (float *)mine; /* scratch is free again: reuse it for one row */
#pragma omp for schedule(dynamic, 1)
        for (int64_t g = 0; g < n_groups; g++) merge_group(&run, &groups[g], parts, part_floats, rows_max, row);
      }
    }
  }

  free(scratch);
  free(parts);
  free(groups);
  free(items.v);
  free(ext_start);
  return st;
}
