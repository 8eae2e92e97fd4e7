/* bf16 pair packing shared by the bf16-dot ISAs (avx512bf16, amx): both
 * products take their B operand as u32 lanes holding two bf16 values of
 * consecutive keys, (v[2j][c], v[2j+1][c]) -- the "VNNI" layout of vdpbf16ps
 * and of AMX tile B. Needs AVX-512F/BW (include after simd_avx512.h). */
#ifndef XATTN_ISA_BF16_PAIRS_H
#define XATTN_ISA_BF16_PAIRS_H

#include <stdint.h>

/* dst[c] = a[c] | b[c] << 16 for c < dv, 0 for dv <= c < dvp (a multiple of
 * 16); b NULL (odd key count) packs zeros into the high halves. 32 elements
 * of each row per step, interleaved by two word permutes (the lanes span
 * interleaves a span's V rows per group with this: half the instructions of
 * widening each half to dwords). */
static inline void pack_bf16_pair_row(uint32_t *dst, const uint16_t *a, const uint16_t *b, int dv, int dvp) {
  /* words 0..15 of x, 16..31 of y -> dwords (x[c], y[c]); hi: words 16..31 of x */
  const __m512i lo = _mm512_setr_epi32(0x00200000, 0x00210001, 0x00220002, 0x00230003, 0x00240004, 0x00250005,
                                       0x00260006, 0x00270007, 0x00280008, 0x00290009, 0x002a000a, 0x002b000b,
                                       0x002c000c, 0x002d000d, 0x002e000e, 0x002f000f);
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
  for (int c = 0; c < dvp; c += 32) {
    const __mmask32 k = c + 32 <= dv ? 0xffffffffu : c < dv ? (__mmask32)((1ull << (dv - c)) - 1) : 0;
    const __m512i x = _mm512_maskz_loadu_epi16(k, a + c);
    const __m512i y = b ? _mm512_maskz_loadu_epi16(k, b + c) : _mm512_setzero_si512();
    _mm512_store_si512(dst + c, _mm512_permutex2var_epi16(x, lo, y));
    if (c + 16 < dvp) _mm512_store_si512(dst + c + 16, _mm512_permutex2var_epi16(x, hi, y));
  }
}

#endif
