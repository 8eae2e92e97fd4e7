/* xattn_bench/memroof.h — what a call must read, and how fast this machine can
 * read it (the memory roofs beside the FMA peaks of peak.h).
 *
 * Bytes a call must move: every K and V row visible to at least one query of
 * its request, once, for all KV heads, plus q (read) and o (written). A
 * kernel can do no better; decode and small extends are bound by this.
 *
 * Two roofs, both read-only, all threads of the calling team (bind it first):
 *   stream: each thread sums its contiguous share of one large buffer;
 *   gather: the rows of the first item, read through the problem's own token
 *     table (its slot layout: shuffled, runs, contiguous) token-major: threads
 *     split the visible tokens, each reads whole tokens (every KV head of K,
 *     then of V) and prefetches a fixed number of bytes ahead through the
 *     table. A kernel that reads the same rows cannot beat it by much.
 */
#ifndef XATTN_BENCH_MEMROOF_H
#define XATTN_BENCH_MEMROOF_H

#include <stddef.h>
#include <stdint.h>

#include "xattn/xattn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xb_must_read {
  int64_t kv_tokens;   /* (request, key position) pairs visible to at least one query */
  double kv_bytes;     /* kv_tokens x H_KV x (D + DV) x element size */
  double q_bytes, o_bytes;
  double total;        /* kv + q + o */
} xb_must_read;

/* Counts what p must read (docs/contract.md §2 mask, bench/mask.h). 0, or -1 when out of memory. */
int xb_bytes_must_read(const xattn_problem *p, xb_must_read *out);

/* The visible K/V rows of a problem in token-major order (one entry per
 * visible (request, key position): its K and V row addresses of KV head 0). */
typedef struct xb_gather_plan {
  const char **k_rows, **v_rows;     /* head 0 of each visible key */
  uint8_t *from_ext;                 /* [n]: 1 = an extend row, 0 = a cache row */
  int64_t n, n_ext;
  int heads;                         /* H_KV */
  /* [0]: cache rows (their dtype may be fp8, their heads a page apart), [1]: extend rows */
  size_t k_row_bytes[2], v_row_bytes[2]; /* one head's row */
  size_t k_head_step[2], v_head_step[2]; /* bytes between heads of one token */
} xb_gather_plan;

int xb_gather_plan_build(const xattn_problem *p, xb_gather_plan *plan);
void xb_gather_plan_free(xb_gather_plan *plan);
/* Bytes one pass reads (every row of the plan once). */
double xb_gather_plan_bytes(const xb_gather_plan *plan);
/* One pass by `threads` OpenMP threads, prefetching `prefetch_bytes` ahead
 * (0: none); returns wall seconds. */
double xb_gather_pass(const xb_gather_plan *plan, int threads, size_t prefetch_bytes);
/* Gather roof in GB/s (1e9 bytes): best of repeated passes lasting about
 * min_seconds in all (at least 3). 0 for an empty plan. */
double xb_gather_roof_gbps(const xb_gather_plan *plan, int threads, double min_seconds);

/* Stream read roof in GB/s over a buffer of `bytes` (first touched by the
 * team), best of repeated passes lasting about min_seconds (at least 3). */
double xb_stream_roof_gbps(int threads, size_t bytes, double min_seconds);

#ifdef __cplusplus
}
#endif
#endif
