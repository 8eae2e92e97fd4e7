/* Wall-clock timing helpers shared by xattn-bench and xattn-tune. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    double t0 = xc_now(), t1;
    do {
      fn(arg);
      calls++;
      t1 = xc_now();
    } while (t1 - t0 < min_seconds);
    per_call[r] = (t1 - t0) / calls;
  }
  return xc_median(per_call, repetitions);
}
