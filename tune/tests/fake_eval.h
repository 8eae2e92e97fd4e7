/* A deterministic evaluator for the tests: candidate times come from a table
 * (a recorded real space) or from a planted function, with seeded
 * multiplicative noise; one candidate can be marked wrong. No timing. */
#ifndef TUNE_FAKE_EVAL_H
#define TUNE_FAKE_EVAL_H

#include "tune_eval.h"
#include "tune_space.h"

typedef struct fake_eval {
  int n_table;                  /* table mode when > 0 */
  char (*table_keys)[TUNE_KEY_MAX];
  double *table_times;
  double default_time;          /* time of the defaults (cand NULL) */
  const char *planted_key;      /* planted mode: this candidate is the optimum */
  const char *wrong_key;        /* verification of this candidate fails */
  const char *unsupported_key;  /* verification says it cannot run */
  double noise;                 /* relative sd of the multiplicative noise */
  unsigned long long seed;
  long measures, verifies;      /* calls so far */
  long kill_after;              /* > 0: SIGKILL ourselves on that measure call */
  int fail_measures;            /* every measurement fails (the library refusing the workloads) */
} fake_eval;

/* The noise-free time of a candidate. */
double fake_true_time(const fake_eval *f, const tune_cand *c);
tune_eval fake_eval_iface(fake_eval *f);
/* Loads "key<TAB>seconds" lines (a recorded space; "default" is the defaults).
 * Returns the number of candidates, -1 on error. */
int fake_load_table(fake_eval *f, const char *path);
/* Candidate from its key "BMxBN/layout/schedule/tN/placement". 0 on success. */
int fake_cand_from_key(const char *key, tune_cand *c);

#endif
