/* What the search needs from the outside world: run a candidate and say if
 * its answer is right, and time it. The real evaluator (tune_real_eval.c)
 * runs libxattn on the class's workloads; the tests use a deterministic fake. */
#ifndef TUNE_EVAL_H
#define TUNE_EVAL_H

#include <stddef.h>
#include "tune_space.h"

typedef struct tune_eval {
  void *ctx;
  /* Compares cand's output with xattn_reference on small representative
   * problems of the class. Returns 1 if it agrees within docs/contract.md §3 tolerances,
   * 0 if it disagrees, -1 if it cannot run; why says where and by how much. */
  int (*verify)(void *ctx, const tune_class *cls, const tune_cand *cand, char *why, size_t n);
  /* One timed repetition over the class's workloads, in seconds (< 0 on
   * failure). cand NULL: the defaults (options left to the config header).
   * warm: run once untimed first (caches, page faults, thread start). */
  double (*measure)(void *ctx, const tune_class *cls, const tune_cand *cand, int warm);
} tune_eval;

#endif
