/* xattn_bench/timing.h — wall-clock timing shared by the bench and the tuner. */
#ifndef XATTN_BENCH_TIMING_H
#define XATTN_BENCH_TIMING_H

#include "xattn_common/clock.h" /* xc_now */
#include "xattn_common/stats.h" /* xc_median */

#ifdef __cplusplus
extern "C" {
#endif

/* Formats seconds as "1m20s" / "12.3s" into buf. */
const char *xb_format_duration(double seconds, char *buf, int len);

/* Times fn(arg): runs it until at least min_seconds have passed (at least
 * once), `repetitions` times, and returns the median seconds per call. */
double xb_time_median(void (*fn)(void *), void *arg, int repetitions, double min_seconds);

#ifdef __cplusplus
}
#endif
#endif
