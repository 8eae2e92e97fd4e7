/* Unfused attention on OpenBLAS: what a user writes with a BLAS and no fused
 * kernel. Per (request, query head): gather K/V through req_to_token into
 * contiguous f32 buffers, then per block of query rows
 *   S = scale * Q K^T   (cblas_sgemm over the key range the block can see)
 *   S = cap, mask, softmax with sink
 *   O = S V             (cblas_sgemm)
 * Restricting each block's GEMM to its visible key range is what a careful
 * user does for a causal mask; it makes the baseline faster, not slower. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/baseline.h"

#include "xattn_bench/mask.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_BLOCK 128

const char *xb_blas_threading_name(xb_blas_threading how) {
  return how == XB_BLAS_GEMM ? "serial loop, multi-threaded OpenBLAS" : "OpenMP over (request, head), single-threaded OpenBLAS";
}


/* n contiguous elements of dtype t starting at base[off], as f32. The
 * conversion a user would write: memcpy for f32, a shift for bf16 (exact). */
static void row_to_f32(float *dst, const void *base, xattn_dtype t, int64_t off, int32_t n) {
  if (t == XATTN_F32) {
    memcpy(dst, (const float *)base + off, sizeof(float) * (size_t)n);
  } else if (t == XATTN_BF16) {
    const uint16_t *src = (const uint16_t *)base + off;
    for (int32_t d = 0; d < n; d++) {
      uint32_t bits = (uint32_t)src[d] << 16;
      memcpy(&dst[d], &bits, sizeof bits);
    }
  } else {
    for (int32_t d = 0; d < n; d++) dst[d] = xb_element_f32(base, t, off + d);
  }
}

typedef struct scratch {
  float *k, *v, *q, *o, *s;
} scratch;

/* Gathers key/value position j of request b (KV head kvh) into row j of k, v. */
static void gather_kv(const xattn_problem *p, int32_t b, int32_t kvh, int32_t nk, float *k, float *v) {
  const int32_t D = p->head_dim, DV = p->head_dim_v, P = p->prefix_lens[b];
  const int cross = p->mode == XATTN_MODE_CROSS;
  const int64_t start = p->extend_start ? p->extend_start[b] : 0;
  const int fp8 = p->cache_dtype == XATTN_E4M3FN || p->cache_dtype == XATTN_E5M2;
  const xattn_dtype ct = fp8 ? p->cache_dtype : p->dtype;
  for (int32_t j = 0; j < nk; j++) {
    if (cross || j < P) { /* through the library's cache addressing (slots or paged blocks) */
      row_to_f32(k + (int64_t)j * D, xattn_cache_row(p, b, j, kvh, 0), ct, 0, D);
      row_to_f32(v + (int64_t)j * DV, xattn_cache_row(p, b, j, kvh, 1), ct, 0, DV);
      if (fp8) /* the bench's fp8 problems have tensor scales only (no k_scales/v_scales) */
        for (int32_t d = 0; d < D || d < DV; d++) {
          if (d < D) k[(int64_t)j * D + d] *= p->k_scale;
          if (d < DV) v[(int64_t)j * DV + d] *= p->v_scale;
        }
      continue;
    }
    const int64_t row = start + (j - P);
    row_to_f32(k + (int64_t)j * D, p->k_ext.data, p->dtype, row * p->k_ext.token_stride + kvh * p->k_ext.head_stride, D);
    row_to_f32(v + (int64_t)j * DV, p->v_ext.data, p->dtype, row * p->v_ext.token_stride + kvh * p->v_ext.head_stride, DV);
  }
}

