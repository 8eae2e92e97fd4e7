#include "tune_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xattn_common/hash.h"

void tune_rng_seed(tune_rng *r, uint64_t seed) { r->s = seed; }

uint64_t tune_rng_next(tune_rng *r) { return xc_splitmix64(&r->s); }

double tune_rng_uniform(tune_rng *r) { return xc_uniform01(&r->s); }

double tune_rng_normal(tune_rng *r) {
  double u1 = tune_rng_uniform(r), u2 = tune_rng_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t tune_hash64(const char *s, uint64_t seed) {
  return xc_mix64(xc_fnv1a64_str(XC_FNV1A64_OFFSET ^ seed, s));
}

static double resampled_median(const double *x, int n, tune_rng *r, double *scratch) {
  for (int i = 0; i < n; i++) scratch[i] = x[tune_rng_next(r) % (uint64_t)n];
  return xc_median(scratch, n);
}

/* The 95% percentile interval of bootstrap ratios (sorts them). */
static void ci95_of(double *ratios, int n, tune_ratio *out) {
  xc_sort_doubles(ratios, n);
  out->lo = ratios[(int)(0.025 * (n - 1))];
  out->hi = ratios[(int)(0.975 * (n - 1))];
}

tune_ratio tune_ratio_of_medians(const double *a, int na, const double *b, int nb, int resamples,
                                 uint64_t seed) {
  tune_ratio out = {xc_median(a, na) / xc_median(b, nb), 0, 0};
  if (resamples < 20) resamples = 20;
  double *ratios = malloc(sizeof(double) * (size_t)resamples);
  double *scratch = malloc(sizeof(double) * (size_t)(na > nb ? na : nb));
  if (!ratios || !scratch) {
    free(ratios);
    free(scratch);
    out.lo = out.hi = out.ratio;
    return out;
  }
  tune_rng r;
  tune_rng_seed(&r, seed);
  for (int i = 0; i < resamples; i++) {
    double ma = resampled_median(a, na, &r, scratch);
    double mb = resampled_median(b, nb, &r, scratch);
    ratios[i] = ma / mb;
  }
  ci95_of(ratios, resamples, &out);
  free(ratios);
  free(scratch);
  return out;
}

tune_ratio tune_ratio_of_medians_paired(const double *a, const double *b, int n, int resamples,
                                        uint64_t seed) {
  tune_ratio out = {xc_median(a, n) / xc_median(b, n), 0, 0};
  if (resamples < 20) resamples = 20;
  double *ratios = malloc(sizeof(double) * (size_t)resamples);
  double *sa = malloc(sizeof(double) * (size_t)n), *sb = malloc(sizeof(double) * (size_t)n);
  if (!ratios || !sa || !sb) {
    free(ratios);
    free(sa);
    free(sb);
    out.lo = out.hi = out.ratio;
    return out;
  }
  tune_rng r;
  tune_rng_seed(&r, seed);
  for (int i = 0; i < resamples; i++) {
    for (int j = 0; j < n; j++) {
      int k = (int)(tune_rng_next(&r) % (uint64_t)n);
      sa[j] = a[k];
      sb[j] = b[k];
    }
    ratios[i] = xc_median(sa, n) / xc_median(sb, n);
  }
  ci95_of(ratios, resamples, &out);
  free(ratios);
  free(sa);
  free(sb);
  return out;
}
