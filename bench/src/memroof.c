/* Bytes a call must read and the two memory roofs (memroof.h). The reads sum
 * 64-byte blocks in the compilers' generic vectors, so the loop is bound by
 * loads, not by arithmetic, on any target. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/memroof.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "xattn_bench/mask.h"
#include "xattn_bench/timing.h"

/* ---- what must be read --------------------------------------------------- */

/* marks[j] != 0 for every key of request b that some query sees; returns the count. */
static int64_t mark_visible(const xattn_problem *p, int32_t b, uint8_t *marks, int32_t *diff) {
  const int32_t n = xb_key_count(p, b), P = p->prefix_lens[b];
  memset(diff, 0, sizeof(int32_t) * (size_t)(n + 1));
  memset(marks, 0, (size_t)n);
  const int tree = p->mode == XATTN_MODE_TREE;
  for (int32_t i = 0; i < p->extend_lens[b]; i++) {
    int32_t lo, hi;
    xb_visible_range(p, b, i, &lo, &hi);
    if (tree && hi > P) { /* extend keys of a tree: per bit below */
      for (int32_t j = lo > P ? lo : P; j < hi; j++) marks[j] |= (uint8_t)xb_key_visible(p, b, i, j);
      hi = P;
    }
    if (lo < hi) {
      diff[lo]++;
      diff[hi]--;
    }
  }
  int64_t count = 0;
  for (int32_t j = 0, run = 0; j < n; j++) {
    run += diff[j];
    if (run > 0) marks[j] = 1;
    count += marks[j] != 0;
  }
  return count;
}

static int32_t max_keys(const xattn_problem *p) {
  int32_t m = 0;
  for (int32_t b = 0; b < p->batch; b++)
    if (xb_key_count(p, b) > m) m = xb_key_count(p, b);
  return m;
}

int xb_bytes_must_read(const xattn_problem *p, xb_must_read *out) {
  memset(out, 0, sizeof *out);
  const int32_t n = max_keys(p);
  uint8_t *marks = malloc((size_t)n + 1);
  int32_t *diff = malloc(sizeof(int32_t) * ((size_t)n + 1));
  if (!marks || !diff) {
    free(marks);
    free(diff);
    return -1;
  }
  for (int32_t b = 0; b < p->batch; b++) out->kv_tokens += mark_visible(p, b, marks, diff);
  free(marks);
  free(diff);
  const double es = (double)xattn_dtype_size(p->dtype);
  const double ces = (double)xattn_dtype_size(p->cache_dtype == XATTN_E4M3FN || p->cache_dtype == XATTN_E5M2 ? p->cache_dtype : p->dtype);
  /* extend keys come from k_ext/v_ext (dtype), the rest from the cache (fp8: 1 byte) */
  int64_t ext_tokens = 0;
  if (p->mode != XATTN_MODE_CROSS)
    for (int32_t b = 0; b < p->batch; b++) ext_tokens += p->extend_lens[b];
  if (ext_tokens > out->kv_tokens) ext_tokens = out->kv_tokens;
  out->kv_bytes = ((double)(out->kv_tokens - ext_tokens) * ces + (double)ext_tokens * es) * p->heads_kv *
                  (p->head_dim + p->head_dim_v);
  out->q_bytes = (double)p->total_tokens * p->heads_q * p->head_dim * es;
  out->o_bytes = (double)p->total_tokens * p->heads_q * p->head_dim_v * es;
  out->total = out->kv_bytes + out->q_bytes + out->o_bytes;
  return 0;
}

/* ---- the gather plan ------------------------------------------------------ */

/* Head 0 of key j: a cache row through the library's own addressing (slot
 * tables, paged blocks in both layouts), or an extend row. */
static const char *row_address(const xattn_problem *p, int32_t b, int64_t ext0, int32_t j, int v, int *from_ext) {
  *from_ext = !(p->mode == XATTN_MODE_CROSS || j < p->prefix_lens[b]);
  if (!*from_ext) return (const char *)xattn_cache_row(p, b, j, 0, v);
  const xattn_tensor *ext = v ? &p->v_ext : &p->k_ext;
  return (const char *)ext->data + (ext0 + j - p->prefix_lens[b]) * ext->token_stride * (int64_t)xattn_dtype_size(p->dtype);
}

