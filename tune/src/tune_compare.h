/* The release check: in a build compiled with a tuned header, time the tuned
 * configuration (options left to the compiled-in header) against a baseline
 * header's rows (explicit options), interleaved repetition by repetition on
 * the same cores, in one process. */
#ifndef TUNE_COMPARE_H
#define TUNE_COMPARE_H

#include "tune_classes.h"
#include "tune_env.h"

typedef struct tune_compare_opts {
  const char *baseline_header;
  int reps;
  const char *report_md;   /* may be NULL */
  const char *report_json; /* may be NULL */
  uint64_t seed;
  double threshold;
  int flush_caches; /* every timed call from flushed caches (real_eval_set_flush) */
} tune_compare_opts;

/* 0 when every class ran and verified; 1 if a configuration gave a wrong
 * answer or failed; -1 with one line in err on bad input. */
int tune_compare(tune_env *env, tune_class_set *cs, const tune_compare_opts *o, char *err,
                 size_t errn);

#endif
