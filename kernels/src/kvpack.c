/* K/V packed once per (request, KV head) for a whole call (xattn_kvpack in
 * internal/kernel.h): which requests get it, where each pair's packed keys
 * sit in the workspace, the packing tasks, and the waves that keep the
 * packed K/V under a bound. The driver runs the tasks of a wave, then its
 * items (xattn_plan_execute).
 *
 * Packing once instead of per item saves the gather through the token table
 * and the transposes for every query block and head group after the first:
 * at causal E = 2048 and 64-query blocks each key was packed ~16 times (the
 * pack was 24 % of the AMX kernel). It costs writing the packed keys to
 * memory and reading them back, so a request takes it only when its items
 * would pack each key many times (XATTN_KVPACK_MIN_REUSE). */
#include <stdlib.h>
#include <string.h>
#include "internal/env.h"
#include "internal/mask.h"
#include "internal/plan.h"

/* Upper bound on the packed K/V of one wave (the workspace holds one). */
#define XATTN_KVPACK_MAX_BYTES ((size_t)256 << 20)
/* Keys a request's items would pack per key it has, from which it is packed
 * once. Measured (bf16 amx, 2 threads, kernels/README.md): causal E = 2048
 * (each key packed ~16 times per item) gains 17 %, bidirectional 16 x 256
 * (4 times) loses 9 %: its items are short and re-read the packed keys from
 * memory instead of an L2-hot per-item pack. */
#define XATTN_KVPACK_MIN_REUSE 8.0
/* Below that but from this reuse on, a request's pairs are packed locally
 * (a unit: one thread packs the pair into its own buffer, then runs all of
 * the pair's items) when one pair's packed K/V fits this bound, half the L2
 * of the CPUs this was measured on: the items read it from L2. */
#define XATTN_KVPACK_LOCAL_MIN_REUSE 2.0
#define XATTN_KVPACK_LOCAL_MAX_BYTES ((size_t)1 << 20)

/* Test-only overrides: XATTN_KVPACK_WAVE_BYTES (a positive byte count) lowers
 * the bound of a wave, XATTN_KVPACK_MIN_REUSE (a number >= 0) the reuse from
 * which a request packs once, so that small problems run every path; a value
 * that does not parse is ignored (xattn_env_number). */

void xattn_kvpack_plan_free(xattn_kvpack_plan *kp) {
  free(kp->pair_off);
  free(kp->key_base);
  free(kp->tasks);
  free(kp->wave_tasks);
  free(kp->wave_items);
  free(kp->unit_items);
  memset(kp, 0, sizeof *kp);
}

/* The keys an item reads: its queries' interval union cut to its key range. */
static int64_t item_key_span(const xattn_problem *p, const xattn_item *it) {
  int32_t lo, hi;
  xattn_block_cost(p, it->b, it->q0, it->nq, &lo, &hi);
  const int64_t kb = lo > it->key_lo ? lo : it->key_lo, ke = hi + 1 < it->key_hi ? hi + 1 : it->key_hi;
  return ke > kb ? ke - kb : 0;
}

/* Per request: the packed key range (key_base, key_count; 0 keys = not
 * packed), the range starting on a multiple of 32 below its first visible
 * key, and whether it is packed locally (local[b]). */
static void choose_requests(const xattn_plan *pl, int32_t *key_base, int32_t *key_count, double *spans,
                            unsigned char *local) {
  const xattn_problem *p = &pl->shape;
  const double min_reuse = xattn_env_number("XATTN_KVPACK_MIN_REUSE", XATTN_KVPACK_MIN_REUSE);
  const double local_min_reuse = xattn_env_number("XATTN_KVPACK_LOCAL_MIN_REUSE", XATTN_KVPACK_LOCAL_MIN_REUSE);
  for (int b = 0; b < p->batch; b++) spans[b] = 0.0;
  for (int64_t i = 0; i < pl->n_items; i++) spans[pl->items[i].b] += (double)item_key_span(p, &pl->items[i]);
  for (int b = 0; b < p->batch; b++) {
    int32_t lo, hi;
    xattn_block_cost(p, b, 0, p->extend_lens[b], &lo, &hi);
    key_base[b] = key_count[b] = 0;
    local[b] = 0;
    if (hi < lo) continue;
    const int32_t base = lo & ~(int32_t)31, count = hi + 1 - base;
    const double keys = (double)count * p->heads_kv;
    if (spans[b] < min_reuse * keys) {
      if (spans[b] < local_min_reuse * keys) continue;
      local[b] = 1;
    }
    key_base[b] = base;
    key_count[b] = count;
  }
}

