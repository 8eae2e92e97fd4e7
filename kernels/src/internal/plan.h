/* The plan behind xattn_plan_create / xattn_plan_run: the call's shape (a
 * private copy), the resolved choices (api.c) and the work partition
 * (driver.c). Immutable once made, so runs may share it. */
#ifndef XATTN_INTERNAL_PLAN_H
#define XATTN_INTERNAL_PLAN_H

#include "internal/kernel.h"

/* A kvsplit group: one (request, head group, query block) whose key range was
 * cut into `count` parts starting at partial slot `first`. */
typedef struct xattn_split_group {
  xattn_item whole;
  int64_t first;
  int32_t count;
} xattn_split_group;

/* K/V packed once per (request, KV head) (xattn_kvpack; kvpack.c decides).
 * The pairs are packed in waves whose packed K/V fit a bound: a wave packs
 * its pairs (tasks[wave_tasks[w] .. wave_tasks[w + 1])), then runs the items
 * of those pairs (items[wave_items[w] .. wave_items[w + 1]]), reusing the
 * buffer of `bytes`. n_waves = 0: no wave packs (one wave of the items
 * before the units, no packing).
 * Local pairs (units): a pair whose items would pack each key only a few
 * times is packed by the thread that then runs all of its items, into that
 * thread's own buffer of `local_bytes` (pair_off 0), so the packed keys are
 * still in its L2 when the items read them. Unit u runs items
 * [unit_items[u], unit_items[u + 1]), which come after every wave's items. */
typedef struct xattn_kvpack_plan {
  int64_t *pair_off;          /* [B * H_KV] offset in the wave's (or the thread's local) buffer, -1 = not packed */
  int32_t *key_base;          /* [B] first packed key, [B] how many (key_count = key_base + B) */
  xattn_kvpack_task *tasks;
  int64_t *wave_tasks, *wave_items; /* [n_waves + 1] each */
  int n_waves;
  size_t bytes;               /* the largest wave's packed K/V */
  int64_t n_units, *unit_items; /* [n_units + 1] */
  size_t local_bytes;         /* the largest local pair's packed K/V (one buffer per thread) */
} xattn_kvpack_plan;

struct xattn_plan {
  /* the shape: scalar fields of the caller's problem; its length arrays point
   * into `lens`; every data pointer is NULL */
  xattn_problem shape;
  int32_t *lens;             /* prefix [B], extend [B], encoder [B], extend_start [B] */
  int64_t *ext_start;        /* [B] first row of each request */

  /* resolved (api.c) */
  const xattn_isa *isa;      /* the ISA whose kernels run (after the f32 substitution) */
  int variant;
  xattn_layout_kind layout;
  xattn_schedule schedule;   /* static or dynamic */
  int threads;               /* as resolved (what xattn_resolve reports) */
  int kv_splits, prefetch;   /* kvsplit / decode key-range splits, decode prefetch; 0 = auto */
  int prefetch_level;        /* decode / lanes: 1 = prefetch into L1, 2 = into L2 */

  /* partition (driver.c) */
  xattn_run run;             /* everything but run.p, which each run sets */
  xattn_item *items;         /* heaviest first */
  int64_t n_items;
  xattn_split_group *groups; /* kvsplit merges */
  int64_t n_groups, n_parts;
  int64_t merge_chunks;      /* row chunks each group's merge is cut into, >= 1 */
  int team;                  /* threads a run starts: min(threads, items), >= 1 */
  int rows_max;              /* rows of the largest item */
  size_t part_floats;        /* floats of one kvsplit partial */
  size_t scratch_bytes;      /* per thread, a multiple of 64 */
  xattn_kvpack_plan kvpack;
  size_t workspace_bytes;    /* team * scratch_bytes + n_parts * part_floats floats + kvpack.bytes */
};

/* api.c: resolves opts for a problem with a valid shape into r's isa,
 * variant, layout, schedule and threads (an error names the option). */
xattn_status xattn_resolve_into(const xattn_problem *p, const xattn_options *opts, xattn_plan *r);

/* driver.c: fills the partition fields of a plan whose shape and resolved
 * fields are set (XATTN_ERR_NOMEM on failure; xattn_plan_partition_free
 * cleans up either way), and runs a plan on a validated problem. */
xattn_status xattn_plan_partition(xattn_plan *pl);
void xattn_plan_partition_free(xattn_plan *pl);
void xattn_plan_execute(const xattn_plan *pl, const xattn_problem *p, void *workspace);

/* driver.c: visible pairs of queries q0..q0+nq-1 of request b (tree bits
 * ignored) and the union [*minlo, *maxhi] of their intervals. */
int64_t xattn_block_cost(const xattn_problem *p, int b, int32_t q0, int32_t nq, int32_t *minlo, int32_t *maxhi);

/* kvpack.c: decides whether the plan's items read K/V packed once per
 * (request, KV head), and if so fills pl->kvpack and regroups pl->items (in
 * cost order) by wave; also sets pl->run.kvp's arrays. XATTN_ERR_NOMEM on
 * failure (xattn_kvpack_plan_free cleans up either way). */
xattn_status xattn_kvpack_plan_make(xattn_plan *pl);
void xattn_kvpack_plan_free(xattn_kvpack_plan *kp);

#endif
