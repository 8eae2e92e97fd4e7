#include "tune_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void tune_rng_seed(tune_rng *r, uint64_t seed) { r->s = seed; }

uint64_t tune_rng_next(tune_rng *r) { /* splitmix64 */
  r->s += 0x9e3779b97f4a7c15ULL;
  return mix64(r->s);
}

double tune_rng_uniform(tune_rng *r) { return (double)(tune_rng_next(r) >> 11) * 0x1.0p-53; }

double tune_rng_normal(tune_rng *r) {
  double u1 = tune_rng_uniform(r), u2 = tune_rng_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t tune_hash64(const char *s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return mix64(h);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double tune_median(const double *x, int n) {
  double small[64];
  double *t = n <= 64 ? small : malloc(sizeof(double) * (size_t)n);
  if (!t) return x[0];
  memcpy(t, x, sizeof(double) * (size_t)n);
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  if (t != small) free(t);
  return m;
}

static double resampled_median(const double *x, int n, tune_rng *r, double *scratch) {
  for (int i = 0; i < n; i++) scratch[i] = x[tune_rng_next(r) % (uint64_t)n];
  return tune_median(scratch, n);
}

/* The 95% percentile interval of bootstrap ratios (sorts them). */
static void ci95_of(double *ratios, int n, tune_ratio *out) {
  qsort(ratios, (size_t)n, sizeof(double), cmp_double);
  out->lo = ratios[(int)(0.025 * (n - 1))];
  out->hi = ratios[(int)(0.975 * (n - 1))];
}

tune_ratio tune_ratio_of_medians(const double *a, int na, const double *b, int nb, int resamples,
                                 uint64_t seed) {
  tune_ratio out = {tune_median(a, na) / tune_median(b, nb), 0, 0};
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
  tune_ratio out = {tune_median(a, n) / tune_median(b, n), 0, 0};
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
    ratios[i] = tune_median(sa, n) / tune_median(sb, n);
  }
  ci95_of(ratios, resamples, &out);
  free(ratios);
  free(sa);
  free(sb);
  return out;
}
