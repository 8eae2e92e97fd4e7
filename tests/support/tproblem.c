/* Test problems with armed traps; see tproblem.h. */
#include "xattn_common/hash.h"
#include "xattn/xattn_introspect.h"
#include "tproblem.h"

#include "case_io.h"
#include "internal/cache.h" /* key addressing for tp_plant_nonfinite */
#include "internal/kernel.h" /* xattn_variant_nearest */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GUARD_BYTES 256

uint64_t tp_rand(uint64_t *s) { return xc_splitmix64(s); }

double tp_uniform(uint64_t *s) { return (double)(tp_rand(s) >> 11) * 0x1.0p-52 - 1.0; }

static void put(void *base, size_t i, xattn_dtype t, float x) {
  if (t == XATTN_F32)
    ((float *)base)[i] = x;
  else if (t == XATTN_E4M3FN || t == XATTN_E5M2)
    ((uint8_t *)base)[i] = xattn_f32_to_fp8(x, t);
  else if (t == XATTN_BF16)
    ((uint16_t *)base)[i] = xattn_f32_to_bf16(x);
  else
    ((uint16_t *)base)[i] = xattn_f32_to_f16(x);
}

static double get(const void *base, size_t i, xattn_dtype t) {
  if (t == XATTN_F32) return ((const float *)base)[i];
  if (t == XATTN_E4M3FN || t == XATTN_E5M2) return xattn_fp8_to_f32(((const uint8_t *)base)[i], t);
  if (t == XATTN_BF16) return xattn_bf16_to_f32(((const uint16_t *)base)[i]);
  return xattn_f16_to_f32(((const uint16_t *)base)[i]);
}

static void fill_nan(void *base, size_t n, xattn_dtype t) {
  for (size_t i = 0; i < n; ++i) put(base, i, t, NAN);
}

/* A [rows, heads, dim] tensor with the shape's padding: NaN everywhere, then
 * random values in the elements that exist. */
static void *make_tensor(const tp_shape *s, xattn_dtype t, int64_t rows, int heads, int dim,
                         uint64_t *rng, xattn_tensor *view) {
  int64_t hs = dim + s->pad_head, ts = heads * hs + s->pad_token;
  size_t n = (size_t)(rows * ts);
  void *buf = malloc((n ? n : 1) * xattn_dtype_size(t));
  if (!buf) return NULL;
  fill_nan(buf, n, t);
  for (int64_t r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h)
      for (int d = 0; d < dim; ++d) put(buf, (size_t)(r * ts + h * hs + d), t, (float)tp_uniform(rng));
  view->data = buf;
  view->token_stride = ts;
  view->head_stride = hs;
  return buf;
}

/* Marks the rows of k/v tensors that no request uses (gap rows) as NaN. */
static void poison_rows(void *buf, const xattn_tensor *v, int64_t rows, const uint8_t *used,
                        xattn_dtype t) {
  for (int64_t r = 0; r < rows; ++r)
    if (!used[r]) fill_nan((char *)buf + (size_t)(r * v->token_stride) * xattn_dtype_size(t),
                           (size_t)v->token_stride, t);
}

/* Element offset of (token, head 0) of a cache tensor: token = block * page + i. */
static int64_t cache_token_offset(const xattn_tensor *v, int64_t bs, int64_t page, int64_t token) {
  return token / page * bs + token % page * v->token_stride;
}

/* A cache tensor of `blocks` blocks in the mask's layout: NaN padding between
 * heads and tokens (and, when pad_token > 0 and the cache is paged, an explicit
 * block stride larger than the dense one), random values in every token, drawn
 * token by token in the order of the slot table (so that page_size 1 draws what
 * it always drew). */
