/* Cycle split of the AMX kernel, compiled in only with -DXATTN_AMX_PROFILE=1
 * (cmake -DXATTN_AMX_PROFILE=ON): there are no hardware counters in the VMs
 * this runs on, so each section of a tile iteration is bracketed with rdtsc
 * (TSC ticks, not core cycles: only the ratios matter). On a shared machine a
 * section that was preempted reads milliseconds: samples over PROF_OUTLIER
 * ticks are dropped (and counted), the rest are summed over threads and
 * printed to stderr at exit as one table; kernels/README.md keeps the split. Without the macro every PROF_* expands to nothing. */
#ifndef XATTN_AMX_PROFILE_H
#define XATTN_AMX_PROFILE_H

#if defined(XATTN_AMX_PROFILE) && XATTN_AMX_PROFILE
#include <stdatomic.h>
#include <stdio.h>
#include <x86intrin.h>

enum { PROF_PACK_Q, PROF_PACK_KV, PROF_QK, PROF_SOFTMAX, PROF_RESCALE, PROF_PV, PROF_N };
static const char *const prof_names[PROF_N] = {"pack Q (bf16 copy)",       "pack K, V (transpose, VNNI)",
                                               "QK tile products + stores", "online softmax + P to bf16",
                                               "accumulator rescale",       "PV tile products + acc tiles"};
static _Atomic unsigned long long prof_ticks[PROF_N], prof_tdp[PROF_N], prof_calls[PROF_N], prof_dropped[PROF_N];
#define PROF_OUTLIER 2000000ull /* ~1 ms: far above any clean sample, far below a time slice */

#define PROF_START(v) const unsigned long long v = __rdtsc()
#define PROF_ADD(sec, v, tdps)                                                                   \
  do {                                                                                           \
    const unsigned long long prof_d = __rdtsc() - (v);                                           \
    if (prof_d > PROF_OUTLIER) {                                                                 \
      atomic_fetch_add_explicit(&prof_dropped[sec], 1ull, memory_order_relaxed);                 \
      break;                                                                                     \
    }                                                                                            \
    atomic_fetch_add_explicit(&prof_ticks[sec], prof_d, memory_order_relaxed);                   \
    atomic_fetch_add_explicit(&prof_tdp[sec], (unsigned long long)(tdps), memory_order_relaxed); \
    atomic_fetch_add_explicit(&prof_calls[sec], 1ull, memory_order_relaxed);                    \
  } while (0)

__attribute__((destructor)) static void prof_print(void) {
  unsigned long long total = 0;
  for (int s = 0; s < PROF_N; s++) total += atomic_load(&prof_ticks[s]);
  if (!total) return;
  fprintf(stderr, "xattn amx profile: TSC ticks of clean samples (%% of their sum; per call; tdpbf16ps issued)\n");
  for (int s = 0; s < PROF_N; s++) {
    const unsigned long long t = atomic_load(&prof_ticks[s]), c = atomic_load(&prof_calls[s]);
    fprintf(stderr, "  %-30s %6.1f %%  %10.0f ticks/call  %9llu calls (%llu preempted, dropped)  %10llu tdpbf16ps\n",
            prof_names[s], 100.0 * (double)t / (double)total, c ? (double)t / (double)c : 0.0, c,
            atomic_load(&prof_dropped[s]), atomic_load(&prof_tdp[s]));
  }
}
#else
#define PROF_START(v)
#define PROF_ADD(sec, v, tdps)
#endif

#endif
