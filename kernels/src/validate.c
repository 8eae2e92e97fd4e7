/* Validation of an xattn_problem: every rule of docs/contract.md §1–4 that can be checked
 * before anything is computed. Runs before any kernel reads a tensor, so that a
 * bad call gets one line naming the field and the reason, never a read out of
 * bounds. Cost is O(B log B + sum of cache keys read), small next to the call. */
#include <math.h>
#include <stdlib.h>

#include "internal/cache.h"
#include "internal/error.h"
#include "internal/fp8.h"
#include "internal/validate.h"

#define XATTN_MAX_HEAD_DIM 1024

/* True iff the table is read: some request has prefix keys, or, in cross mode,
 * encoder keys. */
static int reads_cache_keys(const xattn_problem *p, int32_t b) {
  return p->mode == XATTN_MODE_CROSS ? p->encoder_lens[b] > 0 : p->prefix_lens[b] > 0;
}

/* A [rows, heads, dim] view is valid when strides are non-negative, no two
 * elements alias (token-major or head-major order), and the last element's
 * offset fits in int64. */
static xattn_status check_view(const char *name, int64_t rows, int64_t heads, int64_t dim,
                               int64_t ts, int64_t hs) {
  if (ts < 0) return xattn_fail(XATTN_ERR_STRIDE, "%s.token_stride: negative (%lld)", name, (long long)ts);
  if (hs < 0) return xattn_fail(XATTN_ERR_STRIDE, "%s.head_stride: negative (%lld)", name, (long long)hs);
  if (rows <= 0) return XATTN_OK;
  int64_t span_h, span_t, last;
  int token_major = 0, head_major = 0;
  if (!__builtin_mul_overflow(heads - 1, hs, &span_h) && !__builtin_add_overflow(span_h, dim, &span_h))
    token_major = (heads == 1 || hs >= dim) && (rows == 1 || ts >= span_h);
  if (!__builtin_mul_overflow(rows - 1, ts, &span_t) && !__builtin_add_overflow(span_t, dim, &span_t))
    head_major = (rows == 1 || ts >= dim) && (heads == 1 || hs >= span_t);
  if (!token_major && !head_major)
    return xattn_fail(XATTN_ERR_STRIDE,
                      "%s: strides (token %lld, head %lld) overlap for %lld heads of dim %lld",
                      name, (long long)ts, (long long)hs, (long long)heads, (long long)dim);
  if (__builtin_mul_overflow(rows - 1, ts, &span_t) || __builtin_mul_overflow(heads - 1, hs, &span_h) ||
      __builtin_add_overflow(span_t, span_h, &last) || __builtin_add_overflow(last, dim, &last))
    return xattn_fail(XATTN_ERR_STRIDE, "%s: extent overflows int64", name);
  return XATTN_OK;
}