static void *make_cache(const tp_shape *s, const tp_mask *m, int64_t blocks, int heads, int dim,
                        uint64_t *rng, xattn_tensor *view, int64_t *block_stride) {
  const int64_t page = m->page_size > 1 ? m->page_size : 1;
  int64_t ts, hs, bs;
  if (m->cache_layout == XATTN_CACHE_HEAD_MAJOR) {
    ts = dim + s->pad_head;
    hs = page * ts + s->pad_token;
    bs = heads * hs;
  } else {
    hs = dim + s->pad_head;
    ts = heads * hs + s->pad_token;
    bs = page * ts;
  }
  *block_stride = 0;
  if (s->pad_token > 0 && (page > 1 || m->cache_layout == XATTN_CACHE_HEAD_MAJOR)) *block_stride = bs += 3;
  size_t n = (size_t)(blocks * bs);
  const xattn_dtype ct = m->kv8 ? m->kv8 : m->dtype;
  void *buf = malloc((n ? n : 1) * xattn_dtype_size(ct));
  if (!buf) return NULL;
  fill_nan(buf, n, ct);
  view->data = buf;
  view->token_stride = ts;
  view->head_stride = hs;
  for (int64_t token = 0; token < blocks * page; ++token) {
    const int64_t base = cache_token_offset(view, bs, page, token);
    for (int h = 0; h < heads; ++h)
      for (int d = 0; d < dim; ++d) put(buf, (size_t)(base + h * hs + d), ct, (float)tp_uniform(rng));
  }
  return buf;
}

/* NaN in every token of the cache that no key maps to. */
static void poison_tokens(void *buf, const xattn_tensor *v, int64_t bs, int64_t page, int64_t tokens,
                          const uint8_t *used, int heads, int dim, xattn_dtype t) {
  for (int64_t token = 0; token < tokens; ++token)
    if (!used[token])
      for (int h = 0; h < heads; ++h)
        fill_nan((char *)buf + (size_t)(cache_token_offset(v, bs, page, token) + h * v->head_stride) * xattn_dtype_size(t),
                 (size_t)dim, t);
}

/* The KV pool and the token table of tp_build: request b's keys start at
 * column start_col[b] of its (shuffled) table row; the blocks they span are
 * shuffled among 3 spare NaN blocks; every other table entry points at a NaN block. */
