/* bf16 pair packing shared by the bf16-dot ISAs (avx512bf16, amx): both
 * products take their B operand as u32 lanes holding two bf16 values of
 * consecutive keys, (v[2j][c], v[2j+1][c]) -- the "VNNI" layout of vdpbf16ps
 * and of AMX tile B. Needs AVX-512F/BW (include after simd_avx512.h). */
#ifndef XATTN_ISA_BF16_PAIRS_H
#define XATTN_ISA_BF16_PAIRS_H

#include <stdint.h>

/* dst[c] = a[c] | b[c] << 16 for c < dv, 0 for dv <= c < dvp (a multiple of
 * 16); b NULL (odd key count) packs zeros into the high halves. */
static inline void pack_bf16_pair_row(uint32_t *dst, const uint16_t *a, const uint16_t *b, int dv, int dvp) {
  for (int c = 0; c < dvp; c += 16) {
    const __mmask16 k = c < dv ? tail_mask(dv - c) : 0;
    const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, a + c));
    const __m512i hi = b ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, b + c)) : _mm512_setzero_si512();
    _mm512_store_si512(dst + c, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
  }
}

#endif
