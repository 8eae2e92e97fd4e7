/* Where a prefix (or encoder) key lives in the KV cache: the token table's
 * entry for it and its element offset in k_cache / v_cache, for the slot table
 * (page_size 1) and paged block tables in both layouts. The ONE definition of
 * cache addressing: validation, the fp64 reference and every kernel path call
 * these, so a new layout is added here and nowhere else. */
#ifndef XATTN_INTERNAL_CACHE_H
#define XATTN_INTERNAL_CACHE_H

#include <stdint.h>
#include "xattn/xattn.h"

/* What k_cache / v_cache hold: dtype, or an fp8 format. */
static inline xattn_dtype xattn_cache_dtype(const xattn_problem *p) {
  return p->cache_dtype == XATTN_E4M3FN || p->cache_dtype == XATTN_E5M2 ? p->cache_dtype : p->dtype;
}

/* Tokens per table entry (1 for a slot table). */
static inline int64_t xattn_page(const xattn_problem *p) { return p->page_size > 1 ? p->page_size : 1; }

/* Column of request b's table row that holds key position j, in tokens. */
static inline int64_t xattn_table_col(const xattn_problem *p, int b, int64_t j) {
  return (p->req_start_col ? p->req_start_col[b] : 0) + j;
}

/* Entry `e` (a column in entries, not tokens) of request b's table row. */
static inline int64_t xattn_table_entry(const xattn_problem *p, int b, int64_t e) {
  const int64_t at = p->req_index[b] * p->max_ctx + e;
  if (p->req_to_token_type == XATTN_I64) return ((const int64_t *)p->req_to_token)[at];
  return ((const int32_t *)p->req_to_token)[at];
}

/* Elements between consecutive blocks of cache tensor t (v: 0 for K, 1 for V). */
static inline int64_t xattn_block_stride(const xattn_problem *p, int v) {
  const int64_t given = v ? p->v_cache_block_stride : p->k_cache_block_stride;
  if (given > 0) return given;
  const xattn_tensor *t = v ? &p->v_cache : &p->k_cache;
  if (p->cache_layout == XATTN_CACHE_HEAD_MAJOR) return (int64_t)p->heads_kv * t->head_stride;
  return xattn_page(p) * t->token_stride;
}

/* Element offset of (key j of request b, KV head kvh, element 0) in k_cache
 * (v = 0) or v_cache (v = 1). With page_size 1 and the token-major layout this
 * is slot * token_stride + kvh * head_stride, as it always was. */
static inline int64_t xattn_cache_offset(const xattn_problem *p, int b, int64_t j, int kvh, int v) {
  const xattn_tensor *t = v ? &p->v_cache : &p->k_cache;
  const int64_t col = xattn_table_col(p, b, j), page = xattn_page(p);
  if (page == 1) /* no division on the slot-table path */
    return xattn_table_entry(p, b, col) * xattn_block_stride(p, v) + (int64_t)kvh * t->head_stride;
  const int64_t block = xattn_table_entry(p, b, col / page), in_page = col % page;
  return block * xattn_block_stride(p, v) + in_page * t->token_stride + (int64_t)kvh * t->head_stride;
}

/* Flat token index (block * page_size + token in page) of key j of request b:
 * the row of per-token arrays that follow the cache (fp8 scales). */
static inline int64_t xattn_cache_token(const xattn_problem *p, int b, int64_t j) {
  const int64_t col = xattn_table_col(p, b, j), page = xattn_page(p);
  if (page == 1) return xattn_table_entry(p, b, col); /* no division on the slot-table path (fp8 scales per key) */
  return xattn_table_entry(p, b, col / page) * page + col % page;
}

#endif
