/* The portable driver: cuts a call's shape into work items for the chosen
 * thread layout (enumerate, then kvsplit's key-range cuts), orders them
 * heaviest first (xattn_plan_partition), and runs them on an OpenMP team in
 * the caller's workspace, merging kvsplit partials (xattn_plan_execute). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "internal/env.h"
#include "internal/kernel.h"
#include "internal/mask.h"
#include "internal/plan.h"
#include "xattn/xattn_introspect.h"

/* Upper bound on kvsplit partial storage per call; splits are reduced to fit. */
#define XATTN_KVSPLIT_MAX_BYTES ((size_t)256 << 20)
#define XATTN_KVSPLIT_MAX_SPLITS 64
/* fewest rows a thread merges at once (a row: parts x head_dim_v products) */
#define XATTN_MERGE_MIN_ROWS 4

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
int64_t xattn_block_cost(const xattn_problem *p, int b, int32_t q0, int32_t nq, int32_t *minlo,
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

/* Log-sum-exp merge of rows [r0, r1) of a group's partials into o. */
static void merge_group(const xattn_run *run, const xattn_split_group *g, float *parts, size_t part_floats,
                        int rows_max, float *row, int r0, int r1) {
  const xattn_problem *p = run->p;
  const int dv = p->head_dim_v;
  for (int r = r0; r < r1; r++) {
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

/* decode and lanes layouts, prefetch 0 = auto: the tokens that hold ~64 KiB
   of K and V rows (every KV head's; lanes rounds it up to its span): 16 for
   the bf16 reference shape (H_KV 8, D 128), 8 in f32, 32 for an fp8 cache, 4
   for bf16 MHA, 128 for bf16 MQA. Until session 20 it was one decode tile (16
   tokens) whatever a token's bytes: right for bf16 rows of 8 heads (from
   ~128 KiB ahead that rule had measured 1.02-1.07x on bf16 rows, bench/README.md
   "Measured: cold caches"), but twice the bytes for f32 rows and eight times
   for bf16 MHA. On the Zen 3 (bench/README.md "the prefetch distance in
   bytes", two runs) 1.04-1.39x on f32 reference-shape and MHA decode rows;
   the Xeon of session 13 preferred 16 tokens for fp8 caches by 2-4 %. */
#define XATTN_AUTO_PREFETCH_BYTES (64 * 1024)
int xattn_auto_prefetch_tokens(const xattn_problem *p) {
  if (!p || p->heads_kv <= 0 || p->head_dim <= 0 || p->head_dim_v <= 0) return 1;
  const int64_t token = (int64_t)p->heads_kv * (p->head_dim + p->head_dim_v) * (int64_t)xattn_dtype_size(xattn_cache_dtype(p));
  if (token <= 0) return 1;
  const int64_t t = (XATTN_AUTO_PREFETCH_BYTES + token / 2) / token;
  return t < 1 ? 1 : t > 256 ? 256 : (int)t;
}

/* The kernel-facing summary of the call; run.p is the plan's shape here
 * (only its sizes are read while partitioning) and the caller's data at run time. */
static void init_run(xattn_plan *pl) {
  const xattn_problem *p = &pl->shape;
  xattn_run *run = &pl->run;
  memset(run, 0, sizeof *run);
  run->p = p;
  xattn_variant_dims(pl->variant, &run->bm, &run->bn);
  run->heads_per_kv = p->heads_q / p->heads_kv;
  run->score_scale2 = p->scale * XATTN_LOG2E;
  run->cap2 = p->logit_cap > 0.0f ? p->logit_cap * XATTN_LOG2E : 0.0f;
  const int decode = xattn_layout_is_few_rows(pl->layout);
  run->lanes = pl->layout == XATTN_LAYOUT_LANES;
  run->prefetch = !decode || pl->prefetch < 0 ? 0 : pl->prefetch > 0 ? pl->prefetch : xattn_auto_prefetch_tokens(p);
  if (run->prefetch > (1 << 16)) run->prefetch = 1 << 16; /* beyond any use; keeps t0 + prefetch in int32 */
  run->prefetch_l1 = pl->prefetch_level == 1;
  /* flash layouts (prefetch not -1): the next gathered tile's rows are asked
     for while a tile computes, for caches of 16-bit and fp8 rows: on the Zen 3
     1.1-1.3x on bf16 / f16 rows of E 8-16 on P 8192 from DRAM, where the pack's
     conversion loop waits for each row's lines; f32 rows gained nothing there
     (their copy keeps 8 lines a row in flight) and the next 64-key tile of
     them, 64 KiB, is twice the L1, which AMD's cores likely fill at any hint
     (bench/README.md "the next tile's rows") */
  run->tile_prefetch = !decode && pl->prefetch >= 0 && xattn_dtype_size(xattn_cache_dtype(p)) < 4;
  if (pl->layout == XATTN_LAYOUT_FLAT) {
    run->heads_per_item = 1;
  } else if (decode) {
    run->heads_per_item = p->heads_q; /* one item holds every row of its request */
  } else {
    int gs = XATTN_MAX_ITEM_ROWS / run->bm;
    if (gs < 1) gs = 1;
    if (gs > run->heads_per_kv) gs = run->heads_per_kv;
    run->heads_per_item = gs;
  }
  run->ext_start = pl->ext_start;
  /* test-only override XATTN_STREAM_OUT_MIN_BYTES: 0 streams every output */
  const double out_bytes = (double)p->total_tokens * p->heads_q * p->head_dim_v * (double)xattn_dtype_size(p->dtype);
  run->stream_out = out_bytes >= xattn_env_number("XATTN_STREAM_OUT_MIN_BYTES", (double)XATTN_STREAM_OUT_MIN_BYTES);
}

/* Queries one item holds: BLOCK_M, or (decode) a whole request. */
static int item_queries(const xattn_plan *pl) {
  return xattn_layout_is_few_rows(pl->layout) ? max_extend(&pl->shape) : pl->run.bm;
}

/* One item per (request, block of BLOCK_M queries, group of query heads on one
 * KV head), or (decode) per request with all its heads, covering the request's
 * whole key range. */
static xattn_status enumerate_items(const xattn_plan *pl, item_list *items) {
  const xattn_problem *p = &pl->shape;
  const xattn_run *run = &pl->run;
  const int bm = item_queries(pl), gs = run->heads_per_item, decode = xattn_layout_is_few_rows(pl->layout);
  for (int b = 0; b < p->batch; b++) {
    for (int32_t q0 = 0; q0 < p->extend_lens[b]; q0 += bm) {
      const int32_t nq = p->extend_lens[b] - q0 < bm ? p->extend_lens[b] - q0 : bm;
      int32_t minlo, maxhi;
      const int64_t cost = xattn_block_cost(p, b, q0, nq, &minlo, &maxhi);
      for (int h0 = 0; h0 < p->heads_q;) {
        const int kvh = h0 / run->heads_per_kv;
        const int left_on_kvh = (kvh + 1) * run->heads_per_kv - h0;
        const int nh = pl->layout == XATTN_LAYOUT_FLAT ? 1
                       : decode                        ? p->heads_q /* every KV head */
                       : left_on_kvh < gs              ? left_on_kvh
                                                       : gs;
        xattn_item it = {b, kvh, h0, nh, q0, nq, 0, xattn_key_count(p, b), -1, cost * nh};
        if (push_item(items, &it)) return XATTN_ERR_NOMEM;
        h0 += nh;
      }
    }
  }
  return XATTN_OK;
}

/* kvsplit, decode: cuts each item's key range into parts that different
 * threads run; a cut item becomes a group merged after the parts
 * (merge_group). Splits default to enough parts for 4 per thread, bounded in
 * count and in the bytes of partial results. Flash items get whole key tiles
 * per part; decode items exactly `splits` parts (tiles are short there), some
 * empty when there are fewer keys. */
static xattn_status split_key_ranges(xattn_plan *pl, item_list *items) {
  const xattn_problem *p = &pl->shape;
  const int bn = pl->run.bn, decode = xattn_layout_is_few_rows(pl->layout);
  int splits = pl->kv_splits;
  if (splits <= 0) splits = (int)((4 * (int64_t)pl->threads + items->n - 1) / items->n);
  if (splits > XATTN_KVSPLIT_MAX_SPLITS) splits = XATTN_KVSPLIT_MAX_SPLITS;
  while (splits > 1 && (size_t)items->n * splits * pl->part_floats * sizeof(float) > XATTN_KVSPLIT_MAX_BYTES)
    splits--;
  if (splits <= 1) return XATTN_OK;
  item_list cut = {0};
  pl->groups = malloc(sizeof(xattn_split_group) * (size_t)items->n);
  if (!pl->groups) return XATTN_ERR_NOMEM;
  for (int64_t i = 0; i < items->n; i++) {
    const xattn_item *w = &items->v[i];
    int32_t minlo, maxhi;
    xattn_block_cost(p, w->b, w->q0, w->nq, &minlo, &maxhi);
    const int64_t len = maxhi >= minlo ? (int64_t)maxhi - minlo + 1 : 0;
    int64_t chunk = (len + splits - 1) / splits;
    if (!decode) chunk = (chunk + bn - 1) / bn * bn;
    const int count = decode ? (len > 0 ? splits : 1) : chunk > 0 ? (int)((len + chunk - 1) / chunk) : 1;
    if (count <= 1) {
      if (push_item(&cut, w)) goto nomem;
      continue;
    }
    pl->groups[pl->n_groups++] = (xattn_split_group){*w, pl->n_parts, count};
    for (int s = 0; s < count; s++) {
      xattn_item it = *w;
      if (decode) {
        it.key_lo = (int32_t)(minlo + len * s / count);
        it.key_hi = (int32_t)(minlo + len * (s + 1) / count);
      } else {
        it.key_lo = (int32_t)(minlo + s * chunk);
        it.key_hi = (int32_t)(minlo + (s + 1) * chunk < maxhi + 1 ? minlo + (s + 1) * chunk : maxhi + 1);
      }
      it.part = (int32_t)(pl->n_parts++);
      it.cost = w->cost / count;
      if (push_item(&cut, &it)) goto nomem;
    }
  }
  free(items->v);
  *items = cut;
  return XATTN_OK;
nomem:
  free(cut.v);
  return XATTN_ERR_NOMEM;
}

/* The workspace: each thread's scratch, the kvsplit partials, the packed K/V
 * of a wave, each thread's buffer for local pairs (kvpack.c). */
static size_t kvpack_at(const xattn_plan *pl) {
  const size_t parts = sizeof(float) * pl->part_floats * (size_t)pl->n_parts;
  return pl->scratch_bytes * (size_t)pl->team + (parts + 63) / 64 * 64;
}
static size_t kvpack_local_bytes(const xattn_plan *pl) { return (pl->kvpack.local_bytes + 63) / 64 * 64; }
static size_t kvpack_local_at(const xattn_plan *pl, int thread) {
  return kvpack_at(pl) + (pl->kvpack.bytes + 63) / 64 * 64 + kvpack_local_bytes(pl) * (size_t)thread;
}

/* A unit (a local pair, kvpack.c): packs the pair's keys into this thread's
 * buffer (run->kvp.buf), then runs all of its items. */
static void run_unit(xattn_kvpack_fn pack, xattn_item_fn fn, const xattn_run *run, const xattn_item *items,
                     int64_t n, void *scratch, float *parts, size_t part_floats, int rows_max, int dv) {
  const int b = items[0].b, kvh = items[0].kvh;
  const int32_t base = run->kvp.key_base[b], count = run->kvp.key_count[b];
  for (int32_t k0 = base; k0 < base + count; k0 += run->bn) {
    const int32_t left = base + count - k0;
    const xattn_kvpack_task t = {b, kvh, k0, left < run->bn ? left : run->bn};
    pack(run, &t, scratch);
  }
  for (int64_t i = 0; i < n; i++) run_item(fn, run, &items[i], scratch, parts, part_floats, rows_max, dv);
}

xattn_status xattn_plan_partition(xattn_plan *pl) {
  init_run(pl);
  item_list items = {0};
  const int decode = xattn_layout_is_few_rows(pl->layout);
  pl->rows_max = item_queries(pl) * pl->run.heads_per_item;
  pl->part_floats = (size_t)pl->rows_max * (pl->shape.head_dim_v + 2);
  xattn_status st = enumerate_items(pl, &items);
  if (st == XATTN_OK && (pl->layout == XATTN_LAYOUT_KVSPLIT || decode) && items.n > 0)
    st = split_key_ranges(pl, &items);
  if (st != XATTN_OK) {
    free(items.v);
    return st;
  }
  /* heaviest first: with dynamic scheduling the long causal rows start early,
     with static,1 consecutive heavy items go to different threads */
  if (items.n > 1) qsort(items.v, (size_t)items.n, sizeof(xattn_item), by_cost_desc);
  pl->items = items.v;
  pl->n_items = items.n;
  if ((st = xattn_kvpack_plan_make(pl)) != XATTN_OK) return st;
  pl->team = pl->threads < 1 ? 1 : pl->threads;
  if (pl->team > items.n && items.n > 0) pl->team = (int)items.n;
  /* the merge in row chunks when there are fewer groups than threads: one
     request cut into up to 64 parts was merged by one thread while the rest
     of the team waited (bench/README.md "The kvsplit merge in row chunks");
     chunks of at least XATTN_MERGE_MIN_ROWS rows */
  pl->merge_chunks = 1;
  if (pl->n_groups > 0 && pl->n_groups < pl->team) {
    const int64_t most = ((int64_t)pl->rows_max + XATTN_MERGE_MIN_ROWS - 1) / XATTN_MERGE_MIN_ROWS;
    pl->merge_chunks = (pl->team + pl->n_groups - 1) / pl->n_groups;
    if (pl->merge_chunks > most) pl->merge_chunks = most > 0 ? most : 1;
  }
  const xattn_scratch_fn scratch_fn = decode ? pl->isa->kernels->decode_scratch_bytes : pl->isa->kernels->scratch_bytes;
  pl->scratch_bytes = (scratch_fn(&pl->run) + 63) / 64 * 64;
  pl->workspace_bytes = items.n > 0 ? kvpack_local_at(pl, pl->team) : 0;
  return XATTN_OK;
}

void xattn_plan_partition_free(xattn_plan *pl) {
  xattn_kvpack_plan_free(&pl->kvpack);
  free(pl->items);
  free(pl->groups);
  pl->items = NULL;
  pl->groups = NULL;
}

/* Runs every item on an OpenMP team, each thread on its slice of the
 * workspace, wave by wave (a wave first packs its K/V, see kvpack.c; without
 * packing there is one wave), then the units of locally packed pairs, then
 * (kvsplit) merges the groups. Allocates
 * nothing. */
void xattn_plan_execute(const xattn_plan *pl, const xattn_problem *p, void *workspace) {
  if (pl->n_items == 0) return;
  xattn_run run = pl->run;
  run.p = p;
  char *scratch = (char *)workspace;
  float *parts = (float *)(scratch + pl->scratch_bytes * (size_t)pl->team);
  const xattn_kvpack_plan *kp = &pl->kvpack;
  run.kvp.buf = kp->n_waves > 0 ? scratch + kvpack_at(pl) : NULL;
  const xattn_item_fn fn =
      xattn_layout_is_few_rows(pl->layout) ? pl->isa->kernels->decode_item : pl->isa->kernels->items[pl->variant];
  const xattn_kvpack_fn pack = pl->isa->kernels->kv_pack;
  const size_t scratch_bytes = pl->scratch_bytes, part_floats = pl->part_floats;
  const int rows_max = pl->rows_max, dv = p->head_dim_v;
  const int dynamic = pl->schedule != XATTN_SCHED_STATIC;
  const int waves = kp->n_waves > 0 ? kp->n_waves : 1;
  const int64_t n_items = pl->n_items, n_groups = pl->n_groups;
  const xattn_item *iv = pl->items;
  const xattn_split_group *groups = pl->groups;
  const int64_t merge_chunks = pl->merge_chunks;
#pragma omp parallel num_threads(pl->team)
  {
    void *mine = scratch + scratch_bytes * (size_t)omp_get_thread_num();
    for (int w = 0; w < waves; w++) {
      const int64_t i0 = kp->wave_items ? kp->wave_items[w] : 0, i1 = kp->wave_items ? kp->wave_items[w + 1] : n_items;
      if (kp->n_waves > 0) {
        if (w > 0) {
#pragma omp barrier
        } /* the previous wave's items are done with the buffer */
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = kp->wave_tasks[w]; t < kp->wave_tasks[w + 1]; t++) pack(&run, &kp->tasks[t], mine);
      }
      if (dynamic) {
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t i = i0; i < i1; i++) run_item(fn, &run, &iv[i], mine, parts, part_floats, rows_max, dv);
      } else {
#pragma omp for schedule(static, 1) nowait
        for (int64_t i = i0; i < i1; i++) run_item(fn, &run, &iv[i], mine, parts, part_floats, rows_max, dv);
      }
    }
    if (kp->n_units > 0) {
      xattn_run mine_run = run; /* local pairs: this thread's buffer */
      mine_run.kvp.buf = scratch + kvpack_local_at(pl, omp_get_thread_num());
      if (dynamic) {
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t u = 0; u < kp->n_units; u++)
          run_unit(pack, fn, &mine_run, &iv[kp->unit_items[u]], kp->unit_items[u + 1] - kp->unit_items[u], mine,
                   parts, part_floats, rows_max, dv);
      } else {
#pragma omp for schedule(static, 1) nowait
        for (int64_t u = 0; u < kp->n_units; u++)
          run_unit(pack, fn, &mine_run, &iv[kp->unit_items[u]], kp->unit_items[u + 1] - kp->unit_items[u], mine,
                   parts, part_floats, rows_max, dv);
      }
    }
    if (n_groups > 0) {
#pragma omp barrier
      float *row = (float *)mine; /* scratch is free again: reuse it for one row */
#pragma omp for schedule(dynamic, 1)
      for (int64_t t = 0; t < n_groups * merge_chunks; t++) {
        const xattn_split_group *g = &groups[t / merge_chunks];
        const int64_t c = t % merge_chunks, rows = (int64_t)g->whole.nq * g->whole.nh;
        merge_group(&run, g, parts, part_floats, rows_max, row, (int)(rows * c / merge_chunks),
                    (int)(rows * (c + 1) / merge_chunks));
      }
    }
  }
}
