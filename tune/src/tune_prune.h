/* The constraints that prune the space: ONE table of named predicates.
 * A predicate returns 1 when the candidate cannot run or cannot be good for
 * the class; each prune is counted under the predicate's name. */
#ifndef TUNE_PRUNE_H
#define TUNE_PRUNE_H

#include <stdio.h>
#include "tune_space.h"

/* Smallest BLOCK_M / BLOCK_N of the axes: constraints never prune the
 * smallest tile, so every class keeps at least one variant. */
typedef struct tune_prune_ctx {
  const tune_class *cls;
  const tune_machine *m;
  int min_bm, min_bn;
  const char *first_placement;
  const char *first_schedule;
  const char *first_variant;
} tune_prune_ctx;

/* Name of the first constraint that prunes c, or NULL if it is kept. Counts it. */
const char *tune_prune_check(const tune_prune_ctx *ctx, const tune_cand *c);
/* Estimated per-thread working set of a variant for a class (bytes). */
int64_t tune_scratch_bytes(const tune_class *cls, const tune_cand *c);
void tune_prune_reset(void);
/* "name: count" lines, one per constraint, with its description. */
void tune_prune_report(FILE *f, const char *prefix);
int tune_prune_total(void);

#endif