static int build_cache(tproblem *tp, const tp_shape *s, tp_mask m, int64_t max_keys, uint64_t *rng) {
  xattn_problem *p = &tp->p;
  const int B = s->batch;
  const int64_t page = m.page_size > 1 ? m.page_size : 1;
  tp->start_col = calloc((size_t)(B ? B : 1), sizeof *tp->start_col);
  if (!tp->start_col) return -1;
  int64_t used_blocks = 0;
  for (int b = 0; b < B; ++b) {
    int64_t n = m.mode == XATTN_MODE_CROSS ? s->encoder[b] : s->prefix[b];
    tp->start_col[b] = m.start_cols ? (b * 3 + 1) % 5 : 0;
    if (n > 0) used_blocks += (tp->start_col[b] + n - 1) / page - tp->start_col[b] / page + 1;
  }
  const int64_t blocks = used_blocks + 3;
  int64_t kbs, vbs;
  if (!(tp->k_cache = make_cache(s, &m, blocks, s->hkv, s->d, rng, &p->k_cache, &kbs)) ||
      !(tp->v_cache = make_cache(s, &m, blocks, s->hkv, s->dv, rng, &p->v_cache, &vbs)))
    return -1;
  p->cache_slots = blocks;
  p->page_size = (int32_t)page;
  p->cache_layout = m.cache_layout;
  p->k_cache_block_stride = kbs;
  p->v_cache_block_stride = vbs;
  p->req_start_col = m.start_cols ? tp->start_col : NULL;
  kbs = kbs ? kbs : (m.cache_layout == XATTN_CACHE_HEAD_MAJOR ? s->hkv * p->k_cache.head_stride : page * p->k_cache.token_stride);
  vbs = vbs ? vbs : (m.cache_layout == XATTN_CACHE_HEAD_MAJOR ? s->hkv * p->v_cache.head_stride : page * p->v_cache.token_stride);
  int64_t *perm = malloc(sizeof *perm * (size_t)blocks);
  uint8_t *used = calloc((size_t)(blocks * page), 1);
  if (!perm || !used) {
    free(perm);
    free(used);
    return -1;
  }
  for (int64_t i = 0; i < blocks; ++i) perm[i] = i;
  for (int64_t i = blocks - 1; i > 0; --i) {
    int64_t j = (int64_t)(tp_rand(rng) % (uint64_t)(i + 1)), x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
  const int64_t poison_block = perm[used_blocks];
  /* token table: unused rows and entries point at a NaN block */
  const int64_t max_reqs = B + 3, max_ctx = (max_keys + 5 + 4 + page - 1) / page;
  const size_t isz = s->idx64 ? 8 : 4;
  tp->table = malloc((size_t)(max_reqs * max_ctx) * isz);
  if (!tp->table) {
    free(perm);
    free(used);
    return -1;
  }
  for (int64_t i = 0; i < max_reqs * max_ctx; ++i) {
    if (s->idx64)
      ((int64_t *)tp->table)[i] = poison_block;
    else
      ((int32_t *)tp->table)[i] = (int32_t)poison_block;
  }
  int64_t rows_perm[TP_MAX_BATCH + 3];
  for (int64_t i = 0; i < max_reqs; ++i) rows_perm[i] = i;
  for (int64_t i = max_reqs - 1; i > 0; --i) {
    int64_t j = (int64_t)(tp_rand(rng) % (uint64_t)(i + 1)), x = rows_perm[i];
    rows_perm[i] = rows_perm[j];
    rows_perm[j] = x;
  }
  int64_t next = 0;
  for (int b = 0; b < B; ++b) {
    tp->req_index[b] = rows_perm[b];
    int64_t n = m.mode == XATTN_MODE_CROSS ? s->encoder[b] : s->prefix[b];
    if (n <= 0) continue;
    const int64_t c0 = tp->start_col[b];
    for (int64_t e = c0 / page; e <= (c0 + n - 1) / page; ++e, ++next) {
      int64_t at = rows_perm[b] * max_ctx + e;
      if (s->idx64)
        ((int64_t *)tp->table)[at] = perm[next];
      else
        ((int32_t *)tp->table)[at] = (int32_t)perm[next];
    }
    for (int64_t c = c0; c < c0 + n; ++c) /* the tokens keys map to */
      used[perm[next - 1 - ((c0 + n - 1) / page - c / page)] * page + c % page] = 1;
  }
  const xattn_dtype ct = m.kv8 ? m.kv8 : m.dtype;
  poison_tokens(tp->k_cache, &p->k_cache, kbs, page, blocks * page, used, s->hkv, s->d, ct);
  poison_tokens(tp->v_cache, &p->v_cache, vbs, page, blocks * page, used, s->hkv, s->dv, ct);
  if (m.kv8) { /* fp8: a tensor scale and per-token-per-head scales, NaN where no key maps */
    p->cache_dtype = m.kv8;
    p->k_scale = 0.75f;
    p->v_scale = 1.25f;
    tp->kv_scales = malloc(sizeof *tp->kv_scales * (size_t)(2 * blocks * page * s->hkv));
    if (!tp->kv_scales) {
      free(perm);
      free(used);
      return -1;
    }
    for (int64_t i = 0; i < 2 * blocks * page * s->hkv; ++i) {
      const int64_t token = i % (blocks * page * s->hkv) / s->hkv;
      tp->kv_scales[i] = used[token] ? (float)(1.0 + 0.5 * tp_uniform(rng)) : NAN;
    }
    p->k_scales = m.kv_tensor_scales ? NULL : tp->kv_scales;
    p->v_scales = m.kv_tensor_scales ? NULL : tp->kv_scales + blocks * page * s->hkv;
  }
  free(perm);
  free(used);
  p->req_to_token = tp->table;
  p->req_to_token_type = s->idx64 ? XATTN_I64 : XATTN_I32;
  p->max_reqs = max_reqs;
  p->max_ctx = max_ctx;
  p->req_index = tp->req_index;
  return 0;
}

int tp_build(tproblem *tp, const tp_shape *s, tp_mask m, uint64_t seed) {
  memset(tp, 0, sizeof *tp);
  tp->shape = *s;
  tp->mask = m;
  tp->seed = seed;
  uint64_t rng = seed * 0x2545f4914f6cdd1dull + 1;
  xattn_problem *p = &tp->p;
  xattn_problem_init(p);
  int B = s->batch;
  size_t nb = (size_t)(B ? B : 1);
  tp->prefix = calloc(nb, sizeof *tp->prefix);
  tp->extend = calloc(nb, sizeof *tp->extend);
  tp->encoder = calloc(nb, sizeof *tp->encoder);
  tp->start = calloc(nb, sizeof *tp->start);
  tp->req_index = calloc(nb, sizeof *tp->req_index);
  if (!tp->prefix || !tp->extend || !tp->encoder || !tp->start || !tp->req_index) goto oom;
  int64_t T = 0, max_ctx = 1, max_e = 0;
  for (int b = 0; b < B; ++b) {
    tp->prefix[b] = s->prefix[b];
    tp->extend[b] = s->extend[b];
    tp->encoder[b] = s->encoder[b];
    int64_t ctx = m.mode == XATTN_MODE_CROSS ? s->encoder[b] : (int64_t)s->prefix[b] + s->extend[b];
    if (ctx > max_ctx) max_ctx = ctx;
    if (s->extend[b] > max_e) max_e = s->extend[b];
  }
  /* rows: packed, gapped in order (gapped == 1) or gapped in reverse order (2) */
  for (int k = 0; k < B; ++k) {
    int b = s->gapped == 2 ? B - 1 - k : k;
    if (s->gapped) T += 1 + k % 2;
    tp->start[b] = (int32_t)T;
    T += s->extend[b];
  }
  if (s->gapped) T += 2;
  tp->row_written = calloc((size_t)(T ? T : 1), 1);
  if (!tp->row_written) goto oom;
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < s->extend[b]; ++i) tp->row_written[tp->start[b] + i] = 1;

  p->batch = B;
  p->prefix_lens = tp->prefix;
  p->extend_lens = tp->extend;
  p->extend_start = s->gapped ? tp->start : NULL;
  p->encoder_lens = m.mode == XATTN_MODE_CROSS ? tp->encoder : NULL;
  p->total_tokens = T;
  p->heads_q = s->hq;
  p->heads_kv = s->hkv;
  p->head_dim = s->d;
  p->head_dim_v = s->dv;
  p->dtype = m.dtype;
  p->scale = s->scale != 0 ? s->scale : 1.0f / sqrtf((float)s->d);
  p->logit_cap = s->cap;
  p->mode = m.mode;
  p->align = m.align;
  p->window_left = m.wl;
  p->window_right = m.wr;

  if (!(tp->q = make_tensor(s, m.dtype, T, s->hq, s->d, &rng, &p->q)) ||
      !(tp->k_ext = make_tensor(s, m.dtype, T, s->hkv, s->d, &rng, &p->k_ext)) ||
      !(tp->v_ext = make_tensor(s, m.dtype, T, s->hkv, s->dv, &rng, &p->v_ext)))
    goto oom;
  poison_rows(tp->q, &p->q, T, tp->row_written, m.dtype);
  poison_rows(tp->k_ext, &p->k_ext, T, tp->row_written, m.dtype);
  poison_rows(tp->v_ext, &p->v_ext, T, tp->row_written, m.dtype);

  /* KV pool: the blocks (slots when page_size <= 1) requests use, shuffled
   * among spare NaN blocks; tokens of used blocks that no key maps to stay NaN */
  if (build_cache(tp, s, m, max_ctx, &rng)) goto oom;

  if (s->sinks) {
    tp->sinks = malloc(sizeof *tp->sinks * (size_t)s->hq);
    if (!tp->sinks) goto oom;
    for (int h = 0; h < s->hq; ++h) tp->sinks[h] = (float)(0.5 + 1.5 * tp_uniform(&rng));
    p->sinks = tp->sinks;
  }
  if (m.mode == XATTN_MODE_TREE) {
    /* one more than needed, so the mask's stride is not the longest extend */
    int64_t side = max_e + 1;
    tp->tree = malloc((size_t)(nb * side * side));
    if (!tp->tree) goto oom;
    for (int b = 0; b < B; ++b)
      for (int64_t i = 0; i < side; ++i)
        for (int64_t k = 0; k < side; ++k) {
          int inside = i < s->extend[b] && k < s->extend[b];
          double u = 0.5 * (tp_uniform(&rng) + 1.0);
          /* outside the request's square: random bytes the kernel must ignore */
          tp->tree[(b * side + i) * side + k] = inside ? (k == i || u < s->tree_density) : (u < 0.5);
        }
    p->tree_mask = tp->tree;
    p->tree_max_extend = (int32_t)side;
  }

  /* output: guard | [T, H_Q, DV] with padding | guard */
  int64_t ohs = s->dv + s->pad_head, ots = s->hq * ohs + s->pad_token;
  size_t oelems = (size_t)(T * ots);
  tp->o_guard_bytes = GUARD_BYTES;
  tp->o_bytes = oelems * xattn_dtype_size(m.dtype) + 2 * GUARD_BYTES;
  tp->o_buf = malloc(tp->o_bytes);
  if (!tp->o_buf) goto oom;
  p->o.data = tp->o_buf + GUARD_BYTES;
  p->o.token_stride = ots;
  p->o.head_stride = ohs;
  tp_reset_output(tp);
  return 0;
oom:
  fprintf(stderr, "tp_build: out of memory\n");
  tp_free(tp);
  return -1;
}

