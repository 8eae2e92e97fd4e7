/* xattn_bench/memroof.h — what a call must read, and how fast this machine can
 * read it (the memory roofs beside the FMA peaks of peak.h).
 *
 * Bytes a call must move: every K and V row visible to at least one query of
 * its request, once, for all KV heads, plus q (read) and o (written). A
 * kernel can do no better; decode and small extends are bound by this.
 *
 * Two roofs, both read-only, all threads of the calling team (bind it first),
 * both summing what they read with the widest loads the CPU has (AVX-512,
 * AVX2, else 8-byte words) so that the loop is bound by memory:
 *   stream: each thread reads its contiguous share of one large buffer; best
 *     over a few prefetch distances;
 *   gather: the visible K/V rows of the problem, read through its own token
 *     table (its slot layout: shuffled, runs, paged, contiguous; its cache
 *     layout), threads splitting the visible tokens; the BEST of several read
 *     strategies (xb_gather_strategies: token-major, short head-major tiles as
 *     the decode path reads, a few prefetch distances), measured in
 *     interleaved rounds on the same rows, in the same minutes and at the same
 *     cache temperature as the rows timed on that problem. A kernel that reads
 *     the same rows should not beat it (bench/README.md "Memory roofs").
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
  /* called (untimed) before every timed pass of xb_gather_roof_measure when
     set: xattn-bench --flush-caches flushes the problem there, so that the
     roof reads from where the kernel's rows come from (NULL: nothing) */
  void (*before_pass)(void *ctx);
  void *before_ctx;
} xb_gather_plan;

int xb_gather_plan_build(const xattn_problem *p, xb_gather_plan *plan);
void xb_gather_plan_free(xb_gather_plan *plan);
/* Bytes one pass reads (every row of the plan once). */
double xb_gather_plan_bytes(const xb_gather_plan *plan);
/* A way to read the plan: per tile of `tile_tokens` consecutive visible
 * tokens, per KV head, the tile's K rows then its V rows (tile 1: token-major,
 * every head of a token before the next token), prefetching the rows
 * `prefetch_kib` KiB on (0: none; at least one tile on) into L2 (T1, the
 * decode path's default), or into L1 (T0) where prefetch_l1 is set: the
 * decode path's level is a run setting (xattn_options.prefetch_level), on the
 * Ice Lake VM T0 set 11 of 20 roofs, 1.02-1.17x the best T1
 * strategy (bench/README.md "prefetch into L1"), and a roof must be the best
 * read any level gives. */
typedef struct xb_gather_strategy {
  int32_t tile_tokens;
  int32_t prefetch_kib;
  int32_t prefetch_l1;
} xb_gather_strategy;
#define XB_GATHER_STRATEGIES 12
extern const xb_gather_strategy xb_gather_strategies[XB_GATHER_STRATEGIES];

/* What one pass read: its wall seconds, the bytes it loaded and their
 * checksum (xb_read_checksum summed over every row it read). */
typedef struct xb_read_pass {
  double seconds;
  double bytes;
  uint64_t checksum;
} xb_read_pass;

/* The checksum a pass computes: the row's 64-bit little-endian words, and
 * the bytes past the last whole word one at a time, summed modulo 2^64. */
uint64_t xb_read_checksum(const char *src, size_t bytes);

/* The read loops' instruction set: 2 AVX-512, 1 AVX2, 0 8-byte words. Tests
 * force a lower one (-1: the best this CPU runs; never one it cannot); call
 * it before any pass. Returns the one in use now. */
int xb_read_force_isa(int isa);

/* One pass over every row of the plan by `threads` OpenMP threads (each a
 * contiguous share of the visible tokens), reading as `s` says. */
xb_read_pass xb_gather_pass(const xb_gather_plan *plan, int threads, xb_gather_strategy s);

typedef struct xb_gather_roof {
  double gbps;                              /* the roof: the best strategy's GB/s */
  int best;                                 /* its index in xb_gather_strategies */
  double gbps_of[XB_GATHER_STRATEGIES];     /* each strategy's best pass */
} xb_gather_roof;

/* The index of the smallest of n seconds (the fastest strategy); -1 when none is > 0. */
int xb_gather_fastest(const double *seconds, int n);

/* Measures every strategy in interleaved rounds (a pass of each per round):
 * at least 3 rounds, and rounds until min_seconds have gone by; each
 * strategy's best pass, the roof = the fastest of them. 0, or -1 for an empty
 * plan (out->gbps 0). */
int xb_gather_roof_measure(const xb_gather_plan *plan, int threads, double min_seconds, xb_gather_roof *out);
/* xb_gather_roof_measure's roof in GB/s (1e9 bytes). 0 for an empty plan. */
double xb_gather_roof_gbps(const xb_gather_plan *plan, int threads, double min_seconds);

/* Stream read roof in GB/s over a buffer of `bytes` (first touched by the
 * team): prefetch distances 0, 16 and 128 KiB in interleaved rounds (at least
 * 3, until min_seconds have gone by), the best pass of any. */
double xb_stream_roof_gbps(int threads, size_t bytes, double min_seconds);

#ifdef __cplusplus
}
#endif
#endif
