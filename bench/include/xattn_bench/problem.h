/* xattn_bench/problem.h — a workload turned into a fully populated xattn_problem.
 *
 * Seeded, unit-scale random data (counter-based RNG, so the values do not
 * depend on the thread count), req_to_token rows pointing at shuffled cache
 * slots, sinks and tree masks where the workload asks for them. Buffers are
 * 64-byte aligned and first touched by the calling OpenMP team (call after
 * xb_bind_threads with the same thread count), so pages land on the NUMA
 * node(s) of the threads that will use them.
 */
#ifndef XATTN_BENCH_PROBLEM_H
#define XATTN_BENCH_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xb_problem {
  xattn_problem p;        /* ready to pass to xattn_extend_attention */
  const xb_workload *w;   /* not owned */
  xattn_dtype dtype;
  int threads;            /* team size used for first touch */
  int64_t visible_pairs;  /* xattn_visible_pairs(&p) */
  double flops;           /* docs/contract.md §5 */
  size_t input_bytes;     /* q, k/v ext, k/v cache, token table, masks */
  size_t output_bytes;    /* o */
  /* the bytes of each tensor below (0 where there is none): what xb_problem_flush flushes */
  size_t q_bytes, k_ext_bytes, v_ext_bytes, k_cache_bytes, v_cache_bytes, table_bytes, tree_bytes;
  /* owned storage */
  void *q, *k_ext, *v_ext, *k_cache, *v_cache, *o;
  int32_t *prefix_lens, *extend_lens, *extend_start, *encoder_lens;
  int32_t *req_to_token;
  int64_t *req_index;
  float *sinks;
  uint8_t *tree_mask;
} xb_problem;

/* How the K/V caches of the problems built from now on are allocated
 * (xattn-bench --cache-pages): XB_CACHE_PAGES_DEFAULT, the allocator's pages
 * (4 KiB on Linux unless transparent huge pages are "always"), or
 * XB_CACHE_PAGES_HUGE, 2 MiB-aligned and madvise(MADV_HUGEPAGE): huge pages
 * where the kernel grants them, as a serving engine may ask for its KV cache.
 * Only the allocation differs, not the data; the gather roof of a row reads
 * the same memory as its kernel, so pct_mem_roof compares like with like.
 * On the decode path every shuffled token is a new 4 KiB page, a page walk
 * (bench/README.md "the decode path on Sapphire Rapids after sessions 9-10"). */
typedef enum xb_cache_pages { XB_CACHE_PAGES_DEFAULT = 0, XB_CACHE_PAGES_HUGE = 1 } xb_cache_pages;
void xb_set_cache_pages(xb_cache_pages how);
xb_cache_pages xb_get_cache_pages(void);
const char *xb_cache_pages_name(xb_cache_pages how); /* "default", "huge" */
/* Whether the kernel can grant huge pages on request: transparent huge pages
 * "always" or "madvise" (Linux sysfs); 0 elsewhere or when "never". */
int xb_huge_pages_available(void);

/* Builds the problem for workload w in dtype, first-touching with an OpenMP
 * team of `threads` (<= 0: 1). 0 on success, -1 with one line in err. */
int xb_problem_build(xb_problem *out, const xb_workload *w, xattn_dtype dtype,
                     uint64_t seed, int threads, char *err, size_t errlen);
/* The same, counting extra_bytes the caller will allocate for this problem
 * (the BLAS baseline's scratch: xb_blas_scratch_bytes) in the memory estimate
 * that refuses a problem needing more than half of the available memory. */
int xb_problem_build_with(xb_problem *out, const xb_workload *w, xattn_dtype dtype, uint64_t seed,
                          int threads, double extra_bytes, char *err, size_t errlen);
/* The same problem without tensor data (lengths, token table, masks, sinks;
 * every tensor points at one small dummy): for xattn_resolve, FLOP counts and
 * planning. Never pass it to a kernel. */
int xb_problem_build_shape(xb_problem *out, const xb_workload *w, xattn_dtype dtype,
                           uint64_t seed, char *err, size_t errlen);
void xb_problem_free(xb_problem *pb);

/* Element i of an array of dtype t, as float; and the reverse (round to
 * nearest even, through the library's conversions). */
float xb_element_f32(const void *base, xattn_dtype t, int64_t i);
void xb_element_store(void *base, xattn_dtype t, int64_t i, float v);

/* Writes every line of the problem's memory (q, K/V extend rows and caches,
 * the token table, tree mask, o) back and out of every cache level
 * (clflushopt where the CPU has it, else clflush), split over `threads`
 * OpenMP threads, fenced: the next call reads its rows from memory, as a
 * serving engine's next layer does (xattn-bench --flush-caches). */
void xb_problem_flush(const xb_problem *pb, int threads);

/* Zeroes o (to tell a kernel that wrote nothing from one that did). */
void xb_problem_clear_output(xb_problem *pb);

/* Max |o - ref| / (atol + rtol |ref|) over all outputs, with docs/contract.md §3
 * tolerances of the problem's dtype; <= 1 means within tolerance. `o` is a
 * dense [T, H_Q, DV] float array. */
double xb_error_ratio(const xb_problem *pb, const float *o, const double *ref);
/* Reads the problem's own output (p.o in its dtype) into a dense float array. */
void xb_problem_output_f32(const xb_problem *pb, float *dst);

#ifdef __cplusplus
}
#endif
#endif