static void one_head(const xattn_problem *p, int32_t b, int32_t h, const scratch *sc) {
  const int32_t D = p->head_dim, DV = p->head_dim_v, E = p->extend_lens[b];
  const int32_t kvh = h / (p->heads_q / p->heads_kv);
  const int32_t nk = xb_key_count(p, b);
  const int64_t start = p->extend_start ? p->extend_start[b] : 0;
  if (E == 0) return;
  gather_kv(p, b, kvh, nk, sc->k, sc->v);
  for (int32_t i = 0; i < E; i++) {
    const int64_t qb = (start + i) * p->q.token_stride + (int64_t)h * p->q.head_stride;
    row_to_f32(sc->q + (int64_t)i * D, p->q.data, p->dtype, qb, D);
  }
  const float cap = p->logit_cap, sink = p->sinks ? p->sinks[h] : -INFINITY;
  for (int32_t i0 = 0; i0 < E; i0 += ROW_BLOCK) {
    const int32_t rows = E - i0 < ROW_BLOCK ? E - i0 : ROW_BLOCK;
    int32_t lo = nk, hi = 0;
    int32_t rlo[ROW_BLOCK], rhi[ROW_BLOCK];
    for (int32_t r = 0; r < rows; r++) {
      xb_visible_range(p, b, i0 + r, &rlo[r], &rhi[r]);
      if (rlo[r] < rhi[r]) {
        if (rlo[r] < lo) lo = rlo[r];
        if (rhi[r] > hi) hi = rhi[r];
      }
    }
    float *o = sc->o + (int64_t)i0 * DV;
    if (lo >= hi) { /* nobody in the block sees a key: zeros, never NaN */
      memset(o, 0, sizeof(float) * (size_t)rows * (size_t)DV);
      continue;
    }
    const int32_t n = hi - lo;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, D, p->scale, sc->q + (int64_t)i0 * D, D,
                sc->k + (int64_t)lo * D, D, 0.0f, sc->s, n);
    for (int32_t r = 0; r < rows; r++) {
      float *s = sc->s + (int64_t)r * n;
      float m = sink;
      for (int32_t c = 0; c < n; c++) {
        const int32_t j = lo + c;
        if (j < rlo[r] || j >= rhi[r] || !xb_key_visible(p, b, i0 + r, j)) {
          s[c] = -INFINITY;
          continue;
        }
        if (cap > 0) s[c] = cap * tanhf(s[c] / cap);
        if (s[c] > m) m = s[c];
      }
      if (m == -INFINITY) { /* no visible key and no sink */
        memset(s, 0, sizeof(float) * (size_t)n);
        continue;
      }
      double denom = p->sinks ? exp((double)sink - m) : 0.0;
      for (int32_t c = 0; c < n; c++) {
        s[c] = s[c] == -INFINITY ? 0.0f : expf(s[c] - m);
        denom += s[c];
      }
      const float inv = denom > 0 ? (float)(1.0 / denom) : 0.0f;
      for (int32_t c = 0; c < n; c++) s[c] *= inv;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, DV, n, 1.0f, sc->s, n, sc->v + (int64_t)lo * DV, DV,
                0.0f, o, DV);
  }
  for (int32_t i = 0; i < E; i++) {
    const int64_t ob = (start + i) * p->o.token_stride + (int64_t)h * p->o.head_stride;
    for (int32_t d = 0; d < DV; d++) xb_element_store((void *)(uintptr_t)p->o.data, /* the output */ p->dtype, ob + d, sc->o[(int64_t)i * DV + d]);
  }
}

/* f32 elements of one thread's scratch: the sum of scratch_alloc's five
 * buffers below (k, v, q, o, s); keep the two in step */
static double scratch_floats(int64_t max_nk, int64_t max_e, int32_t D, int32_t DV) {
  return (double)max_nk * (D + DV) + (double)max_e * (D + DV) + (double)ROW_BLOCK * max_nk;
}

double xb_blas_scratch_bytes(const xb_workload *w, int threads, xb_blas_threading how) {
  int64_t max_nk = 1, max_e = 1;
  for (int32_t b = 0; b < w->batch; b++) {
    const int64_t nk = w->mode == XATTN_MODE_CROSS ? (w->encoder_lens ? w->encoder_lens[b] : 0)
                                                   : (int64_t)w->prefix_lens[b] + w->extend_lens[b];
    if (nk > max_nk) max_nk = nk;
    if (w->extend_lens[b] > max_e) max_e = w->extend_lens[b];
  }
  const int sets = how == XB_BLAS_GEMM || threads < 1 ? 1 : threads;
  return sizeof(float) * scratch_floats(max_nk, max_e, w->head_dim, w->head_dim_v) * sets;
}

static int scratch_alloc(const xattn_problem *p, scratch *sc) {
  int64_t max_nk = 1, max_e = 1;
  for (int32_t b = 0; b < p->batch; b++) {
    if (xb_key_count(p, b) > max_nk) max_nk = xb_key_count(p, b);
    if (p->extend_lens[b] > max_e) max_e = p->extend_lens[b];
  }
  sc->k = malloc(sizeof(float) * (size_t)(max_nk * p->head_dim));
  sc->v = malloc(sizeof(float) * (size_t)(max_nk * p->head_dim_v));
  sc->q = malloc(sizeof(float) * (size_t)(max_e * p->head_dim));
  sc->o = malloc(sizeof(float) * (size_t)(max_e * p->head_dim_v));
  sc->s = malloc(sizeof(float) * (size_t)(ROW_BLOCK * max_nk));
  return sc->k && sc->v && sc->q && sc->o && sc->s ? 0 : -1;
}

static void scratch_free(scratch *sc) {
  free(sc->k); free(sc->v); free(sc->q); free(sc->o); free(sc->s);
}

int xb_blas_attention(xb_problem *pb, int threads, xb_blas_threading how, char *err, size_t errlen) {
  const xattn_problem *p = &pb->p;
  if (threads < 1) threads = 1;
  const int64_t items = (int64_t)p->batch * p->heads_q;
  int failed = 0;
  if (how == XB_BLAS_GEMM) {
    openblas_set_num_threads(threads);
    scratch sc;
    if (scratch_alloc(p, &sc) == 0) {
      for (int64_t it = 0; it < items; it++) one_head(p, (int32_t)(it / p->heads_q), (int32_t)(it % p->heads_q), &sc);
    } else {
      failed = 1;
    }
    scratch_free(&sc);
  } else {
    openblas_set_num_threads(1);
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
      scratch sc;
      if (scratch_alloc(p, &sc) != 0) failed = 1;
#pragma omp for schedule(dynamic, 1)
      for (int64_t it = 0; it < items; it++)
        if (!failed) one_head(p, (int32_t)(it / p->heads_q), (int32_t)(it % p->heads_q), &sc);
      scratch_free(&sc);
    }
  }
  if (failed) {
    snprintf(err, errlen, "blas baseline: out of memory for scratch buffers");
    return -1;
  }
  return 0;
}
