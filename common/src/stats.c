#include "xattn_common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void xc_sort_doubles(double *x, int n) {
  if (n > 1) qsort(x, (size_t)n, sizeof *x, cmp_double);
}

double xc_median(const double *x, int n) {
  if (n < 1) return NAN;
  double small[64];
  double *t = n <= 64 ? small : malloc(sizeof(double) * (size_t)n);
  if (!t) return NAN;
  memcpy(t, x, sizeof(double) * (size_t)n);
  xc_sort_doubles(t, n);
  const double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  if (t != small) free(t);
  return m;
}