void tp_free(tproblem *tp) {
  void *bufs[] = {tp->q, tp->k_ext, tp->v_ext, tp->k_cache, tp->v_cache, tp->table,
                  tp->prefix, tp->extend, tp->encoder, tp->start, tp->req_index, tp->start_col, tp->kv_scales, tp->sinks,
                  tp->tree, tp->o_buf, tp->row_written, tp->ref};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i) free(bufs[i]);
  memset(tp, 0, sizeof *tp);
}

xattn_status tp_reference(tproblem *tp) {
  size_t n = (size_t)(tp->p.total_tokens * tp->p.heads_q * tp->p.head_dim_v);
  free(tp->ref);
  tp->ref = malloc((n ? n : 1) * sizeof(double));
  if (!tp->ref) return XATTN_ERR_NOMEM;
  return xattn_reference(&tp->p, tp->ref);
}

int64_t tp_count_visible(const tproblem *tp) {
  const xattn_problem *p = &tp->p;
  int64_t v = 0;
  for (int b = 0; b < p->batch; ++b) {
    int64_t P = tp->prefix[b], E = tp->extend[b];
    int64_t S = p->mode == XATTN_MODE_CROSS ? tp->encoder[b] : P + E;
    for (int64_t i = 0; i < E; ++i)
      for (int64_t j = 0; j < S; ++j) {
        int64_t pos = P + i;
        int vis;
        switch (p->mode) {
          case XATTN_MODE_CAUSAL: vis = p->align == XATTN_ALIGN_TOP_LEFT ? j <= i : j <= pos; break;
          case XATTN_MODE_TREE:
            vis = j < P || tp->tree[((int64_t)b * p->tree_max_extend + i) * p->tree_max_extend + (j - P)];
            break;
          default: vis = 1;
        }
        if (p->window_left >= 0 && j < pos - p->window_left) vis = 0;
        if (p->window_right >= 0 && j > pos + p->window_right) vis = 0;
        v += vis;
      }
  }
  return v;
}

