/* The fp64 reference: docs/contract.md §1–2 written as directly as possible. It defines
 * the right answer for every test; it is meant to be read, not to be fast. */
#include <math.h>
#include <stdlib.h>

#include "internal/cache.h"
#include "internal/error.h"
#include "internal/validate.h"

/* Element `at` (in elements) of tensor data of the problem's dtype, as a double. */
static double load_at(const xattn_problem *p, const void *data, int64_t at) {
  switch (p->dtype) {
    case XATTN_F32: return ((const float *)data)[at];
    case XATTN_BF16: return xattn_bf16_to_f32(((const uint16_t *)data)[at]);
    case XATTN_F16: return xattn_f16_to_f32(((const uint16_t *)data)[at]);
    default: return NAN; /* validation admits f32, bf16 and f16 only */
  }
}

/* Element d of a [rows, heads, dim] tensor as a double. */
static double load(const xattn_problem *p, const xattn_tensor *t, int64_t row, int64_t head, int64_t d) {
  return load_at(p, t->data, row * t->token_stride + head * t->head_stride + d);
}

/* Number of keys request b has: its encoder tokens in cross mode, else S_b. */
static int64_t key_count(const xattn_problem *p, int32_t b) {
  return p->mode == XATTN_MODE_CROSS ? p->encoder_lens[b]
                                     : (int64_t)p->prefix_lens[b] + p->extend_lens[b];
}

/* docs/contract.md §2: may extend query i of request b see key position j? */
static int visible(const xattn_problem *p, int32_t b, int64_t i, int64_t j) {
  int64_t P = p->prefix_lens[b], pos = P + i;
  int ok = 1;
  switch (p->mode) {
    case XATTN_MODE_CAUSAL: ok = j <= (p->align == XATTN_ALIGN_TOP_LEFT ? i : pos); break;
    case XATTN_MODE_BIDIRECTIONAL: break;
    case XATTN_MODE_CROSS: break;
    case XATTN_MODE_TREE: {
      int64_t E = p->tree_max_extend;
      ok = j < P || p->tree_mask[((int64_t)b * E + i) * E + (j - P)];
      break;
    }
  }
  if (p->window_left >= 0 && j < pos - p->window_left) ok = 0;
  if (p->window_right >= 0 && j > pos + p->window_right) ok = 0;
  return ok;
}

/* Key/value j of request b, KV head kvh, element d: from the cache through the
 * token table (prefix and encoder keys; slots or paged blocks, internal/cache.h)
 * or from the extend tensors. v: 0 for the key, 1 for the value. */
static double key_elem(const xattn_problem *p, int32_t b, int64_t j, int64_t row0, int64_t kvh, int v,
                       int64_t d) {
  if (p->mode == XATTN_MODE_CROSS || j < p->prefix_lens[b]) {
    const void *data = v ? p->v_cache.data : p->k_cache.data;
    const int64_t at = xattn_cache_offset(p, b, j, (int)kvh, v) + d;
    if (xattn_cache_dtype(p) == p->dtype) return load_at(p, data, at);
    /* fp8: the code's exact value times the tensor scale and the token's scale */
    const float *per = v ? p->v_scales : p->k_scales;
    double x = xattn_fp8_to_f32(((const uint8_t *)data)[at], p->cache_dtype) * (double)(v ? p->v_scale : p->k_scale);
    if (per) x *= per[xattn_cache_token(p, b, j) * p->heads_kv + kvh];
    return x;
  }
  return load(p, v ? &p->v_ext : &p->k_ext, row0 + (j - p->prefix_lens[b]), kvh, d);
}

xattn_status xattn_reference(const xattn_problem *p, double *out) {
  xattn_status s = xattn_validate_inputs(p, 0);
  if (s != XATTN_OK) return s;
  if (!out) return xattn_fail(XATTN_ERR_NULL, "out: NULL");
  const int64_t D = p->head_dim, DV = p->head_dim_v, HQ = p->heads_q;
  const int64_t group = p->heads_q / p->heads_kv;
  int64_t row0 = 0;
  for (int32_t b = 0; b < p->batch; b++) {
    if (p->extend_start) row0 = p->extend_start[b];
    const int64_t S = key_count(p, b);
    double *score = malloc(sizeof(double) * (size_t)(S > 0 ? S : 1));
    if (!score) return xattn_fail(XATTN_ERR_NOMEM, "reference: out of memory");
    for (int64_t i = 0; i < p->extend_lens[b]; i++) {
      for (int64_t h = 0; h < HQ; h++) {
        const int64_t kvh = h / group;
        double *o = out + ((row0 + i) * HQ + h) * DV;
        double m = -INFINITY;
        int nan_score = 0;
        for (int64_t j = 0; j < S; j++) {
          if (!visible(p, b, i, j)) continue; /* masked: never read, whatever it holds */
          double dot = 0;
          for (int64_t d = 0; d < D; d++) dot += load(p, &p->q, row0 + i, h, d) * key_elem(p, b, j, row0, kvh, 0, d);
          double sc = p->scale * dot;
          if (p->logit_cap > 0) sc = p->logit_cap * tanh(sc / p->logit_cap);
          score[j] = sc;
          if (isnan(sc)) nan_score = 1;
          else if (sc > m) m = sc;
        }
        /* docs/contract.md, non-finite inputs: a NaN score (NaN in q or a visible
           k, or Inf x 0) has a NaN weight, which makes the whole row NaN */
        for (int64_t d = 0; d < DV; d++) o[d] = nan_score ? NAN : 0;
        if (nan_score) continue;
        /* no visible key, or every visible score -inf (weight 0): zeros, sink or not */
        if (m == -INFINITY) continue;
        if (p->sinks && p->sinks[h] > m) m = p->sinks[h];
        double denom = p->sinks ? exp(p->sinks[h] - m) : 0;
        for (int64_t j = 0; j < S; j++) {
          if (!visible(p, b, i, j)) continue; /* a visible key of weight 0 still multiplies its v (0 x Inf = NaN) */
          double w = exp(score[j] - m);
          denom += w;
          for (int64_t d = 0; d < DV; d++) o[d] += w * key_elem(p, b, j, row0, kvh, 1, d);
        }
        for (int64_t d = 0; d < DV; d++) o[d] /= denom;
      }
    }
    free(score);
    row0 += p->extend_lens[b];
  }
  return XATTN_OK;
}

/* V of docs/contract.md §5. The visible set of a non-tree row is an interval, so this counts
 * by interval arithmetic; tree rows count their extend keys one by one. */
int64_t xattn_visible_pairs(const xattn_problem *p) {
  if (xattn_validate_inputs(p, 0) != XATTN_OK) return -1;
  int64_t total = 0;
  for (int32_t b = 0; b < p->batch; b++) {
    const int64_t P = p->prefix_lens[b], S = key_count(p, b);
    for (int64_t i = 0; i < p->extend_lens[b]; i++) {
      const int64_t pos = P + i;
      int64_t lo = 0, hi = S - 1;
      if (p->mode == XATTN_MODE_CAUSAL) hi = p->align == XATTN_ALIGN_TOP_LEFT ? i : pos;
      if (p->window_left >= 0 && pos - p->window_left > lo) lo = pos - p->window_left;
      if (p->window_right >= 0 && pos + p->window_right < hi) hi = pos + p->window_right;
      if (hi > S - 1) hi = S - 1;
      if (hi < lo) continue;
      if (p->mode != XATTN_MODE_TREE) { total += hi - lo + 1; continue; }
      for (int64_t j = lo; j <= hi; j++) total += visible(p, b, i, j);
    }
  }
  return total;
}
