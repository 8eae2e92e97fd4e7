/* A whole tuning run: every class through tune_class_run, then the rows of
 * the new header (tuned rows first, then the base header's rows). */
#ifndef TUNE_RUN_H
#define TUNE_RUN_H

#include <stdio.h>
#include "tune_header.h"
#include "tune_search.h"

typedef struct tune_run {
  int n_classes;
  const tune_class *classes;
  const tune_axes *axes;
  const tune_machine *machine;
  tune_settings set;
  tune_budget budget;
  tune_store *store;
  tune_eval ev;
  tune_result *results; /* [n_classes], filled */
  long pruned;          /* candidates removed by constraints, all classes */
  long space_total;     /* candidates before pruning, all classes */
} tune_run;

/* Runs every class; returns 0 (results say what happened per class). */
int tune_run_all(tune_run *run);

/* Header rows: one per adopted class (fully specific key), then the base rows
 * except those with exactly an adopted key. threads equal to all cores are
 * written as 0 ("all available"). Returns the row count (<= cap). */
int tune_make_rows(const tune_result *res, int n, const tune_row *base, int nbase, int cores,
                   tune_row *rows, int cap);

/* Geometric mean of per-class speedups over the defaults (1 for classes kept
 * at the defaults) and the count of adopted classes. */
double tune_overall_speedup(const tune_result *res, int n, int *adopted);

/* Per-class summary lines (for stderr and the header comment). */
void tune_print_summary(FILE *f, const tune_result *res, int n, const char *prefix);

#endif
