/* Peak probes: independent FMA chains (fp32) and vdpbf16ps chains (bf16).
 * Each thread keeps NACC accumulators in registers; with two FMA ports of
 * latency 4 at least 8 independent chains are needed, 16 leaves headroom. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/peak.h"

#include "xattn_bench/timing.h"

#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "isa/amx_tiles.h" /* the kernels' tile configuration */
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"

#define NACC 16
/* 16 named accumulators (an array would be kept in memory by GCC): each
 * iteration is 16 independent FMAs; the sum at the end keeps them alive. */
#define REP16(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx512f"))) static float fma_avx512(int64_t iters, float seed) {
#define DECL(i) __m512 a##i = _mm512_set1_ps(seed + (float)i);
  REP16(DECL)
#undef DECL
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; it++) {
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, m, c);
    REP16(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, a##i);
  REP16(SUM)
#undef SUM
  return _mm512_reduce_add_ps(s);
}

#define NACC2 12
__attribute__((target("avx2,fma"))) static float fma_avx2(int64_t iters, float seed) {
#define DECL(i) __m256 a##i = _mm256_set1_ps(seed + (float)i);
  REP12(DECL)
#undef DECL
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; it++) {
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, m, c);
    REP12(STEP)
#undef STEP
  }
  __m256 t = _mm256_setzero_ps();
#define SUM(i) t = _mm256_add_ps(t, a##i);
  REP12(SUM)
#undef SUM
  float out[8], s = 0;
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
#define DECL(i) __m512 a##i = _mm512_set1_ps(seed + (float)i);
  REP16(DECL)
#undef DECL
  const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  const __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-4f), _mm512_set1_ps(1e-4f));
  for (int64_t it = 0; it < iters; it++) {
#define STEP(i) a##i = _mm512_dpbf16_ps(a##i, x, y);
    REP16(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, a##i);
  REP16(SUM)
#undef SUM
  return _mm512_reduce_add_ps(s);
}

/* AMX: 4 accumulator tiles (16 x 16 fp32), each tdpbf16ps multiplies a
 * 16 x 32 bf16 tile by a 32 x 16 one: 2 * 16 * 16 * 32 = 16384 FLOPs. Tile
 * data permission is requested by xattn_isa_runnable("amx") (the library's
 * own check), once per process. */
#define AMX_FLOPS_PER_OP 16384.0
#define AMX_OPS_PER_ITER 4

__attribute__((target("amx-tile,amx-bf16"))) static float dp_amx(int64_t iters, float seed) {
  static _Alignas(64) uint16_t a[16 * 32], b[16 * 32];
  for (int i = 0; i < 16 * 32; i++) a[i] = b[i] = (uint16_t)(0x3a83 + (i & 7)); /* small bf16 values */
  xattn_amx_tile_config cfg;
  xattn_amx_tiles_16x64(&cfg);
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, a, 64);
  _tile_loadd(5, b, 64);
  _tile_loadd(6, b, 64);
  _tile_loadd(7, a, 64);
  for (int64_t it = 0; it < iters; it++) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  static _Thread_local _Alignas(64) float c[16 * 16];
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0] + seed;
}

const char *xb_peak_isa(xb_peak_kind kind) {
  __builtin_cpu_init();
  if (kind == XB_PEAK_AMX_BF16) return xattn_isa_runnable("amx") ? "amx" : NULL;
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
  if (kind == XB_PEAK_AMX_BF16) return (double)iters * AMX_OPS_PER_ITER * AMX_FLOPS_PER_OP;
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
  double t0 = xc_now();
#pragma omp parallel num_threads(threads)
  {
    float seed = (float)omp_get_thread_num(), r;
    if (kind == XB_PEAK_AMX_BF16) r = dp_amx(iters, seed);
    else if (kind == XB_PEAK_BF16) r = dp_bf16(iters, seed);
    else if (isa[3] == '5') r = fma_avx512(iters, seed);
    else if (isa[0] == 'a') r = fma_avx2(iters, seed);
    else r = fma_scalar(iters, seed);
    if (r == 12345.678f) sink_value = r; /* keep the result alive */
  }
  return xc_now() - t0;
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
  /* a peak is the best the machine can do: the fastest of 15 short runs, so that a
   * run slowed by another process on a shared machine does not lower it */
  double best = 1e300;
  for (int i = 0; i < 15; i++) {
    double s = xb_peak_run(kind, threads, iters);
    if (s < best) best = s;
  }
  return xb_peak_flops_per_thread(kind, iters) * threads / best * 1e-9;
}
