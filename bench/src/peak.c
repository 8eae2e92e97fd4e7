/* Peak probes: independent FMA chains (fp32) and vdpbf16ps chains (bf16).
 * Each thread keeps NACC accumulators in registers; with two FMA ports of
 * latency 4 at least 8 independent chains are needed, 16 leaves headroom. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/peak.h"

#include "xattn_bench/timing.h"

#include <immintrin.h>
#include <omp.h>
#include <stdio.h>

#define NACC 16

__attribute__((target("avx512f"))) static float fma_avx512(int64_t iters, float seed) {
  __m512 acc[NACC];
  for (int i = 0; i < NACC; i++) acc[i] = _mm512_set1_ps(seed + (float)i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; it++) {
    for (int i = 0; i < NACC; i++) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  __m512 s = acc[0];
  for (int i = 1; i < NACC; i++) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

#define NACC2 12
__attribute__((target("avx2,fma"))) static float fma_avx2(int64_t iters, float seed) {
  __m256 acc[NACC2];
  for (int i = 0; i < NACC2; i++) acc[i] = _mm256_set1_ps(seed + (float)i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; it++) {
    for (int i = 0; i < NACC2; i++) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]));
  }
  float out[8], s = 0;
  __m256 t = acc[0];
  for (int i = 1; i < NACC2; i++) t = _mm256_add_ps(t, acc[i]);
  _mm256_storeu_ps(out, t);
  for (int i = 0; i < 8; i++) s += out[i];
  return s;
}

static float fma_scalar(int64_t iters, float seed) {
  float acc[8];
  for (int i = 0; i < 8; i++) acc[i] = seed + (float)i;
  for (int64_t it = 0; it < iters; it++)
    for (int i = 0; i < 8; i++) acc[i] = acc[i] * 0.999999f + 1e-7f;
  float s = 0;
  for (int i = 0; i < 8; i++) s += acc[i];
  return s;
}

__attribute__((target("avx512f,avx512bf16"))) static float dp_bf16(int64_t iters, float seed) {
  __m512 acc[NACC];
  for (int i = 0; i < NACC; i++) acc[i] = _mm512_set1_ps(seed + (float)i);
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-4f), _mm512_set1_ps(1e-4f));
  for (int64_t it = 0; it < iters; it++) {
    for (int i = 0; i < NACC; i++) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  __m512 s = acc[0];
  for (int i = 1; i < NACC; i++) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

const char *xb_peak_isa(xb_peak_kind kind) {
  __builtin_cpu_init();
  if (kind == XB_PEAK_BF16)
    return __builtin_cpu_supports("avx512bf16") ? "avx512bf16" : NULL;
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
  return "scalar";
}

double xb_peak_flops_per_thread(xb_peak_kind kind, int64_t iters) {
  const char *isa = xb_peak_isa(kind);
  if (!isa) return 0;
  /* fp32 FMA: 2 FLOPs per lane; vdpbf16ps: 32 pairs, multiply + add = 64 per zmm */
  if (kind == XB_PEAK_BF16) return (double)iters * NACC * 64.0;
  if (isa[3] == '5') return (double)iters * NACC * 16 * 2.0;
  if (isa[0] == 'a') return (double)iters * NACC2 * 8 * 2.0;
  return (double)iters * 8 * 2.0;
}

static volatile float sink_value;

double xb_peak_run(xb_peak_kind kind, int threads, int64_t iters) {
  const char *isa = xb_peak_isa(kind);
  if (!isa) return 0;
  if (threads < 1) threads = 1;
  double t0 = xb_now();
#pragma omp parallel num_threads(threads)
  {
    float seed = (float)omp_get_thread_num(), r;
    if (kind == XB_PEAK_BF16) r = dp_bf16(iters, seed);
    else if (isa[3] == '5') r = fma_avx512(iters, seed);
    else if (isa[0] == 'a') r = fma_avx2(iters, seed);
    else r = fma_scalar(iters, seed);
    if (r == 12345.678f) sink_value = r; /* keep the result alive */
  }
  return xb_now() - t0;
}

double xb_peak_gflops(xb_peak_kind kind, int threads, double min_seconds) {
  if (!xb_peak_isa(kind)) return 0;
  if (threads < 1) threads = 1;
  int64_t iters = 1 << 14;
  double t;
  while ((t = xb_peak_run(kind, threads, iters)) < min_seconds && iters < ((int64_t)1 << 40)) {
    double grow = t > 0 ? min_seconds / t * 1.2 : 8;
    if (grow < 2) grow = 2;
    if (grow > 64) grow = 64;
    iters = (int64_t)(iters * grow);
  }
  double samples[5];
  for (int i = 0; i < 5; i++) samples[i] = xb_peak_run(kind, threads, iters);
  return xb_peak_flops_per_thread(kind, iters) * threads / xb_median(samples, 5) * 1e-9;
}
