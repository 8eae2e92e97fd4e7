/* fp8 KV caches: the decode tables and the per-token scales, shared by the
 * reference-free parts of the library (validation, every ISA's load path). */
#ifndef XATTN_INTERNAL_FP8_H
#define XATTN_INTERNAL_FP8_H

#include <stdint.h>
#include <string.h>
#include "xattn/xattn.h"

/* [0]: e4m3fn, [1]: e5m2; code -> exact float (dtype.c fills them at load). */
extern float xattn_fp8_tables[2][256];

/* [0]: e4m3fn, [1]: e5m2; [0]: low byte, [1]: high byte of the bf16 of the
 * positive code c < 128 (exact: both formats are bf16 values, NaN a quiet
 * NaN); a code's sign is its bit 7 and the bf16's bit 15 (dtype.c fills
 * them with xattn_fp8_tables). Byte tables for vpermi2b (decode/dots_bf16.inc). */
extern uint8_t xattn_fp8_bf16_bytes[2][2][128];

static inline int xattn_is_fp8(xattn_dtype t) { return t == XATTN_E4M3FN || t == XATTN_E5M2; }

static inline const float *xattn_fp8_table(xattn_dtype t) { return xattn_fp8_tables[t == XATTN_E5M2]; }

/* Whether any of the n e4m3fn codes at src is a NaN code (x111 1111), eight
 * bytes at a time: a byte's low 7 bits all set carry into its top bit, no
 * other byte does. The bit-move widenings (simd_*.h v_load_widen) give such a
 * code a finite value, so their callers screen rows with this first. */
static inline int xattn_e4m3fn_has_nan(const uint8_t *src, int n) {
  uint64_t hit = 0;
  int e = 0;
  for (; e + 8 <= n; e += 8) {
    uint64_t w;
    memcpy(&w, src + e, 8);
    hit |= ((w & 0x7f7f7f7f7f7f7f7full) + 0x0101010101010101ull) & 0x8080808080808080ull;
  }
  for (; e < n; e++) hit |= (src[e] & 0x7f) == 0x7f;
  return hit != 0;
}

/* Scale of cache token `token`, KV head h, of K (v = 0) or V (v = 1). */
static inline float xattn_fp8_scale(const xattn_problem *p, int v, int64_t token, int h) {
  const float *per = v ? p->v_scales : p->k_scales;
  const float s = v ? p->v_scale : p->k_scale;
  return per ? s * per[token * p->heads_kv + h] : s;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define XATTN_FP8_GATHER 1
/* 16 codes (the first n) through the table with one gather, times scale. */
static inline __m512 xattn_fp8_gather16(const uint8_t *src, int n, const float *table, float scale, __mmask16 *k) {
  *k = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
  const __m512i idx = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(*k, src));
  return _mm512_mul_ps(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), *k, idx, table, 4), _mm512_set1_ps(scale));
}
#endif

/* dst[i] = table[src[i]] * scale for n codes (one rounding, in f32). */
static inline void xattn_fp8_decode_f32(float *dst, const uint8_t *src, int n, const float *table, float scale) {
  int i = 0;
#ifdef XATTN_FP8_GATHER
  for (; i < n; i += 16) {
    __mmask16 k;
    const __m512 v = xattn_fp8_gather16(src + i, n - i, table, scale, &k);
    _mm512_mask_storeu_ps(dst + i, k, v);
  }
#endif
  for (; i < n; i++) dst[i] = table[src[i]] * scale;
}

/* dst[i] = bf16(table[src[i]] * scale), round to nearest even, inline (the
 * bf16-dot ISAs' staging; a call per element to xattn_f32_to_bf16 made fp8
 * decode slower than reading twice the bytes of a bf16 cache). */
static inline void xattn_fp8_decode_bf16(uint16_t *dst, const uint8_t *src, int n, const float *table, float scale) {
  int i = 0;
#ifdef XATTN_FP8_GATHER
  for (; i < n; i += 16) { /* the same rounding, 16 lanes at a time */
    __mmask16 k;
    const __m512i u = _mm512_castps_si512(xattn_fp8_gather16(src + i, n - i, table, scale, &k));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    _mm256_mask_storeu_epi16(dst + i, k, _mm512_cvtepi32_epi16(r));
  }
#endif
  for (; i < n; i++) {
    union { float f; uint32_t u; } x = {table[src[i]] * scale};
    dst[i] = (uint16_t)((x.u + 0x7fffu + ((x.u >> 16) & 1u)) >> 16);
  }
}

#endif
