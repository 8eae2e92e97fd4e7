/* Wall-clock timing helpers shared by xattn-bench and xattn-tune. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double xb_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double xb_median(const double *v, int n) {
  if (n <= 0) return 0.0;
  if (n > 4096) n = 4096;
  double tmp[4096];
  memcpy(tmp, v, (size_t)n * sizeof *v);
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
  return (n % 2) ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

const char *xb_format_duration(double s, char *buf, int len) {
  if (s < 0) s = 0;
  if (s < 60)
    snprintf(buf, (size_t)len, "%.1fs", s);
  else if (s < 3600)
    snprintf(buf, (size_t)len, "%dm%02ds", (int)(s / 60), (int)s % 60);
  else
    snprintf(buf, (size_t)len, "%dh%02dm", (int)(s / 3600), ((int)s % 3600) / 60);
  return buf;
}

double xb_time_median(void (*fn)(void *), void *arg, int repetitions, double min_seconds) {
  if (repetitions < 1) repetitions = 1;
  if (repetitions > 4096) repetitions = 4096;
  double per_call[4096];
  for (int r = 0; r < repetitions; r++) {
    int calls = 0;
    double t0 = xb_now(), t1;
    do {
      fn(arg);
      calls++;
      t1 = xb_now();
    } while (t1 - t0 < min_seconds);
    per_call[r] = (t1 - t0) / calls;
  }
  return xb_median(per_call, repetitions);
}