/* Element offset of (key position j of request b, KV head kvh, element 0) in
 * the buffer it is read from: the cache through the token table (the library's
 * one definition of cache addressing, internal/cache.h) or the extend rows.
 * v: 0 for k, 1 for v. */
static int64_t key_offset(tproblem *tp, int b, int64_t j, int kvh, int v, void **buf, xattn_dtype *dt) {
  const xattn_problem *p = &tp->p;
  if (p->mode == XATTN_MODE_CROSS || j < tp->prefix[b]) {
    *buf = v ? tp->v_cache : tp->k_cache;
    *dt = tp->mask.kv8 ? tp->mask.kv8 : tp->mask.dtype; /* fp8 caches: e4m3fn has no Inf, it stores NaN */
    return xattn_cache_offset(p, b, j, kvh, v);
  }
  const xattn_tensor *t = v ? &p->v_ext : &p->k_ext;
  *buf = v ? tp->v_ext : tp->k_ext;
  *dt = tp->mask.dtype;
  return (tp->start[b] + (j - tp->prefix[b])) * t->token_stride + kvh * t->head_stride;
}

void tp_set(tproblem *tp, void *buf, const xattn_tensor *t, int64_t row, int head, int d, float x) {
  put(buf, (size_t)(row * t->token_stride + head * t->head_stride + d), tp->mask.dtype, x);
}

static void plant(tproblem *tp, void *buf, int64_t at, xattn_dtype dt, float x) {
  put(buf, (size_t)at, dt, x);
  tp->planted++;
}

