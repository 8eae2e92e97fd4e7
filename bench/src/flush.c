#include "xattn_bench/flush.h"

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

/* clflushopt: CPUID leaf 7, EBX bit 23; flushes of different lines overlap,
   where clflush's are ordered among themselves */
static int has_clflushopt(void) {
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 23 & 1);
}
__attribute__((target("clflushopt"))) static void flush_lines_opt(const char *p, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 64) _mm_clflushopt((void *)(p + i));
}
static void flush_lines(const char *p, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 64) _mm_clflush(p + i);
}
#endif

static _Atomic unsigned long long flush_calls;
unsigned long long xb_flush_count(void) { return flush_calls; }

void xb_flush_ranges(const void *const *ptrs, const size_t *bytes, int count, int threads) {
  flush_calls++;
#if defined(__x86_64__) || defined(__i386__)
  static int opt = -1;
  if (opt < 0) opt = has_clflushopt();
  const int use_opt = opt;
  for (int k = 0; k < count; k++) {
    if (!ptrs[k] || !bytes[k]) continue;
    const char *base = (const char *)((uintptr_t)ptrs[k] & ~(uintptr_t)63); /* from the first line */
    const int64_t n = (int64_t)((const char *)ptrs[k] + bytes[k] - base);
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : 1)
    for (int64_t i = 0; i < n; i += 65536) {
      const size_t len = (size_t)(n - i < 65536 ? n - i : 65536);
      if (use_opt) flush_lines_opt(base + i, len);
      else flush_lines(base + i, len);
    }
  }
  _mm_mfence(); /* the flushes are done before the timed call's first load */
#else
  (void)ptrs;
  (void)bytes;
  (void)count;
  (void)threads;
#endif
}
