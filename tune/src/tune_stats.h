/* Small statistics for noisy timings: a seeded RNG, medians and a bootstrap
 * confidence interval of the ratio of two medians. */
#ifndef TUNE_STATS_H
#define TUNE_STATS_H

#include <stdint.h>

#include "xattn_common/clock.h" /* xc_now */
#include "xattn_common/stats.h" /* xc_median */

typedef struct tune_rng { uint64_t s; } tune_rng;
void tune_rng_seed(tune_rng *r, uint64_t seed);
uint64_t tune_rng_next(tune_rng *r);
double tune_rng_uniform(tune_rng *r); /* [0, 1) */
double tune_rng_normal(tune_rng *r);
uint64_t tune_hash64(const char *s, uint64_t seed); /* FNV-1a, then mixed */

typedef struct tune_ratio {
  double ratio;      /* median(a) / median(b): > 1 means b is faster */
  double lo, hi;     /* 95% bootstrap interval of the ratio */
} tune_ratio;
/* Bootstrap (b resamples, seeded: the same inputs give the same interval). */
tune_ratio tune_ratio_of_medians(const double *a, int na, const double *b, int nb, int resamples,
                                 uint64_t seed);

/* The same for paired samples (a[i] and b[i] measured back to back, as the
 * interleaved comparisons do): each resample draws pairs, so load that hits
 * both members of a pair cancels instead of widening the interval. */
tune_ratio tune_ratio_of_medians_paired(const double *a, const double *b, int n, int resamples,
                                        uint64_t seed);

#endif
