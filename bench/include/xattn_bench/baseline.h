/* xattn_bench/baseline.h — unfused attention on a BLAS (OpenBLAS), the code a
 * user would write without xattn: per (request, query head) gather the
 * request's K/V rows through req_to_token into contiguous f32 buffers, then
 * per block of query rows cblas_sgemm for Q·K^T (only over the key range the
 * block can see), mask + cap + softmax (with sinks) in between, cblas_sgemm
 * for P·V. bf16/f16 inputs are converted to f32 first.
 *
 * Threading (XB_BLAS_HEADS, the default and the faster one here): the
 * (request, head) loop is an OpenMP loop over the bound team, OpenBLAS
 * single-threaded inside. XB_BLAS_GEMM: serial loop, OpenBLAS with `threads`
 * of its own threads.
 */
#ifndef XATTN_BENCH_BASELINE_H
#define XATTN_BENCH_BASELINE_H

#include "xattn_bench/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum xb_blas_threading { XB_BLAS_HEADS = 0, XB_BLAS_GEMM = 1 } xb_blas_threading;

/* Computes pb's attention into pb->o (in pb's dtype). 0 on success, -1 with
 * one line in err (unsupported mode, out of memory). */
int xb_blas_attention(xb_problem *pb, int threads, xb_blas_threading how, char *err, size_t errlen);
const char *xb_blas_threading_name(xb_blas_threading how);
/* The bytes of scratch xb_blas_attention allocates for workload w (one set of
 * f32 K/V/Q/O/score buffers per thread under XB_BLAS_HEADS, one under
 * XB_BLAS_GEMM): what a caller adds to xb_problem_build_with's memory estimate
 * when the baseline will run on the problem. */
double xb_blas_scratch_bytes(const xb_workload *w, int threads, xb_blas_threading how);

#ifdef __cplusplus
}
#endif
#endif
