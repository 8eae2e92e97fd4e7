/* likwid Marker API regions around kernel calls. Built with LIKWID_PERFMON
 * only when CMake's XATTN_LIKWID is ON; otherwise every call is a no-op and
 * nothing of likwid is linked. Counters are per hardware thread, so a region
 * is started and stopped in every thread of the kernel's (bound) team. */
#include "bench_run.h"

#ifdef LIKWID_PERFMON
#include <likwid-marker.h>
#include <omp.h>

int xb_likwid_enabled(void) { return 1; }
void xb_likwid_init(void) { LIKWID_MARKER_INIT; }
void xb_likwid_close(void) { LIKWID_MARKER_CLOSE; }
void xb_likwid_begin(const char *region, int threads) {
#pragma omp parallel num_threads(threads)
  LIKWID_MARKER_START(region);
}
void xb_likwid_end(const char *region, int threads) {
#pragma omp parallel num_threads(threads)
  LIKWID_MARKER_STOP(region);
}
#else
int xb_likwid_enabled(void) { return 0; }
void xb_likwid_init(void) {}
void xb_likwid_close(void) {}
void xb_likwid_begin(const char *region, int threads) { (void)region; (void)threads; }
void xb_likwid_end(const char *region, int threads) { (void)region; (void)threads; }
#endif