int xb_gather_plan_build(const xattn_problem *p, xb_gather_plan *plan) {
  memset(plan, 0, sizeof *plan);
  xb_must_read mr;
  if (xb_bytes_must_read(p, &mr) != 0) return -1;
  const int32_t n = max_keys(p);
  uint8_t *marks = malloc((size_t)n + 1);
  int32_t *diff = malloc(sizeof(int32_t) * ((size_t)n + 1));
  plan->k_rows = malloc(sizeof(char *) * (size_t)(mr.kv_tokens + 1));
  plan->v_rows = malloc(sizeof(char *) * (size_t)(mr.kv_tokens + 1));
  plan->from_ext = malloc((size_t)(mr.kv_tokens + 1));
  if (!marks || !diff || !plan->k_rows || !plan->v_rows || !plan->from_ext) {
    free(marks);
    free(diff);
    xb_gather_plan_free(plan);
    return -1;
  }
  const size_t es = xattn_dtype_size(p->dtype);
  int64_t ext0 = 0;
  for (int32_t b = 0; b < p->batch; b++) {
    const int64_t e0 = p->extend_start ? p->extend_start[b] : ext0;
    ext0 += p->extend_lens[b];
    mark_visible(p, b, marks, diff);
    for (int32_t j = 0; j < xb_key_count(p, b); j++) {
      if (!marks[j]) continue;
      int ext;
      plan->k_rows[plan->n] = row_address(p, b, e0, j, 0, &ext);
      plan->v_rows[plan->n] = row_address(p, b, e0, j, 1, &ext);
      plan->from_ext[plan->n] = (uint8_t)ext;
      plan->n_ext += ext;
      plan->n++;
    }
  }
  free(marks);
  free(diff);
  plan->heads = p->heads_kv;
  const size_t ces = xattn_dtype_size(p->cache_dtype == XATTN_E4M3FN || p->cache_dtype == XATTN_E5M2 ? p->cache_dtype : p->dtype);
  plan->k_row_bytes[0] = (size_t)p->head_dim * ces;
  plan->v_row_bytes[0] = (size_t)p->head_dim_v * ces;
  plan->k_head_step[0] = (size_t)p->k_cache.head_stride * ces;
  plan->v_head_step[0] = (size_t)p->v_cache.head_stride * ces;
  plan->k_row_bytes[1] = (size_t)p->head_dim * es;
  plan->v_row_bytes[1] = (size_t)p->head_dim_v * es;
  plan->k_head_step[1] = (size_t)p->k_ext.head_stride * es;
  plan->v_head_step[1] = (size_t)p->v_ext.head_stride * es;
  return 0;
}

void xb_gather_plan_free(xb_gather_plan *plan) {
  free(plan->k_rows);
  free(plan->v_rows);
  free(plan->from_ext);
  memset(plan, 0, sizeof *plan);
}

double xb_gather_plan_bytes(const xb_gather_plan *plan) {
  return plan->heads * ((double)(plan->n - plan->n_ext) * (double)(plan->k_row_bytes[0] + plan->v_row_bytes[0]) +
                        (double)plan->n_ext * (double)(plan->k_row_bytes[1] + plan->v_row_bytes[1]));
}

/* ---- reading -------------------------------------------------------------- */

typedef uint64_t block64 __attribute__((vector_size(64), aligned(1)));

/* Sums `bytes` bytes at src (whole 64-byte blocks, then the tail) into acc. */
static inline void read_bytes(const char *src, size_t bytes, block64 *acc) {
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) *acc += *(const block64 *)(src + i);
  for (; i < bytes; i++) (*acc)[0] += (unsigned char)src[i];
}

static inline void prefetch_bytes(const char *src, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 64) __builtin_prefetch(src + i, 0, 3);
}

static volatile uint64_t sink_value;

static void read_tokens(const xb_gather_plan *pl, int64_t from, int64_t to, int64_t ahead, block64 *acc) {
  for (int64_t t = from; t < to; t++) {
    if (ahead > 0 && t + ahead < to) {
      const int e = pl->from_ext[t + ahead];
      for (int h = 0; h < pl->heads; h++) {
        prefetch_bytes(pl->k_rows[t + ahead] + (size_t)h * pl->k_head_step[e], pl->k_row_bytes[e]);
        prefetch_bytes(pl->v_rows[t + ahead] + (size_t)h * pl->v_head_step[e], pl->v_row_bytes[e]);
      }
    }
    const int e = pl->from_ext[t];
    for (int h = 0; h < pl->heads; h++) read_bytes(pl->k_rows[t] + (size_t)h * pl->k_head_step[e], pl->k_row_bytes[e], acc);
    for (int h = 0; h < pl->heads; h++) read_bytes(pl->v_rows[t] + (size_t)h * pl->v_head_step[e], pl->v_row_bytes[e], acc);
  }
}

