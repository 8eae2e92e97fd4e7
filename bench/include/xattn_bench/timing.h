/* xattn_bench/timing.h — wall-clock timing shared by the bench and the tuner. */
#ifndef XATTN_BENCH_TIMING_H
#define XATTN_BENCH_TIMING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Monotonic seconds. */
double xb_now(void);
/* Median of n values (sorts a copy; n <= 4096). 0 when n == 0. */
double xb_median(const double *v, int n);
/* Formats seconds as "1m20s" / "12.3s" into buf. */
const char *xb_format_duration(double seconds, char *buf, int len);

/* Times fn(arg): runs it until at least min_seconds have passed (at least
 * once), `repetitions` times, and returns the median seconds per call. */
double xb_time_median(void (*fn)(void *), void *arg, int repetitions, double min_seconds);

#ifdef __cplusplus
}
#endif
#endif
