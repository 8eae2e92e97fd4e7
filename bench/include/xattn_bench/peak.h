/* xattn_bench/peak.h — measured compute peak at a thread count and placement.
 *
 * fp32: a loop of independent FMA chains (16 zmm accumulators with AVX-512F,
 * else 12 ymm with AVX2+FMA, else scalar) — enough to fill two FMA ports of
 * latency 4. bf16: the same with vdpbf16ps (AVX512_BF16), 64 FLOPs per
 * instruction. AMX (where xattn_isa_runnable("amx")): tdpbf16ps on 4
 * accumulator tiles, 16384 FLOPs per instruction. Run by the calling OpenMP team of `threads` (bind it first).
 */
#ifndef XATTN_BENCH_PEAK_H
#define XATTN_BENCH_PEAK_H

#include <stdint.h>
#include "xattn/xattn_introspect.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum xb_peak_kind { XB_PEAK_FP32 = 0, XB_PEAK_BF16 = 1, XB_PEAK_AMX_BF16 = 2 } xb_peak_kind;

/* ISA the probe uses: "avx512", "avx2", "scalar" (fp32); "avx512bf16" or NULL
 * when the CPU has no bf16 dot product (bf16); "amx" or NULL (amx). */
const char *xb_peak_isa(xb_peak_kind kind);
/* FLOPs one thread does for `iters` iterations of the kernel. */
double xb_peak_flops_per_thread(xb_peak_kind kind, int64_t iters);
/* Runs `iters` iterations on each of `threads` OpenMP threads; returns the
 * wall seconds of the parallel region. */
double xb_peak_run(xb_peak_kind kind, int threads, int64_t iters);
/* Calibrated measurement: GFLOP/s (best of 15 runs of ~min_seconds each).
 * 0 when the kind is not supported. */
double xb_peak_gflops(xb_peak_kind kind, int threads, double min_seconds);

#ifdef __cplusplus
}
#endif
#endif