double xb_gather_pass(const xb_gather_plan *pl, int threads, size_t prefetch_bytes) {
  if (threads < 1) threads = 1;
  const double token_bytes = (double)pl->heads * (double)(pl->k_row_bytes[0] + pl->v_row_bytes[0]);
  int64_t ahead = token_bytes > 0 ? (int64_t)((double)prefetch_bytes / token_bytes + 0.999) : 0;
  const double t0 = xc_now();
#pragma omp parallel num_threads(threads)
  {
    const int nt = omp_get_num_threads(), me = omp_get_thread_num();
    const int64_t from = pl->n * me / nt, to = pl->n * (me + 1) / nt;
    block64 acc = {0};
    read_tokens(pl, from, to, ahead, &acc);
    uint64_t s = 0;
    for (int i = 0; i < 8; i++) s += acc[i];
    if (s == 0x123456789abcdefull) sink_value = s; /* keeps the reads alive */
  }
  return xc_now() - t0;
}

/* Best of passes: at least 3, and until min_seconds have gone by. */
static double best_of(double (*pass)(const void *, int), const void *arg, int threads, double min_seconds) {
  double best = 1e300, spent = 0;
  for (int i = 0; i < 3 || (spent < min_seconds && i < 200); i++) {
    const double s = pass(arg, threads);
    spent += s;
    if (s < best) best = s;
  }
  return best;
}

/* 16 KiB ahead: enough to cover DRAM latency at a few GB/s per thread and
 * small enough to stay in L1/L2 beside the rows being read */
#define GATHER_PREFETCH_BYTES 16384

static double gather_pass_default(const void *plan, int threads) {
  return xb_gather_pass((const xb_gather_plan *)plan, threads, GATHER_PREFETCH_BYTES);
}

double xb_gather_roof_gbps(const xb_gather_plan *plan, int threads, double min_seconds) {
  if (plan->n == 0) return 0;
  xb_gather_pass(plan, threads, GATHER_PREFETCH_BYTES); /* warm-up: page tables, frequency */
  const double best = best_of(gather_pass_default, plan, threads, min_seconds);
  return xb_gather_plan_bytes(plan) / best * 1e-9;
}

typedef struct stream_arg {
  const char *buf;
  size_t bytes;
} stream_arg;

static double stream_pass(const void *arg, int threads) {
  const stream_arg *a = arg;
  const double t0 = xc_now();
#pragma omp parallel num_threads(threads)
  {
    const int nt = omp_get_num_threads(), me = omp_get_thread_num();
    const size_t blocks = a->bytes / 64, from = blocks * (size_t)me / (size_t)nt, to = blocks * (size_t)(me + 1) / (size_t)nt;
    block64 acc = {0};
    /* in 4 KiB steps with the gather's prefetch distance: on VMs whose hardware
       prefetchers are weak the software prefetch is what reaches the roof */
    for (size_t at = from * 64, end = to * 64; at < end; at += 4096) {
      const size_t n = end - at < 4096 ? end - at : 4096;
      if (at + GATHER_PREFETCH_BYTES + n <= end) prefetch_bytes(a->buf + at + GATHER_PREFETCH_BYTES, n);
      read_bytes(a->buf + at, n, &acc);
    }
    uint64_t s = 0;
    for (int i = 0; i < 8; i++) s += acc[i];
    if (s == 0x123456789abcdefull) sink_value = s;
  }
  return xc_now() - t0;
}

double xb_stream_roof_gbps(int threads, size_t bytes, double min_seconds) {
  if (threads < 1) threads = 1;
  bytes = bytes / 64 * 64;
  char *buf = aligned_alloc(64, bytes);
  if (!buf) return 0;
  const int64_t blocks = (int64_t)(bytes / 64);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < blocks; i++) memset(buf + i * 64, (int)(i & 0x7f), 64); /* first touch by the team */
  stream_arg a = {buf, bytes};
  stream_pass(&a, threads);
  const double best = best_of(stream_pass, &a, threads, min_seconds);
  free(buf);
  return (double)bytes / best * 1e-9;
}