xattn_status xattn_kvpack_plan_make(xattn_plan *pl) {
  xattn_kvpack_plan *kp = &pl->kvpack;
  memset(kp, 0, sizeof *kp);
  memset(&pl->run.kvp, 0, sizeof pl->run.kvp);
  const xattn_isa_kernels *K = pl->isa->kernels;
  if (!K->kv_pack || xattn_layout_is_few_rows(pl->layout) || pl->n_items == 0) return XATTN_OK;
  const xattn_problem *p = &pl->shape;
  const int B = p->batch, H = p->heads_kv, bn = pl->run.bn;
  const int64_t pairs = (int64_t)B * H;
  int *pair_wave = malloc(sizeof(int) * (size_t)pairs);
  int64_t *unit_of = malloc(sizeof(int64_t) * (size_t)pairs);
  double *spans = malloc(sizeof(double) * (size_t)B);
  unsigned char *local = malloc((size_t)B);
  kp->pair_off = malloc(sizeof(int64_t) * (size_t)pairs);
  kp->key_base = malloc(sizeof(int32_t) * 2 * (size_t)B);
  xattn_item *sorted = NULL;
  int64_t *next = NULL;
  if (!pair_wave || !unit_of || !spans || !local || !kp->pair_off || !kp->key_base) goto nomem;
  int32_t *key_base = kp->key_base, *key_count = kp->key_base + B;
  choose_requests(pl, key_base, key_count, spans, local);

  /* waves: pairs in order, a new wave when the next pair would pass the
     bound; local pairs (pair_wave -1) sit at offset 0 of a thread's buffer */
  const double wave_env = xattn_env_number("XATTN_KVPACK_WAVE_BYTES", 0.0);
  const size_t bound = wave_env >= 1.0 ? (size_t)wave_env : XATTN_KVPACK_MAX_BYTES;
  int waves = 0;
  int64_t n_tasks = 0, local_pairs = 0;
  size_t at = 0;
  for (int64_t q = 0; q < pairs; q++) {
    const int b = (int)(q / H);
    kp->pair_off[q] = -1;
    unit_of[q] = -1;
    const size_t bytes = key_count[b] > 0 ? K->kv_pack_bytes(&pl->run, key_count[b]) : 0;
    if (local[b] && bytes > XATTN_KVPACK_LOCAL_MAX_BYTES) { /* would not stay in L2: per item */
      local[b] = 0;
      key_count[b] = 0;
    }
    if (local[b]) {
      kp->pair_off[q] = 0;
      pair_wave[q] = -1;
      local_pairs++;
      if (bytes > kp->local_bytes) kp->local_bytes = bytes;
      continue;
    }
    /* one head's keys alone past the bound: this request packs per item */
    if (bytes > bound) key_count[b] = 0;
    if (key_count[b] > 0) {
      if (waves == 0 || at + bytes > bound) {
        waves++;
        at = 0;
      }
      kp->pair_off[q] = (int64_t)at;
      at += bytes;
      if (at > kp->bytes) kp->bytes = at;
      n_tasks += (key_count[b] + bn - 1) / bn;
    }
    pair_wave[q] = waves > 0 ? waves - 1 : 0;
  }
  if (waves == 0 && local_pairs == 0) { /* no request packs: off */
    free(pair_wave);
    free(unit_of);
    free(spans);
    free(local);
    xattn_kvpack_plan_free(kp);
    return XATTN_OK;
  }
  kp->n_waves = waves;
  const int slots = waves > 0 ? waves : 1; /* without waves, the unpacked items are one slot */
  kp->tasks = malloc(sizeof(xattn_kvpack_task) * (size_t)(n_tasks + 1));
  kp->wave_tasks = calloc((size_t)slots + 1, sizeof(int64_t));
  kp->wave_items = calloc((size_t)slots + 1, sizeof(int64_t));
  sorted = malloc(sizeof(xattn_item) * (size_t)pl->n_items);
  next = malloc(sizeof(int64_t) * (size_t)slots);
  if (!kp->tasks || !kp->wave_tasks || !kp->wave_items || !sorted || !next) goto nomem;

  /* tasks of a wave: each packed pair's keys in BLOCK_N steps */
  int64_t t = 0;
  for (int64_t q = 0; q < pairs; q++) {
    const int b = (int)(q / H);
    if (kp->pair_off[q] < 0 || pair_wave[q] < 0) continue;
    for (int32_t k0 = key_base[b]; k0 < key_base[b] + key_count[b]; k0 += bn) {
      const int32_t left = key_base[b] + key_count[b] - k0;
      kp->tasks[t++] = (xattn_kvpack_task){b, (int32_t)(q % H), k0, left < bn ? left : bn};
    }
    kp->wave_tasks[pair_wave[q] + 1] = t;
  }
  for (int w = 1; w <= slots; w++)
    if (kp->wave_tasks[w] < kp->wave_tasks[w - 1]) kp->wave_tasks[w] = kp->wave_tasks[w - 1];

  /* items regrouped by the wave of their pair, cost order kept within a wave
     (the items of unpacked pairs run in the wave their pair falls in); then
     the units, one per local pair, in the order of their first item */
  for (int64_t i = 0; i < pl->n_items; i++) {
    const int64_t q = (int64_t)pl->items[i].b * H + pl->items[i].kvh;
    if (pair_wave[q] >= 0) kp->wave_items[pair_wave[q] + 1]++;
    else if (unit_of[q] < 0) unit_of[q] = kp->n_units++;
  }
  for (int w = 1; w <= slots; w++) kp->wave_items[w] += kp->wave_items[w - 1];
  kp->unit_items = calloc((size_t)kp->n_units + 1, sizeof(int64_t));
  if (!kp->unit_items) goto nomem;
  for (int64_t i = 0; i < pl->n_items; i++) {
    const int64_t q = (int64_t)pl->items[i].b * H + pl->items[i].kvh;
    if (unit_of[q] >= 0) kp->unit_items[unit_of[q] + 1]++;
  }
  kp->unit_items[0] = kp->wave_items[slots];
  for (int64_t u = 1; u <= kp->n_units; u++) kp->unit_items[u] += kp->unit_items[u - 1];
  for (int w = 0; w < slots; w++) next[w] = kp->wave_items[w];
  for (int64_t i = 0; i < pl->n_items; i++) {
    const xattn_item *it = &pl->items[i];
    const int64_t q = (int64_t)it->b * H + it->kvh;
    if (pair_wave[q] >= 0) sorted[next[pair_wave[q]]++] = *it;
  }
  /* the units' items: a second pass per unit start keeps their cost order */
  free(next);
  next = malloc(sizeof(int64_t) * (size_t)(kp->n_units + 1));
  if (!next) goto nomem;
  for (int64_t u = 0; u < kp->n_units; u++) next[u] = kp->unit_items[u];
  for (int64_t i = 0; i < pl->n_items; i++) {
    const xattn_item *it = &pl->items[i];
    const int64_t q = (int64_t)it->b * H + it->kvh;
    if (unit_of[q] >= 0) sorted[next[unit_of[q]]++] = *it;
  }
  free(next);
  memcpy(pl->items, sorted, sizeof(xattn_item) * (size_t)pl->n_items);
  free(sorted);
  free(pair_wave);
  free(unit_of);
  free(spans);
  free(local);
  pl->run.kvp.pair_off = kp->pair_off;
  pl->run.kvp.key_base = key_base;
  pl->run.kvp.key_count = key_count;
  return XATTN_OK;
nomem:
  free(next);
  free(sorted);
  free(pair_wave);
  free(unit_of);
  free(spans);
  free(local);
  xattn_kvpack_plan_free(kp);
  return XATTN_ERR_NOMEM;
}
