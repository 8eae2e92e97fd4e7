/* Search strategies over one class's candidates, the budget they share, and
 * the noise-aware decision against the defaults. */
#ifndef TUNE_SEARCH_H
#define TUNE_SEARCH_H

#include <stdint.h>
#include "tune_eval.h"
#include "tune_space.h"
#include "tune_stats.h"
#include "tune_store.h"

typedef enum tune_strategy { TUNE_EXHAUSTIVE = 0, TUNE_RANDOM = 1, TUNE_HALVING = 2 } tune_strategy;
const char *tune_strategy_name(tune_strategy s);
int tune_strategy_parse(const char *name, tune_strategy *s); /* 0 on success */

typedef struct tune_settings {
  tune_strategy strategy;
  int reps;          /* repetitions a winner is judged on (exhaustive, random, last halving round) */
  int eta;           /* halving: keep the best 1/eta of each round, eta x more reps */
  int random_count;  /* random: candidates to sample; 0: as many as the budget allows */
  int finalists;     /* the search's best few, re-measured interleaved to pick one (3) */
  int final_reps;    /* interleaved reps per finalist, and default-vs-best reps (x2, x3 while undecided) */
  double threshold;  /* adopt only if faster than the default by more than this (0.03) */
  uint64_t seed;
  int progress;      /* progress lines on stderr */
} tune_settings;
void tune_settings_init(tune_settings *s);

/* Shared by all classes of a run. Only new measurements count: cached ones
 * are free. */
typedef struct tune_budget {
  double start, deadline; /* seconds on the monotonic clock; deadline 0: none */
  long max_evals;         /* 0: none */
  long evals;             /* new timed repetitions so far, all phases */
  int classes_total, classes_done;
} tune_budget;

#define TUNE_MAX_REJECTED 32
typedef struct tune_result {
  tune_class cls;
  int n_candidates;   /* after pruning */
  int n_considered;   /* after budget subsampling */
  int n_rejected, n_unsupported;
  char rejected_key[TUNE_MAX_REJECTED][TUNE_KEY_MAX];
  char rejected_why[TUNE_MAX_REJECTED][200];
  long search_reps;   /* timed repetitions the search used (new + cached) */
  long new_reps;      /* of which measured in this process */
  int found;          /* a best candidate exists */
  tune_cand best;
  double best_search_median;
  int n_finalists;     /* how many the finalists' round compared */
  int final_n;
  double default_median, tuned_median; /* final phase, interleaved */
  tune_ratio speedup;  /* median(default) / median(best) with 95% CI */
  int adopt;           /* the best goes into the header */
  int complete;        /* the search ran as planned (budget not cut) */
  char note[200];
} tune_result;

/* Searches one class: verify before timing, search, interleaved comparison
 * with the defaults, decision. Measurements come from / go to the store. */
int tune_class_run(const tune_class *cls, const tune_cand *cands, int n, const tune_settings *set,
                   tune_budget *budget, tune_store *store, const tune_eval *ev, tune_result *out);

/* The decision rule, alone (tested): adopt iff ratio >= 1 + threshold, the
 * interval's low end is above 1 (faster beyond the noise) and the interval is
 * narrow enough to be evidence (hi <= TUNE_MAX_CI_SPREAD x lo). */
#define TUNE_MAX_CI_SPREAD 1.5
int tune_should_adopt(tune_ratio r, double threshold);

#endif
