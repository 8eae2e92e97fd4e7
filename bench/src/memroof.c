/* Bytes a call must read and the two memory roofs (memroof.h); the read
 * loops themselves are in memread.c. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/memroof.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "xattn_bench/mask.h"
#include "xattn_bench/timing.h"
#include "memread.h"

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

/* Token-major (tile 1), 4-token tiles, and the decode path's 16-token tiles,
 * each without prefetch, 16 KiB and 128 KiB ahead (the decode path's auto
 * distance). On the development VM the 4-token tiles came out fastest on
 * token-major caches and tile 1 on the paged head-major layout; longer tiles
 * (64, 256, a whole head) were slower everywhere (bench/README.md). */
const xb_gather_strategy xb_gather_strategies[XB_GATHER_STRATEGIES] = {
    {1, 0, 0}, {1, 16, 0}, {1, 128, 0}, {4, 0, 0},  {4, 16, 0}, {4, 128, 0},
    {16, 0, 0}, {16, 16, 0}, {16, 128, 0}, {1, 16, 1}, {4, 16, 1}, {16, 16, 1},
};

static volatile uint64_t sink_value;

xb_read_pass xb_gather_pass(const xb_gather_plan *pl, int threads, xb_gather_strategy s) {
  if (threads < 1) threads = 1;
  const int64_t tile = s.tile_tokens > 0 ? s.tile_tokens : 1;
  const double token_bytes = (double)pl->heads * (double)(pl->k_row_bytes[0] + pl->v_row_bytes[0]);
  int64_t ahead = s.prefetch_kib > 0 && token_bytes > 0 ? (int64_t)(s.prefetch_kib * 1024.0 / token_bytes + 0.999) : 0;
  if (ahead > 0 && ahead < tile) ahead = tile; /* a tile not yet being read */
  uint64_t sum = 0, bytes = 0;
  const double t0 = xc_now();
#pragma omp parallel num_threads(threads) reduction(+ : sum, bytes)
  {
    const int nt = omp_get_num_threads(), me = omp_get_thread_num();
    const xb_read_sum r = xb_read_gather(pl, pl->n * me / nt, pl->n * (me + 1) / nt, tile, ahead, s.prefetch_l1);
    sum += r.sum;
    bytes += r.bytes;
  }
  const double secs = xc_now() - t0;
  if (sum == 0x123456789abcdefull) sink_value = sum; /* keeps the reads alive */
  return (xb_read_pass){secs, (double)bytes, sum};
}

int xb_gather_fastest(const double *seconds, int n) {
  int best = -1;
  for (int i = 0; i < n; i++)
    if (seconds[i] > 0 && (best < 0 || seconds[i] < seconds[best])) best = i;
  return best;
}

/* Rounds of one pass of each of n ways to read: at least 3 rounds, and
 * rounds until min_seconds have gone by; best[i] = way i's fastest pass.
 * Interleaving gives every way the same share of a neighbour's noise. */
typedef double (*read_way)(const void *arg, int threads, int way);
static void best_in_rounds(read_way pass, const void *arg, int n, int threads, double min_seconds, double *best) {
  for (int i = 0; i < n; i++) best[i] = 1e300;
  double spent = 0;
  for (int round = 0; round < 3 || (spent < min_seconds && round < 200); round++)
    for (int i = 0; i < n; i++) {
      const double s = pass(arg, threads, i);
      spent += s;
      if (s < best[i]) best[i] = s;
    }
}

static double gather_way(const void *plan, int threads, int way) {
  const xb_gather_plan *pl = (const xb_gather_plan *)plan;
  if (pl->before_pass) pl->before_pass(pl->before_ctx);
  return xb_gather_pass(pl, threads, xb_gather_strategies[way]).seconds;
}

int xb_gather_roof_measure(const xb_gather_plan *plan, int threads, double min_seconds, xb_gather_roof *out) {
  memset(out, 0, sizeof *out);
  out->best = -1;
  if (plan->n == 0) return -1;
  gather_way(plan, threads, 0); /* warm-up: page tables, frequency, the rows into what caches hold them */
  double best[XB_GATHER_STRATEGIES];
  best_in_rounds(gather_way, plan, XB_GATHER_STRATEGIES, threads, min_seconds, best);
  const double bytes = xb_gather_plan_bytes(plan);
  for (int i = 0; i < XB_GATHER_STRATEGIES; i++) out->gbps_of[i] = bytes / best[i] * 1e-9;
  out->best = xb_gather_fastest(best, XB_GATHER_STRATEGIES);
  out->gbps = out->best >= 0 ? out->gbps_of[out->best] : 0;
  return 0;
}

double xb_gather_roof_gbps(const xb_gather_plan *plan, int threads, double min_seconds) {
  xb_gather_roof r;
  return xb_gather_roof_measure(plan, threads, min_seconds, &r) == 0 ? r.gbps : 0;
}

typedef struct stream_arg {
  const char *buf;
  size_t bytes;
} stream_arg;

/* prefetch distances of the stream roof's ways */
static const size_t stream_prefetch[] = {0, 16384, 131072};
#define STREAM_WAYS ((int)(sizeof stream_prefetch / sizeof *stream_prefetch))

static double stream_way(const void *arg, int threads, int way) {
  const stream_arg *a = arg;
  uint64_t sum = 0;
  const double t0 = xc_now();
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  {
    const int nt = omp_get_num_threads(), me = omp_get_thread_num();
    const size_t blocks = a->bytes / 64, from = blocks * (size_t)me / (size_t)nt, to = blocks * (size_t)(me + 1) / (size_t)nt;
    sum += xb_read_stream(a->buf, from * 64, to * 64, stream_prefetch[way]).sum;
  }
  const double secs = xc_now() - t0;
  if (sum == 0x123456789abcdefull) sink_value = sum;
  return secs;
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
  stream_way(&a, threads, 0);
  double best[STREAM_WAYS];
  best_in_rounds(stream_way, &a, STREAM_WAYS, threads, min_seconds, best);
  free(buf);
  return (double)bytes / best[xb_gather_fastest(best, STREAM_WAYS)] * 1e-9;
}
