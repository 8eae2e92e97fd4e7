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

  /* partition (driver.c) */
  xattn_run run;             /* everything but run.p, which each run sets */
  xattn_item *items;         /* heaviest first */
  int64_t n_items;
  xattn_split_group *groups; /* kvsplit merges */
  int64_t n_groups, n_parts;
  int team;                  /* threads a run starts: min(threads, items), >= 1 */
  int rows_max;              /* rows of the largest item */
  size_t part_floats;        /* floats of one kvsplit partial */
  size_t scratch_bytes;      /* per thread, a multiple of 64 */
  size_t workspace_bytes;    /* team * scratch_bytes + n_parts * part_floats floats */
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

#endif
