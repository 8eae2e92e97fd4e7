/* Writing memory back and out of every cache level before a timed call, so
 * that the call reads it from DRAM as a served decode step does
 * (xattn-bench / xattn-tune / xattn peers --flush-caches). One implementation
 * for two users: bench's problems (xb_problem_flush) and, through the shared
 * library libxattn_flush.so that `xattn peers` loads with ctypes, the peers'
 * own tensors. */
#ifndef XATTN_BENCH_FLUSH_H
#define XATTN_BENCH_FLUSH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flushes the `count` ranges (ptrs[i], bytes[i]; NULL or 0 bytes: skipped)
 * line by line (clflushopt where the CPU has it, else clflush; nothing off
 * x86), split over `threads` OpenMP threads, then fences. */
void xb_flush_ranges(const void *const *ptrs, const size_t *bytes, int count, int threads);

/* Calls of xb_flush_ranges so far in this process: what a tool reports to
 * show that its flag took effect. */
unsigned long long xb_flush_count(void);

#ifdef __cplusplus
}
#endif

#endif
