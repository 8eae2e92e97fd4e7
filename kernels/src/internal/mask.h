/* Which keys a query sees (docs/contract.md §2) and where a key lives, shared by the
 * driver and every ISA's kernels so that the mask is written once. */
#ifndef XATTN_INTERNAL_MASK_H
#define XATTN_INTERNAL_MASK_H

#include <math.h>
#include "internal/cache.h"
#include "internal/kernel.h"

/* Number of key positions of request b: its encoder tokens in cross mode,
 * P_b + E_b otherwise. */
static inline int32_t xattn_key_count(const xattn_problem *p, int b) {
  if (p->mode == XATTN_MODE_CROSS) return p->encoder_lens[b];
  return p->prefix_lens[b] + p->extend_lens[b];
}

/* Inclusive interval [*lo, *hi] of key positions visible to extend query i of
 * request b, before the tree mask (tree mode sees the whole interval, then
 * extend keys are filtered per bit). Empty when *lo > *hi. */
static inline void xattn_query_interval(const xattn_problem *p, int b, int32_t i,
                                        int32_t *lo, int32_t *hi) {
  const int64_t n = xattn_key_count(p, b);
  const int64_t pos = (int64_t)p->prefix_lens[b] + i;
  int64_t l = 0, h = n - 1;
  if (p->mode == XATTN_MODE_CAUSAL)
    h = p->align == XATTN_ALIGN_TOP_LEFT ? i : pos;
  if (p->window_left >= 0 && pos - p->window_left > l) l = pos - p->window_left;
  if (p->window_right >= 0 && pos + p->window_right < h) h = pos + p->window_right;
  if (h > n - 1) h = n - 1;
  if (l > h) { l = 1; h = 0; }
  *lo = (int32_t)l;
  *hi = (int32_t)h;
}

/* Key position j of request b is read from the cache (prefix and encoder keys). */
static inline int xattn_is_cache_key(const xattn_problem *p, int b, int64_t j) {
  return p->mode == XATTN_MODE_CROSS || j < p->prefix_lens[b];
}

/* Address of key position j (K or V tensor pair) of request b, KV head kvh:
 * prefix and encoder keys from the cache (internal/cache.h), the rest from the
 * extend tensors. Every kernel path gathers its K/V rows through this. */
static inline const char *xattn_key_row(const xattn_run *r, int b, int kvh, int64_t j,
                                        const xattn_tensor *cache, const xattn_tensor *ext) {
  const xattn_problem *p = r->p;
  if (xattn_is_cache_key(p, b, j))
    return (const char *)cache->data +
           xattn_cache_offset(p, b, j, kvh, cache == &p->v_cache) * (int64_t)xattn_dtype_size(xattn_cache_dtype(p));
  const size_t es = xattn_dtype_size(p->dtype);
  const int64_t t = r->ext_start[b] + (j - p->prefix_lens[b]);
  return (const char *)ext->data + (t * ext->token_stride + (int64_t)kvh * ext->head_stride) * (int64_t)es;
}

/* The row epilogue, shared by the kernels (item.inc) and the kvsplit merge
 * (driver.c): where output row (request b, query i, head h) starts, and the
 * factor that turns its accumulator into o: 1 / (l + e^sink), in base 2
 * against the row's running max m. A row that saw no key (m = -inf) gets 0 and
 * so writes zeros, sink or not (docs/contract.md §1). */
static inline char *xattn_out_row(const xattn_run *r, int b, int32_t i, int h) {
  const xattn_problem *p = r->p;
  const int64_t t = r->ext_start[b] + i;
  return (char *)(uintptr_t)p->o.data + (t * p->o.token_stride + (int64_t)h * p->o.head_stride) * (int64_t)xattn_dtype_size(p->dtype);
}

static inline float xattn_row_inv_denominator(const xattn_problem *p, int h, float m, float l) {
  if (m == -INFINITY && !isnan(l)) return 0.0f; /* a NaN score leaves l NaN (m only sometimes): NaN row */
  if (p->sinks) l += exp2f(p->sinks[h] * XATTN_LOG2E - m);
  return 1.0f / l;
}

/* Tree mode: does extend query i of request b see extend key k (0-based)? */
static inline int xattn_tree_bit(const xattn_problem *p, int b, int32_t i, int32_t k) {
  const int64_t side = p->tree_max_extend;
  return p->tree_mask[((int64_t)b * side + i) * side + k] != 0;
}

#endif