int tp_plant_nonfinite(tproblem *tp, uint64_t seed) {
  xattn_problem *p = &tp->p;
  uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 7;
  const float values[] = {NAN, INFINITY, -INFINITY};
  void *buf;
  xattn_dtype dt;
  for (int b = 0; b < p->batch; ++b) {
    const int64_t S = p->mode == XATTN_MODE_CROSS ? tp->encoder[b] : (int64_t)tp->prefix[b] + tp->extend[b];
    if (S > 0) { /* the last key's value: +-Inf (seen by the last query only under causal) */
      int64_t at = key_offset(tp, b, S - 1, (int)(tp_rand(&rng) % (uint64_t)p->heads_kv), 1, &buf, &dt);
      plant(tp, buf, at + (int64_t)(tp_rand(&rng) % (uint64_t)p->head_dim_v), dt, b % 2 ? -INFINITY : INFINITY);
    }
    /* one more: a random key's k or v, or a random query of the request */
    const int kind = (int)(tp_rand(&rng) % 3);
    const float x = values[tp_rand(&rng) % 3];
    if (kind < 2 && S > 0) {
      const int64_t j = (int64_t)(tp_rand(&rng) % (uint64_t)S);
      int64_t at = key_offset(tp, b, j, (int)(tp_rand(&rng) % (uint64_t)p->heads_kv), kind, &buf, &dt);
      plant(tp, buf, at + (int64_t)(tp_rand(&rng) % (uint64_t)(kind ? p->head_dim_v : p->head_dim)), dt, x);
    } else if (kind == 2 && tp->extend[b] > 0) {
      int64_t row = tp->start[b] + (int64_t)(tp_rand(&rng) % (uint64_t)tp->extend[b]);
      plant(tp, tp->q, row * p->q.token_stride + (int64_t)(tp_rand(&rng) % (uint64_t)p->heads_q) * p->q.head_stride +
                           (int64_t)(tp_rand(&rng) % (uint64_t)p->head_dim), tp->mask.dtype, x);
    }
  }
  return tp->planted;
}

void tp_reset_output(tproblem *tp) { memset(tp->o_buf, TP_SENTINEL, tp->o_bytes); }

double tp_out(const tproblem *tp, int64_t t, int h, int d) {
  return get(tp->p.o.data, (size_t)(t * tp->p.o.token_stride + h * tp->p.o.head_stride + d), tp->p.dtype);
}

void tp_tolerance(xattn_dtype t, double *atol, double *rtol) {
  *atol = *rtol = t == XATTN_F32 ? 1e-5 : t == XATTN_BF16 ? 1e-2 : 2e-3;
}

tp_result tp_check(const tproblem *tp) {
  const xattn_problem *p = &tp->p;
  tp_result r;
  memset(&r, 0, sizeof r);
  r.ow_offset = -1;
  double atol, rtol;
  tp_tolerance(p->dtype, &atol, &rtol);
  int64_t T = p->total_tokens;
  int H = p->heads_q, DV = p->head_dim_v;
  for (int64_t t = 0; t < T; ++t) {
    if (!tp->row_written[t]) continue;
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < DV; ++d) {
        double got = tp_out(tp, t, h, d), want = tp->ref[(t * H + h) * DV + d];
        double diff = fabs(got - want), ratio = diff / (atol + rtol * fabs(want));
        if (isnan(want)) ratio = isnan(got) ? 0.0 : INFINITY;
        else if (isinf(want)) ratio = isnan(got) || got == want ? 0.0 : INFINITY, diff = ratio;
        r.checked++;
        if (!isfinite(got)) r.nonfinite++;
        if (!(ratio <= 1.0)) r.bad++;
        if (!(ratio <= r.worst_ratio)) { /* NaN wins */
          r.worst_ratio = isnan(ratio) ? INFINITY : ratio;
          r.wt = t, r.wh = h, r.wd = d, r.got = got, r.want = want;
        }
        if (diff > r.max_abs) r.max_abs = diff;
      }
  }
  /* every byte outside the written elements keeps the sentinel */
  size_t es = xattn_dtype_size(p->dtype);
  int64_t ots = p->o.token_stride, ohs = p->o.head_stride;
  for (size_t off = 0; off < tp->o_bytes; ++off) {
    if (tp->o_buf[off] == TP_SENTINEL) continue;
    int written = 0;
    if (off >= tp->o_guard_bytes && off < tp->o_bytes - tp->o_guard_bytes) {
      int64_t e = (int64_t)((off - tp->o_guard_bytes) / es);
      int64_t t = e / ots, rem = e % ots, h = rem / ohs, d = rem % ohs;
      written = t < T && tp->row_written[t] && h < H && d < DV;
    }
    if (!written) {
      if (!r.overwritten) r.ow_offset = (int64_t)off - (int64_t)tp->o_guard_bytes;
      r.overwritten++;
    }
  }
  return r;
}

int tp_ok(const tp_result *r) { return r->bad == 0 && r->overwritten == 0; }

