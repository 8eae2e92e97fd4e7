/* bf16 pair packing shared by the bf16-dot ISAs (avx512bf16, amx): both
 * products take their B operand as u32 lanes holding two bf16 values of
 * consecutive keys, (v[2j][c], v[2j+1][c]) -- the "VNNI" layout of vdpbf16ps
 * and of AMX tile B. Needs AVX-512F/BW/BF16 (include after simd_avx512.h). */
#ifndef XATTN_ISA_BF16_PAIRS_H
#define XATTN_ISA_BF16_PAIRS_H

#include <stdint.h>

/* 32 elements of a row from src (the first of the mask k's; zero past them)
 * as bf16: a bf16 row as it is; an fp8 row (kind e4m3fn / e5m2, raw codes,
 * unscaled) widened exactly, since bf16 holds every e4m3fn and e5m2 value
 * (3 and 2 mantissa bits, exponents inside bf16's normal range): through
 * f16 as v_load_widen does (e5m2 = the high byte of its f16; e4m3fn = value
 * / 256 in f16, so x 256 in f32), then to bf16 without rounding. e5m2's Inf
 * and NaN codes come through as Inf and NaN; e4m3fn's NaN codes (x111 1111,
 * which the bit move makes finite) are set to NaN. Callers apply the
 * scales to the scores (K) and to P (V). Shared by the lanes spans of amx
 * (lanes_amx.inc) and avx512bf16 (lanes_bf16.inc).
 * The decode layout's full tiles widen the same codes another way (two
 * vpermi2b byte tables, dec_fp8_bytes in decode/dots_bf16.inc: 5 ops per 64
 * K codes against ~11 per 32 here). Both stay: the tables need AVX512-VBMI,
 * which avx512bf16 does not imply (Cooper Lake), so this route would need a
 * second body picked at run time as dec_dot_usable picks the decode block;
 * and here a widened element serves a whole span's rows (16 to 256 per
 * group), where in the decode block it serves 4, so the per-element cost
 * matters far less (not measured on the lanes tiles). */
static inline __m512i bf16_widen32(const char *src, __mmask32 k, xattn_dtype kind) {
  if (kind == XATTN_BF16) return _mm512_maskz_loadu_epi16(k, src);
  const __m256i c = _mm256_maskz_loadu_epi8(k, src);
  __m512i h; /* f16 words */
  if (kind == XATTN_E5M2) h = _mm512_slli_epi16(_mm512_cvtepu8_epi16(c), 8);
  else h = _mm512_and_si512(_mm512_slli_epi16(_mm512_cvtepi8_epi16(c), 7), _mm512_set1_epi16((short)0xbfff));
  __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h)), hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
  if (kind == XATTN_E4M3FN) {
    lo = _mm512_mul_ps(lo, _mm512_set1_ps(256.0f));
    hi = _mm512_mul_ps(hi, _mm512_set1_ps(256.0f));
  }
  const __m512i w = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
  if (kind != XATTN_E4M3FN) return w;
  const __mmask32 nan = _mm256_mask_cmpeq_epi8_mask(k, _mm256_or_si256(c, _mm256_set1_epi8((char)0x80)), _mm256_set1_epi8(-1));
  return _mm512_mask_mov_epi16(w, nan, _mm512_set1_epi16(0x7fc0));
}

/* The mask of elements [c, c + 32) of a row of n. */
static inline __mmask32 bf16_mask32(int c, int n) {
  return c + 32 <= n ? 0xffffffffu : c < n ? (__mmask32)((1ull << (n - c)) - 1) : 0;
}

/* dst[c] = a[c] | b[c] << 16 for c < dv, 0 for dv <= c < dvp (a multiple of
 * 16), rows a and b of storage kinds ta, tb (bf16, or fp8 widened exactly
 * by bf16_widen32); b NULL (odd key count) packs zeros into the high halves.
 * 32 elements of each row per step, interleaved by two word permutes (half
 * the instructions of widening each half to dwords). */
static inline void pack_pair_row_kinds(uint32_t *dst, const char *a, xattn_dtype ta, const char *b, xattn_dtype tb,
                                       int dv, int dvp) {
  /* words 0..15 of x, 16..31 of y -> dwords (x[c], y[c]); hi: words 16..31 of x */
  const __m512i lo = _mm512_setr_epi32(0x00200000, 0x00210001, 0x00220002, 0x00230003, 0x00240004, 0x00250005,
                                       0x00260006, 0x00270007, 0x00280008, 0x00290009, 0x002a000a, 0x002b000b,
                                       0x002c000c, 0x002d000d, 0x002e000e, 0x002f000f);
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
  const int ea = ta == XATTN_BF16 ? 2 : 1, eb = tb == XATTN_BF16 ? 2 : 1;
  for (int c = 0; c < dvp; c += 32) {
    const __mmask32 k = bf16_mask32(c, dv);
    const __m512i x = bf16_widen32(a + (size_t)c * ea, k, ta);
    const __m512i y = b ? bf16_widen32(b + (size_t)c * eb, k, tb) : _mm512_setzero_si512();
    _mm512_store_si512(dst + c, _mm512_permutex2var_epi16(x, lo, y));
    if (c + 16 < dvp) _mm512_store_si512(dst + c + 16, _mm512_permutex2var_epi16(x, hi, y));
  }
}

/* pack_pair_row_kinds of two bf16 rows. */
static inline void pack_bf16_pair_row(uint32_t *dst, const uint16_t *a, const uint16_t *b, int dv, int dvp) {
  pack_pair_row_kinds(dst, (const char *)a, XATTN_BF16, (const char *)b, XATTN_BF16, dv, dvp);
}

#endif