static int cmp_rows(const void *a, const void *b) {
  const int64_t *x = a, *y = b; /* pairs (start, end) */
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Requests' row ranges [start, start+E) must lie in [0, T) and, because each
 * request writes its own output rows, must not overlap. */
static xattn_status check_rows(const xattn_problem *p) {
  int64_t next = 0;
  int64_t *ranges = NULL;
  if (p->extend_start) {
    ranges = malloc(sizeof(int64_t) * 2 * (size_t)(p->batch ? p->batch : 1));
    if (!ranges) return xattn_fail(XATTN_ERR_NOMEM, "validate: out of memory");
  }
  int n = 0;
  for (int32_t b = 0; b < p->batch; b++) {
    int64_t start = p->extend_start ? p->extend_start[b] : next;
    int64_t e = p->extend_lens[b];
    if (start < 0 || start + e > p->total_tokens) {
      free(ranges);
      return xattn_fail(XATTN_ERR_SHAPE, "%s[%d]: rows %lld..%lld outside total_tokens %lld",
                        p->extend_start ? "extend_start" : "extend_lens", b, (long long)start,
                        (long long)(start + e), (long long)p->total_tokens);
    }
    next = start + e;
    if (ranges && e > 0) { ranges[2 * n] = start; ranges[2 * n + 1] = start + e; n++; }
  }
  if (ranges) {
    qsort(ranges, (size_t)n, 2 * sizeof(int64_t), cmp_rows);
    for (int i = 1; i < n; i++)
      if (ranges[2 * i] < ranges[2 * i - 1]) {
        long long row = (long long)ranges[2 * i];
        free(ranges);
        return xattn_fail(XATTN_ERR_SHAPE, "extend_start: requests' rows overlap at row %lld", row);
      }
    free(ranges);
  }
  return XATTN_OK;
}

/* Every slot (or block) the call will read must index the cache. */
static xattn_status check_token_table(const xattn_problem *p) {
  const int64_t page = xattn_page(p);
  const char *what = page > 1 ? "block" : "slot";
  for (int32_t b = 0; b < p->batch; b++) {
    if (!reads_cache_keys(p, b)) continue;
    int64_t r = p->req_index[b];
    if (r < 0 || r >= p->max_reqs)
      return xattn_fail(XATTN_ERR_INDEX, "req_index[%d]: %lld outside 0..%lld", b, (long long)r,
                        (long long)p->max_reqs - 1);
    int64_t keys = p->mode == XATTN_MODE_CROSS ? p->encoder_lens[b] : p->prefix_lens[b];
    int64_t first = xattn_table_col(p, b, 0) / page, last = xattn_table_col(p, b, keys - 1) / page;
    for (int64_t e = first; e <= last; e++) {
      int64_t entry = xattn_table_entry(p, b, e);
      if (entry < 0 || entry >= p->cache_slots)
        return xattn_fail(XATTN_ERR_INDEX, "req_to_token[%lld][%lld]: %s %lld outside 0..%lld",
                          (long long)r, (long long)e, what, (long long)entry, (long long)p->cache_slots - 1);
    }
    if (xattn_is_fp8(p->cache_dtype) && (p->k_scales || p->v_scales)) /* the scales the call reads */
      for (int64_t j = 0; j < keys; j++)
        for (int h = 0; h < p->heads_kv; h++) {
          const int64_t t = xattn_cache_token(p, b, j);
          for (int v = 0; v < 2; v++) {
            const float *per = v ? p->v_scales : p->k_scales;
            if (per && !isfinite(per[t * p->heads_kv + h]))
              return xattn_fail(XATTN_ERR_SHAPE, "%s[%lld]: not finite (token %lld, head %d)", v ? "v_scales" : "k_scales",
                                (long long)(t * p->heads_kv + h), (long long)t, h);
          }
        }
  }
  return XATTN_OK;
}

/* A paged cache tensor: blocks x [page, heads, dim] with the in-block strides
 * of t and block stride bs; blocks must not overlap each other. */
static xattn_status check_paged_view(const char *name, const xattn_problem *p, int v, int64_t dim) {
  const xattn_tensor *t = v ? &p->v_cache : &p->k_cache;
  const int64_t page = xattn_page(p), bs = xattn_block_stride(p, v), blocks = p->cache_slots;
  xattn_status s = check_view(name, page, p->heads_kv, dim, t->token_stride, t->head_stride);
  if (s || blocks <= 0) return s;
  /* check_view proved the block's extent fits in int64 */
  const int64_t extent = (page - 1) * t->token_stride + (p->heads_kv - 1) * t->head_stride + dim;
  int64_t last;
  if (blocks > 1 && bs < extent)
    return xattn_fail(XATTN_ERR_STRIDE, "%s: block stride %lld is less than a block's extent %lld (blocks overlap)",
                      name, (long long)bs, (long long)extent);
  if (__builtin_mul_overflow(blocks - 1, bs, &last) || __builtin_add_overflow(last, extent, &last))
    return xattn_fail(XATTN_ERR_STRIDE, "%s: extent overflows int64", name);
  return XATTN_OK;
}

static int is_slot_table(const xattn_problem *p) {
  return xattn_page(p) == 1 && p->cache_layout == XATTN_CACHE_TOKEN_MAJOR && p->k_cache_block_stride <= 0 &&
         p->v_cache_block_stride <= 0;
}

/* Everything a plan fixes: enums, counts, dims, score parameters, the cache
 * dtype, lengths and row ranges. Reads no tensor, table or mask. */
xattn_status xattn_validate_shape(const xattn_problem *p) {
  xattn_status s;
  xattn_clear_error();
  if (!p) return xattn_fail(XATTN_ERR_NULL, "problem: NULL");
  if (p->batch < 0) return xattn_fail(XATTN_ERR_SHAPE, "batch: negative (%d)", p->batch);
  if (p->dtype == XATTN_E4M3FN || p->dtype == XATTN_E5M2)
    return xattn_fail(XATTN_ERR_DTYPE, "dtype: %s is a KV-cache format (cache_dtype); q, k_ext, v_ext and o are f32, bf16 or f16",
                      xattn_dtype_name(p->dtype));
  if ((unsigned)p->dtype > XATTN_F16) return xattn_fail(XATTN_ERR_DTYPE, "dtype: unknown value %d", (int)p->dtype);
  if (p->cache_dtype != XATTN_DTYPE_SAME && p->cache_dtype != p->dtype && !xattn_is_fp8(p->cache_dtype))
    return xattn_fail(XATTN_ERR_DTYPE, "cache_dtype: %s with dtype %s (want same, %s, e4m3fn or e5m2)",
                      xattn_dtype_name(p->cache_dtype), xattn_dtype_name(p->dtype), xattn_dtype_name(p->dtype));
  if ((unsigned)p->mode > XATTN_MODE_TREE) return xattn_fail(XATTN_ERR_MODE, "mode: unknown value %d", (int)p->mode);
  if ((unsigned)p->align > XATTN_ALIGN_TOP_LEFT) return xattn_fail(XATTN_ERR_MODE, "align: unknown value %d", (int)p->align);
  if (p->align == XATTN_ALIGN_TOP_LEFT && p->mode != XATTN_MODE_CAUSAL)
    return xattn_fail(XATTN_ERR_MODE, "align: top_left applies to causal mode only, not %s", xattn_mode_name(p->mode));
  if (p->heads_q < 1) return xattn_fail(XATTN_ERR_SHAPE, "heads_q: must be >= 1 (got %d)", p->heads_q);
  if (p->heads_kv < 1) return xattn_fail(XATTN_ERR_SHAPE, "heads_kv: must be >= 1 (got %d)", p->heads_kv);
  if (p->heads_q % p->heads_kv)
    return xattn_fail(XATTN_ERR_SHAPE, "heads_q: %d is not a multiple of heads_kv %d", p->heads_q, p->heads_kv);
  if (p->head_dim < 1 || p->head_dim > XATTN_MAX_HEAD_DIM)
    return xattn_fail(XATTN_ERR_SHAPE, "head_dim: %d outside 1..%d", p->head_dim, XATTN_MAX_HEAD_DIM);
  if (p->head_dim_v < 1 || p->head_dim_v > XATTN_MAX_HEAD_DIM)
    return xattn_fail(XATTN_ERR_SHAPE, "head_dim_v: %d outside 1..%d", p->head_dim_v, XATTN_MAX_HEAD_DIM);
  if (p->window_left < -1) return xattn_fail(XATTN_ERR_MODE, "window_left: %d (use -1 for unbounded)", p->window_left);
  if (p->window_right < -1) return xattn_fail(XATTN_ERR_MODE, "window_right: %d (use -1 for unbounded)", p->window_right);
  if (!isfinite(p->scale)) return xattn_fail(XATTN_ERR_SHAPE, "scale: not finite");
  if (!(p->logit_cap >= 0.0f) || !isfinite(p->logit_cap))
    return xattn_fail(XATTN_ERR_SHAPE, "logit_cap: must be finite and >= 0 (0 = off)");
  if (p->total_tokens < 0) return xattn_fail(XATTN_ERR_SHAPE, "total_tokens: negative (%lld)", (long long)p->total_tokens);
  if (p->batch == 0) return XATTN_OK;

  if (!p->prefix_lens) return xattn_fail(XATTN_ERR_NULL, "prefix_lens: NULL");
  if (!p->extend_lens) return xattn_fail(XATTN_ERR_NULL, "extend_lens: NULL");
  if (p->mode == XATTN_MODE_CROSS && !p->encoder_lens)
    return xattn_fail(XATTN_ERR_NULL, "encoder_lens: NULL (required in cross mode)");
  for (int32_t b = 0; b < p->batch; b++) {
    if (p->prefix_lens[b] < 0) return xattn_fail(XATTN_ERR_SHAPE, "prefix_lens[%d]: negative length %d", b, p->prefix_lens[b]);
    if (p->extend_lens[b] < 0) return xattn_fail(XATTN_ERR_SHAPE, "extend_lens[%d]: negative length %d", b, p->extend_lens[b]);
    if (p->mode == XATTN_MODE_CROSS && p->encoder_lens[b] < 0)
      return xattn_fail(XATTN_ERR_SHAPE, "encoder_lens[%d]: negative length %d", b, p->encoder_lens[b]);
  }
  if ((s = check_rows(p)) != XATTN_OK) return s;
  return XATTN_OK;
}

/* What a plan does not fix: the tensors and their strides, the cache's
 * storage (page size, layout, block strides, fp8 scales), the token table and
 * its entries, req_index, sinks, the tree mask. Expects a valid shape and
 * allocates nothing (a plan runs it on every call). check_output = 0 for the
 * reference, which writes its own dense array. */
xattn_status xattn_validate_data(const xattn_problem *p, int check_output) {
  xattn_status s;
  if (xattn_is_fp8(p->cache_dtype) && (!isfinite(p->k_scale) || !isfinite(p->v_scale)))
    return xattn_fail(XATTN_ERR_SHAPE, "%s: not finite", isfinite(p->k_scale) ? "v_scale" : "k_scale");
  if ((unsigned)p->req_to_token_type > XATTN_I64)
    return xattn_fail(XATTN_ERR_DTYPE, "req_to_token_type: unknown value %d", (int)p->req_to_token_type);
  if (p->cache_slots < 0) return xattn_fail(XATTN_ERR_SHAPE, "cache_slots: negative (%lld)", (long long)p->cache_slots);
  if (p->max_reqs < 0 || p->max_ctx < 0)
    return xattn_fail(XATTN_ERR_SHAPE, "%s: negative", p->max_reqs < 0 ? "max_reqs" : "max_ctx");
  if (p->page_size < 0) return xattn_fail(XATTN_ERR_SHAPE, "page_size: negative (%d)", p->page_size);
  if ((unsigned)p->cache_layout > XATTN_CACHE_HEAD_MAJOR)
    return xattn_fail(XATTN_ERR_MODE, "cache_layout: unknown value %d", (int)p->cache_layout);
  if (p->k_cache_block_stride < 0 || p->v_cache_block_stride < 0)
    return xattn_fail(XATTN_ERR_STRIDE, "%s: negative", p->k_cache_block_stride < 0 ? "k_cache_block_stride" : "v_cache_block_stride");
  if (p->batch == 0) return XATTN_OK;
  if (!p->req_index) return xattn_fail(XATTN_ERR_NULL, "req_index: NULL");

  int64_t max_e = 0, table_rows = 0;
  int needs_table = 0;
  for (int32_t b = 0; b < p->batch; b++) {
    int64_t ctx = p->mode == XATTN_MODE_CROSS ? p->encoder_lens[b]
                                              : (int64_t)p->prefix_lens[b] + p->extend_lens[b];
    if (p->req_start_col && p->req_start_col[b] < 0)
      return xattn_fail(XATTN_ERR_INDEX, "req_start_col[%d]: negative (%lld)", b, (long long)p->req_start_col[b]);
    if (p->req_start_col && p->req_start_col[b] > INT64_MAX / 2)
      return xattn_fail(XATTN_ERR_INDEX, "req_start_col[%d]: %lld too large", b, (long long)p->req_start_col[b]);
    /* table entries the request's keys span (SGLang's table also holds the extend tokens) */
    int64_t start = p->req_start_col ? p->req_start_col[b] : 0;
    int64_t entries = (start + ctx + xattn_page(p) - 1) / xattn_page(p);
    if (p->req_to_token && entries > p->max_ctx) {
      if (start == 0 && xattn_page(p) == 1)
        return xattn_fail(XATTN_ERR_SHAPE, "%s[%d]: %s %lld exceeds max_ctx %lld",
                          p->mode == XATTN_MODE_CROSS ? "encoder_lens" : "prefix_lens", b,
                          p->mode == XATTN_MODE_CROSS ? "encoder length" : "prefix + extend",
                          (long long)ctx, (long long)p->max_ctx);
      return xattn_fail(XATTN_ERR_SHAPE, "%s[%d]: %s %lld from column %lld needs %lld table entries of %d tokens, max_ctx is %lld",
                        p->mode == XATTN_MODE_CROSS ? "encoder_lens" : "prefix_lens", b,
                        p->mode == XATTN_MODE_CROSS ? "encoder length" : "prefix + extend", (long long)ctx,
                        (long long)start, (long long)entries, (int)xattn_page(p), (long long)p->max_ctx);
    }
    if (p->extend_lens[b] > max_e) max_e = p->extend_lens[b];
    needs_table |= reads_cache_keys(p, b);
    table_rows += p->extend_lens[b];
  }

  if (table_rows > 0) {
    if (!p->q.data) return xattn_fail(XATTN_ERR_NULL, "q: NULL");
    if (check_output && !p->o.data) return xattn_fail(XATTN_ERR_NULL, "o: NULL");
    if (p->mode != XATTN_MODE_CROSS && !p->k_ext.data) return xattn_fail(XATTN_ERR_NULL, "k_ext: NULL");
    if (p->mode != XATTN_MODE_CROSS && !p->v_ext.data) return xattn_fail(XATTN_ERR_NULL, "v_ext: NULL");
  }
  int64_t T = p->total_tokens;
  if ((s = check_view("q", T, p->heads_q, p->head_dim, p->q.token_stride, p->q.head_stride))) return s;
  if (check_output && (s = check_view("o", T, p->heads_q, p->head_dim_v, p->o.token_stride, p->o.head_stride))) return s;
  if (p->mode != XATTN_MODE_CROSS) {
    if ((s = check_view("k_ext", T, p->heads_kv, p->head_dim, p->k_ext.token_stride, p->k_ext.head_stride))) return s;
    if ((s = check_view("v_ext", T, p->heads_kv, p->head_dim_v, p->v_ext.token_stride, p->v_ext.head_stride))) return s;
  }
  if (needs_table) {
    if (!p->req_to_token) return xattn_fail(XATTN_ERR_NULL, "req_to_token: NULL");
    if (!p->k_cache.data) return xattn_fail(XATTN_ERR_NULL, "k_cache: NULL");
    if (!p->v_cache.data) return xattn_fail(XATTN_ERR_NULL, "v_cache: NULL");
    int64_t slots = p->cache_slots;
    if (is_slot_table(p)) {
      if ((s = check_view("k_cache", slots, p->heads_kv, p->head_dim, p->k_cache.token_stride, p->k_cache.head_stride))) return s;
      if ((s = check_view("v_cache", slots, p->heads_kv, p->head_dim_v, p->v_cache.token_stride, p->v_cache.head_stride))) return s;
    } else {
      if ((s = check_paged_view("k_cache", p, 0, p->head_dim))) return s;
      if ((s = check_paged_view("v_cache", p, 1, p->head_dim_v))) return s;
    }
    if ((s = check_token_table(p))) return s;
  }
  if (p->sinks)
    for (int32_t h = 0; h < p->heads_q; h++)
      if (!isfinite(p->sinks[h])) return xattn_fail(XATTN_ERR_SHAPE, "sinks[%d]: not finite", h);
  if (p->mode == XATTN_MODE_TREE && max_e > 0) {
    if (!p->tree_mask) return xattn_fail(XATTN_ERR_NULL, "tree_mask: NULL (required in tree mode)");
    if (p->tree_max_extend < max_e)
      return xattn_fail(XATTN_ERR_SHAPE, "tree_max_extend: %d is less than the longest extend %lld",
                        p->tree_max_extend, (long long)max_e);
  }
  return XATTN_OK;
}

xattn_status xattn_validate_inputs(const xattn_problem *p, int check_output) {
  xattn_status s = xattn_validate_shape(p);
  return s != XATTN_OK ? s : xattn_validate_data(p, check_output);
}

xattn_status xattn_validate(const xattn_problem *p) { return xattn_validate_inputs(p, 1); }