void tp_describe(const tproblem *tp, char *buf, size_t len) {
  const tp_shape *s = &tp->shape;
  int n = snprintf(buf, len, "shape=%s mode=%s align=%s window=(%d,%d) dtype=%s seed=%llu%s", s->name,
                   xattn_mode_name(tp->mask.mode), xattn_align_name(tp->mask.align), tp->mask.wl,
                   tp->mask.wr, xattn_dtype_name(tp->mask.dtype), (unsigned long long)tp->seed,
                   tp->planted ? " nonfinite-planted" : "");
  if (n > 0 && (size_t)n < len && (tp->mask.page_size > 1 || tp->mask.cache_layout || tp->mask.start_cols || tp->mask.kv8))
    snprintf(buf + n, len - (size_t)n, " page=%d cache=%s start_cols=%d kv=%s", tp->mask.page_size,
             xattn_cache_layout_name(tp->mask.cache_layout), tp->mask.start_cols,
             tp->mask.kv8 ? xattn_dtype_name(tp->mask.kv8) : "same");
}

void tp_describe_result(const tp_result *r, char *buf, size_t len) {
  if (r->bad < 0) {
    snprintf(buf, len, "call failed");
    return;
  }
  int n = snprintf(buf, len, "%lld of %lld bad, %lld non-finite, %lld bytes overwritten",
                   (long long)r->bad, (long long)r->checked, (long long)r->nonfinite,
                   (long long)r->overwritten);
  if (r->overwritten && n > 0 && (size_t)n < len)
    n += snprintf(buf + n, len - (size_t)n, " (first at byte %lld of o)", (long long)r->ow_offset);
  if (n > 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, "; worst [t=%lld h=%lld d=%lld] got %.9g want %.9g (|err|/tol %.3g)",
             (long long)r->wt, (long long)r->wh, (long long)r->wd, r->got, r->want, r->worst_ratio);
}

/* ---- run configurations -------------------------------------------------- */
static const int kv_split_values[] = {0, 2, 3, 7};
/* decode layout: (splits, prefetch, prefetch level) triples; 64 splits leave
   parts with no key (or only masked keys) on the small problems of the grids;
   the level (into L1, into L2) changes no result, only which prefetch runs */
static const int decode_values[][3] = {{0, 0, 0}, {1, -1, 0}, {3, 1, 1}, {64, 5, 2}};
static const int thread_values[] = {1, 2, 3};
static const xattn_schedule sched_values[] = {XATTN_SCHED_AUTO, XATTN_SCHED_STATIC,
                                              XATTN_SCHED_DYNAMIC};

/* Optional filters for reproducing one failure: XATTN_TEST_ISA, _VARIANT,
 * _LAYOUT, _THREADS. */
static int env_match(const char *var, const char *value) {
  const char *f = getenv(var);
  return !f || !*f || !strcmp(f, value);
}

static int keep(const tp_exec *e) {
  char th[16];
  snprintf(th, sizeof th, "%d", e->threads);
  return env_match("XATTN_TEST_ISA", e->isa) && env_match("XATTN_TEST_VARIANT", e->variant ? e->variant : "auto") &&
         env_match("XATTN_TEST_LAYOUT", e->layout ? e->layout : "auto") && env_match("XATTN_TEST_THREADS", th);
}

