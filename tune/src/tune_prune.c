/* Every constraint on the space lives in the table below, with its name and
 * the reason it exists. Nothing else in the tuner drops candidates. */
#include "tune_prune.h"

#include <string.h>

int64_t tune_scratch_bytes(const tune_class *cls, const tune_cand *c) {
  /* A work item holds, in fp32 (accumulation type): its Q rows x D, the K
   * tile BN x D, the V tile BN x DV, the scores rows x BN and the output
   * accumulators rows x DV. rows = BLOCK_M, times the query heads sharing a
   * KV head for the gqa layout (capped at 512 rows like the kernels'
   * XATTN_MAX_ITEM_ROWS). These are re-read for every key tile, so the
   * variant is built to keep them in the per-core L2. */
  int64_t d = cls->d, dv = cls->dv, bn = c->block_n, rows = c->block_m;
  if (!strcmp(c->layout, "gqa") && cls->heads_kv > 0) {
    int64_t g = cls->heads_q / cls->heads_kv, fit = 512 / rows;
    if (g > fit) g = fit;
    rows *= g > 1 ? g : 1;
  }
  return 4 * (rows * d + bn * d + bn * dv + rows * bn + rows * dv);
}

typedef int (*prune_fn)(const tune_prune_ctx *x, const tune_cand *c);

static int kvsplit_without_prefix(const tune_prune_ctx *x, const tune_cand *c) {
  return strcmp(c->layout, "kvsplit") == 0 && x->cls->prefix_bucket == 0;
}
static int decode_ignores_variant(const tune_prune_ctx *x, const tune_cand *c) {
  return tune_layout_few_rows(c->layout) && strcmp(c->variant, x->first_variant) != 0;
}
static int decode_rows_beyond_limit(const tune_prune_ctx *x, const tune_cand *c) {
  /* the kernels run gqa instead (XATTN_DECODE_MAX_ROWS): nothing new to measure */
  return tune_layout_few_rows(c->layout) && x->cls->max_extend * x->cls->heads_q > 2048;
}
static int block_m_beyond_extend(const tune_prune_ctx *x, const tune_cand *c) {
  /* more than half of every query tile would be padding */
  return c->block_m > x->min_bm && c->block_m >= 2 * x->cls->max_extend;
}
static int block_n_beyond_keys(const tune_prune_ctx *x, const tune_cand *c) {
  return c->block_n > x->min_bn && c->block_n >= 2 * x->cls->max_keys;
}
static int scratch_beyond_l2(const tune_prune_ctx *x, const tune_cand *c) {
  if (x->m->l2_bytes <= 0) return 0;
  if (c->block_m == x->min_bm && c->block_n == x->min_bn) return 0;
  return tune_scratch_bytes(x->cls, c) > x->m->l2_bytes;
}
static int threads_beyond_cores(const tune_prune_ctx *x, const tune_cand *c) {
  return x->m->cores > 0 && c->threads > x->m->cores;
}
static int placement_same_cores(const tune_prune_ctx *x, const tune_cand *c) {
  if (strcmp(c->placement, x->first_placement) == 0) return 0;
  if (!x->m->placement_differs) return 1;
  return !x->m->placement_differs(x->m->ctx, c->placement, c->threads);
}
static int schedule_single_thread(const tune_prune_ctx *x, const tune_cand *c) {
  return c->threads == 1 && strcmp(c->schedule, x->first_schedule) != 0;
}

static struct {
  const char *name;
  const char *why;
  prune_fn fn;
  int count;
} constraints[] = {
    {"threads-beyond-cores", "more threads than usable cores only adds contention", threads_beyond_cores, 0},
    {"kvsplit-without-prefix", "splitting the key range pays only when a prefix makes keys >> queries", kvsplit_without_prefix, 0},
    {"decode-ignores-variant", "the few-rows layouts (decode, lanes) have no BLOCK_M x BLOCK_N: one variant stands for all", decode_ignores_variant, 0},
    {"decode-rows-beyond-limit", "a request holds more than 2048 rows (E_b x H_Q): the few-rows layouts run gqa", decode_rows_beyond_limit, 0},
    {"block-m-beyond-extend", "BLOCK_M >= 2x the longest extend: most of each query tile is padding", block_m_beyond_extend, 0},
    {"block-n-beyond-keys", "BLOCK_N >= 2x the longest key range: most of each key tile is padding", block_n_beyond_keys, 0},
    {"scratch-beyond-l2", "the tile working set (tune_scratch_bytes) does not fit the per-core L2 it targets", scratch_beyond_l2, 0},
    {"placement-same-cores", "this placement picks the same cores as the first one at this thread count", placement_same_cores, 0},
    {"schedule-single-thread", "with one thread the schedule changes nothing", schedule_single_thread, 0},
};
#define N_CONSTRAINTS ((int)(sizeof constraints / sizeof constraints[0]))

const char *tune_prune_check(const tune_prune_ctx *ctx, const tune_cand *c) {
  for (int i = 0; i < N_CONSTRAINTS; i++)
    if (constraints[i].fn(ctx, c)) {
      constraints[i].count++;
      return constraints[i].name;
    }
  return NULL;
}

void tune_prune_reset(void) {
  for (int i = 0; i < N_CONSTRAINTS; i++) constraints[i].count = 0;
}

int tune_prune_total(void) {
  int t = 0;
  for (int i = 0; i < N_CONSTRAINTS; i++) t += constraints[i].count;
  return t;
}

void tune_prune_report(FILE *f, const char *prefix) {
  for (int i = 0; i < N_CONSTRAINTS; i++)
    fprintf(f, "%s%-24s %6d  (%s)\n", prefix, constraints[i].name, constraints[i].count,
            constraints[i].why);
}