int tp_exec_list(tp_level level, tp_exec **out) {
  const char *isas[16];
  int nisa = 0;
  for (int i = 0; i < xattn_isa_count() && nisa < 16; ++i)
    if (xattn_isa_runnable(xattn_isa_name(i))) isas[nisa++] = xattn_isa_name(i);
  /* layout configurations: kvsplit once per split count */
  struct { const char *layout; int splits, prefetch, level; } lc[64];
  int nlc = 0;
  for (int l = 0; l < xattn_layout_count(); ++l) {
    const char *name = xattn_layout_name(l);
    const int kvsplit = !strcmp(name, "kvsplit"), decode = !strcmp(name, "decode") || !strcmp(name, "lanes");
    for (int k = 0; k < (kvsplit || decode ? 4 : 1) && nlc < 64; ++k) {
      lc[nlc].layout = name;
      lc[nlc].splits = kvsplit ? kv_split_values[k] : decode ? decode_values[k][0] : 0;
      lc[nlc].prefetch = decode ? decode_values[k][1] : 0;
      lc[nlc++].level = decode ? decode_values[k][2] : 0;
    }
  }
  int nv = xattn_variant_count(), nts = 9;
  size_t cap = (size_t)nisa * (size_t)nv * (size_t)nlc * (size_t)nts + 1;
  tp_exec *list = malloc(cap * sizeof *list);
  if (!list) return *out = NULL, 0;
  int n = 0, rot = 0;
  if (level == TP_LEVEL_SMOKE) {
    int m = nv > nlc ? nv : nlc;
    if (nisa > m) m = nisa;
    for (int i = 0; i < m; ++i, ++rot) {
      tp_exec e = {isas[i % nisa], xattn_variant_name(i % nv), lc[i % nlc].layout,
                   thread_values[rot % 3], sched_values[(rot / 3) % 3], lc[i % nlc].splits,
                   lc[i % nlc].prefetch, lc[i % nlc].level};
      if (keep(&e)) list[n++] = e;
    }
  } else if (level == TP_LEVEL_AUTO) {
    for (int i = 0; i < nisa; ++i)
      for (int t = 0; t < 3; ++t, ++rot) {
        tp_exec e = {isas[i], NULL, NULL, thread_values[t], sched_values[rot % 3], 0, 0};
        if (keep(&e)) list[n++] = e;
      }
  } else if (level == TP_LEVEL_LAYOUTS) {
    for (int i = 0; i < nisa; ++i)
      for (int l = 0; l < nlc; ++l, ++rot) {
        tp_exec e = {isas[i], xattn_variant_name(rot % nv), lc[l].layout, thread_values[rot % 3],
                     sched_values[(rot / 3) % 3], lc[l].splits, lc[l].prefetch, lc[l].level};
        if (keep(&e)) list[n++] = e;
      }
  } else {
    for (int i = 0; i < nisa; ++i)
      for (int v = 0; v < nv; ++v)
        for (int l = 0; l < nlc; ++l)
          for (int ts = 0; ts < nts; ++ts) {
            if (v > 0 && (!strcmp(lc[l].layout, "decode") || !strcmp(lc[l].layout, "lanes")))
              break; /* the few-rows layouts have no variants */
            int k = level == TP_LEVEL_FULL ? ts : rot++;
            tp_exec e = {isas[i], xattn_variant_name(v), lc[l].layout, thread_values[k % 3],
                         sched_values[(k / 3) % 3], lc[l].splits, lc[l].prefetch, lc[l].level};
            if (keep(&e)) list[n++] = e;
            if (level != TP_LEVEL_FULL) break;
          }
  }
  *out = list;
  return n;
}

void tp_exec_describe(const tp_exec *e, char *buf, size_t len) {
  snprintf(buf, len, "isa=%s variant=%s layout=%s kv_splits=%d prefetch=%d prefetch_level=%d threads=%d schedule=%s",
           e->isa, e->variant ? e->variant : "auto", e->layout ? e->layout : "auto", e->kv_splits, e->prefetch,
           e->prefetch_level, e->threads, xattn_schedule_name(e->schedule));
}

void tp_exec_options(const tp_exec *e, xattn_options *o) {
  xattn_options_init(o);
  o->isa = e->isa;
  o->variant = e->variant;
  o->layout = e->layout;
  o->threads = e->threads;
  o->schedule = e->schedule;
  o->kv_splits = e->kv_splits;
  o->prefetch = e->prefetch;
  o->prefetch_level = e->prefetch_level;
}

const char *tp_compiled_variant(const char *want) {
  const int v = xattn_variant_nearest(want); /* the rule the config header's rows follow (variants.c) */
  return v >= 0 ? xattn_variant_name(v) : want;
}

tp_result tp_run_check(tproblem *tp, const tp_exec *e, xattn_status *status) {
  xattn_options o;
  tp_exec_options(e, &o);
  tp_reset_output(tp);
  *status = xattn_extend_attention(&tp->p, &o);
  if (*status != XATTN_OK) {
    tp_result r;
    memset(&r, 0, sizeof r);
    r.bad = -1;
    return r;
  }
  return tp_check(tp);
}

void tp_dump(const tproblem *tp) {
  static int dumps;
  const char *root = getenv("XATTN_TEST_DUMP");
  if (!root || !*root || dumps >= 20) return;
  char dir[512], err[1024];
  mkdir(root, 0777); /* may exist already */
  snprintf(dir, sizeof dir, "%s/%02d_%s_%s_%s", root, dumps++, tp->shape.name, xattn_mode_name(tp->mask.mode),
           xattn_dtype_name(tp->mask.dtype));
  if (xattn_case_save(dir, &tp->p, err, sizeof err) == XATTN_OK)
    printf("     dumped as case folder %s (xattn run %s --isa ... --variant ...)\n", dir, dir);
  else
    printf("     could not dump the case: %s\n", err);
}
