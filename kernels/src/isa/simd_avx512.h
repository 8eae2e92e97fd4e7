/* AVX-512F/BW/VL vectors of 16 floats (this TU is compiled with those flags). */
#include "isa/exp2_poly.h"
#include <immintrin.h>
#include <math.h>
#include <string.h>
#define VL 16
typedef __m512 vf;
typedef __mmask16 vmask;
#define V_ZERO() _mm512_setzero_ps()
#define V_LOAD(p) _mm512_load_ps((const float *)(p))
#define V_STORE(p, v) _mm512_store_ps((float *)(p), (v))
#define V_BCAST(p) _mm512_set1_ps(*(const float *)(p))
#define V_SET1(x) _mm512_set1_ps((float)(x))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#define V_ADD(a, b) _mm512_add_ps((a), (b))
#define V_SUB(a, b) _mm512_sub_ps((a), (b))
#define V_MAX(a, b) _mm512_max_ps((a), (b))
#define V_MASK_INTERVAL(kp, lo, hi)                                                         \
  _mm512_kand(_mm512_cmple_epi32_mask(_mm512_loadu_si512((const void *)(lo)), _mm512_set1_epi32(kp)), \
              _mm512_cmpge_epi32_mask(_mm512_loadu_si512((const void *)(hi)), _mm512_set1_epi32(kp)))
#define V_MASK_AND_BYTES(m, bytes) \
  _mm512_kand((m), _mm_test_epi8_mask(_mm_loadu_si128((const __m128i *)(bytes)), _mm_set1_epi8(-1)))
#define V_SELECT(m, a, b) _mm512_mask_blend_ps((m), (b), (a))
#define V_IS_NEG_INF(v) _mm512_cmp_ps_mask((v), _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ)
#define V_HSUM(v) _mm512_reduce_add_ps(v) /* sum of the lanes */

/* 2^x: x = n + f, |f| <= 1/2, degree-7 Taylor of e^(f ln2) (rel. err < 1e-8
 * before rounding), scalef applies 2^n and underflows cleanly to 0 for x -> -inf.
 * The clamp keeps x second: max_ps returns its second operand when either is
 * NaN, so a NaN score stays NaN (docs: non-finite inputs) instead of becoming 0. */
static inline vf V_EXP2(vf x) {
  x = _mm512_max_ps(_mm512_set1_ps(XATTN_EXP2_MIN_INPUT), x);
  const vf n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const vf f = _mm512_sub_ps(x, n);
  vf p = _mm512_set1_ps(XATTN_EXP2_C7);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C6));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C5));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C4));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C3));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C2));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C1));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C0));
  return _mm512_scalef_ps(p, n);
}

/* tanh(x) = sign(x) (1 - e^-2|x|) / (1 + e^-2|x|); absolute error ~1e-7, which
 * the soft cap multiplies by cap: well inside f32 tolerance for caps <= 100. */
static inline vf v_tanh(vf x) {
  const vf ax = _mm512_abs_ps(x);
  const vf e = V_EXP2(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f * 1.4426950408889634f)));
  const vf t = _mm512_div_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), e), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(t),
      _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u))));
}

/* Largest lane (callers keep NaN out: V_MAX(x, m) drops a NaN x). */
#define V_HMAX(v) _mm512_reduce_max_ps(v)

/* 16 elements of storage type dt at src (unaligned) widened to f32, with as
 * few vector ops as the formats allow (the decode path is bound by them once
 * the cache is fp8): f32 as is; bf16 (the high half of an f32) and f16 exactly;
 * fp8 through f16, which holds every fp8 value exactly (subnormals included),
 * unscaled:
 *  - e5m2 is the high byte of the f16 of the same value: one byte shuffle
 *    puts each code into the high byte of its word (low byte zero);
 *  - e4m3fn as value / 256: sign-extended to 16 bits and shifted left by 7,
 *    the sign lands in bits 15 and 14 and exponent and mantissa in 13..7;
 *    clearing bit 14 leaves the f16 whose exponent field is e4m3fn's (bias 7
 *    read as bias 15: x 2^-8), normals and subnormals alike (both formats
 *    have an implicit 0 below exponent field 1). NaN codes (x111 1111) are
 *    NOT set apart (they become 480 / 256): callers fold the 256 into their
 *    scale and route rows holding those codes elsewhere (v_e4m3fn_rows_have_nan). */
static inline vf v_load_widen(const void *src, xattn_dtype dt) {
  if (dt == XATTN_F32) return _mm512_loadu_ps(src);
  if (dt == XATTN_BF16) { /* word i into the high half of lane i, the low half zeroed: one vpermw where
                             vpmovzxwd + vpslld take a shuffle and a shift on an FMA's port (decode block
                             in L1, Ice Lake: 2-6 %; bench/README.md "Ice Lake") */
    const __m512i to_high = _mm512_set_epi16(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6, 5, 5, 4,
                                             4, 3, 3, 2, 2, 1, 1, 0, 0);
    return _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(
        _cvtu32_mask32(0xaaaaaaaau), to_high, _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)src))));
  }
  if (dt == XATTN_F16) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)src));
  if (dt == XATTN_E5M2) { /* both 128-bit lanes hold the 16 codes; lane L takes codes 8L..8L+7 */
    const __m256i hi_bytes = _mm256_setr_epi8(-128, 0, -128, 1, -128, 2, -128, 3, -128, 4, -128, 5, -128, 6, -128, 7,
                                              -128, 8, -128, 9, -128, 10, -128, 11, -128, 12, -128, 13, -128, 14, -128, 15);
    return _mm512_cvtph_ps(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)src)), hi_bytes));
  }
  const __m256i w = _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)src)), 7);
  return _mm512_cvtph_ps(_mm256_and_si256(w, _mm256_set1_epi16((short)0xbfff)));
}

/* Whether any of the first n e4m3fn codes of any of the nrows rows is a NaN
 * code (low 7 bits set). Per byte position, the running minimum of
 * ~code & 0x7f reaches 0 exactly where a NaN code was seen: two operations
 * per 64 codes and one test at the end. The earlier screen (a compare, a mask
 * move and an OR per 64 codes, a branch per row) cost an e4m3fn decode tile
 * 8-12 % of its time on the Ice Lake VM (bench/README.md "the e4m3fn NaN
 * screen"). Bytes past n are loaded as 0, which counts as no NaN. */
static inline int v_e4m3fn_rows_have_nan(const char *const *rows, int nrows, int n) {
  const __m512i low7 = _mm512_set1_epi8(0x7f);
  __m512i m0 = low7, m1 = low7; /* two chains: consecutive minima do not wait on one another */
  for (int r = 0; r < nrows; r++) {
    const char *s = rows[r];
    int e = 0;
    for (; e + 128 <= n; e += 128) {
      m0 = _mm512_min_epu8(m0, _mm512_andnot_si512(_mm512_loadu_si512(s + e), low7));
      m1 = _mm512_min_epu8(m1, _mm512_andnot_si512(_mm512_loadu_si512(s + e + 64), low7));
    }
    for (; e < n; e += 64) {
      const __mmask64 k = n - e >= 64 ? _cvtu64_mask64(~0ull) : _cvtu64_mask64((~0ull) >> (64 - (n - e)));
      m0 = _mm512_min_epu8(m0, _mm512_andnot_si512(_mm512_maskz_loadu_epi8(k, s + e), low7));
    }
  }
  const __m512i m = _mm512_min_epu8(m0, m1);
  return _mm512_testn_epi8_mask(m, m) != 0;
}

/* The lane sums of 16 vectors in one: lane 4r + k holds the sum of the lanes
 * of a[4k + r] (so with a[4 * key + row], lanes are row-major: row r's 4 keys
 * at 4r..4r+3). A tree of 128-bit, 64-bit and 32-bit halvings: 45 shuffles and
 * adds where 16 horizontal sums take ~130. The lane reductions here are
 * always_inline: in isa_amx.c, the largest ISA file, GCC 12 had kept v_sum16
 * out of line, and every decode block passed its 16 accumulators through
 * memory (f32 block 1.28-1.38x slower; bench/README.md "Ice Lake"). AVX2's
 * are inlined as they are (objdump); marking them too moved GCC's inlining
 * in isa_avx2.c's flash items, unmeasured, so they stay unmarked. */
#define V_HAVE_SUM16 1
static inline __attribute__((always_inline)) vf v_sum16(const vf a[16]) {
  vf b[8], c[4], d[2];
  for (int i = 0; i < 8; i++) /* 128-bit lanes 0,1: a[2i]; 2,3: a[2i+1] */
    b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  for (int m = 0; m < 4; m++) /* 128-bit lane L: a[4m + L] */
    c[m] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * m], b[2 * m + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(b[2 * m], b[2 * m + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  for (int i = 0; i < 2; i++) { /* per 128-bit lane: 2 floats of c[2i], 2 of c[2i+1] */
    const __m512d x = _mm512_castps_pd(c[2 * i]), y = _mm512_castps_pd(c[2 * i + 1]);
    d[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
  }
  return _mm512_add_ps(_mm512_shuffle_ps(d[0], d[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_ps(d[0], d[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

/* lane r = a[r]'s sum (v_sum4) or maximum (v_max4), r < 4: the 4 rows of a
 * full decode tile's softmax at once (decode.inc dec_full_softmax4). Two
 * 128-bit halvings leave 128-bit lane r with 4 partial results of a[r], two
 * in-lane swaps finish them, one permute gathers lane 0 of each: 14
 * operations where 4 horizontal reductions take ~32. max_ps returns its
 * second operand where either is NaN: v_max4 wants NaN-free vectors. */
#define V_REDUCE4(OP)                                                                                   \
  const __m512 t0 = OP(_mm512_shuffle_f32x4(a[0], a[1], 0x44), _mm512_shuffle_f32x4(a[0], a[1], 0xee)); \
  const __m512 t1 = OP(_mm512_shuffle_f32x4(a[2], a[3], 0x44), _mm512_shuffle_f32x4(a[2], a[3], 0xee)); \
  __m512 u = OP(_mm512_shuffle_f32x4(t0, t1, 0x88), _mm512_shuffle_f32x4(t0, t1, 0xdd));                \
  u = OP(u, _mm512_permute_ps(u, 0x4e));                                                                \
  u = OP(u, _mm512_permute_ps(u, 0xb1));                                                                \
  return _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), u))
static inline __attribute__((always_inline)) __m128 v_sum4(const __m512 *a) { V_REDUCE4(_mm512_add_ps); }
static inline __attribute__((always_inline)) __m128 v_max4(const __m512 *a) { V_REDUCE4(_mm512_max_ps); }
#undef V_REDUCE4
/* 2^x of 4 lanes (V_EXP2 on the low quarter) */
static inline __attribute__((always_inline)) __m128 v_exp2_4(__m128 x) { return _mm512_castps512_ps128(V_EXP2(_mm512_zextps128_ps512(x))); }
#define V_HAVE_MAX4 1

static inline __mmask16 tail_mask(int n) {
  return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

static inline vf load_f32_any(const void *src, int n, xattn_dtype dt) {
  const __mmask16 k = tail_mask(n);
  if (dt == XATTN_F32) return _mm512_maskz_loadu_ps(k, src);
  const __m256i h = _mm256_maskz_loadu_epi16(k, src);
  if (dt == XATTN_BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

static inline void cvt_to_f32(float *dst, const void *src, int n, xattn_dtype dt, float mul) {
  const size_t es = xattn_dtype_size(dt);
  const vf m = _mm512_set1_ps(mul);
  for (int i = 0; i < n; i += 16) {
    const int c = n - i < 16 ? n - i : 16;
    _mm512_mask_storeu_ps(dst + i, tail_mask(c), _mm512_mul_ps(load_f32_any((const char *)src + i * es, c, dt), m));
  }
}

/* f32 -> bf16 bits, round to nearest even; a NaN stays a (quiet) NaN: rounding
 * its payload could carry into the sign and give -0 (as xattn_f32_to_bf16). */
static inline __m256i f32_to_bf16_rne(vf x) {
  const __m512i b = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7fff)), lsb);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  const __m512i h = _mm512_mask_or_epi32(_mm512_srli_epi32(r, 16), nan, _mm512_srli_epi32(b, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(h);
}

static inline void cvt_from_f32(void *dst, const float *src, int n, xattn_dtype dt, float mul) {
  const vf m = _mm512_set1_ps(mul);
  for (int i = 0; i < n; i += 16) {
    const int c = n - i < 16 ? n - i : 16;
    const __mmask16 k = tail_mask(c);
    const vf x = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, src + i), m);
    if (dt == XATTN_F32) _mm512_mask_storeu_ps((float *)dst + i, k, x);
    else if (dt == XATTN_BF16) _mm256_mask_storeu_epi16((uint16_t *)dst + i, k, f32_to_bf16_rne(x));
    else _mm256_mask_storeu_epi16((uint16_t *)dst + i, k, _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}

/* cvt_from_f32 for an output row nobody reads soon (xattn_run.stream_out):
 * bf16 rows of whole 64-byte lines on a 64-byte boundary go out with
 * streaming stores, which write the lines without reading them from memory
 * first; any other row takes cvt_from_f32. The caller fences (_mm_sfence)
 * once its rows are written. */
static inline void cvt_from_f32_stream(void *dst, const float *src, int n, xattn_dtype dt, float mul) {
  if (dt != XATTN_BF16 || (n & 31) || ((uintptr_t)dst & 63)) {
    cvt_from_f32(dst, src, n, dt, mul);
    return;
  }
  const vf m = _mm512_set1_ps(mul);
  for (int i = 0; i < n; i += 32) {
    const __m256i a = f32_to_bf16_rne(_mm512_mul_ps(_mm512_loadu_ps(src + i), m));
    const __m256i b = f32_to_bf16_rne(_mm512_mul_ps(_mm512_loadu_ps(src + i + 16), m));
    _mm512_stream_si512((__m512i *)((uint16_t *)dst + i), _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1));
  }
}

/* out[t] = column t of the 16 x 16 matrix of 32-bit elements in rows r[]. */
#define XATTN_HAVE_TRANSPOSE16 1
static inline void transpose16(__m512i r[16]) {
  __m512i a[16], b[16];
  for (int i = 0; i < 8; i++) {
    a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++) { /* b[4i+k], lane L = column 4L+k of rows 4i..4i+3 */
    b[4 * i + 0] = _mm512_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
    b[4 * i + 1] = _mm512_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
    b[4 * i + 2] = _mm512_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
    b[4 * i + 3] = _mm512_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
  }
  for (int k = 0; k < 4; k++) { /* 4 x 4 transpose of 128-bit lanes */
    const __m512i c0 = _mm512_shuffle_i32x4(b[k], b[4 + k], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i c1 = _mm512_shuffle_i32x4(b[k], b[4 + k], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i c2 = _mm512_shuffle_i32x4(b[8 + k], b[12 + k], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i c3 = _mm512_shuffle_i32x4(b[8 + k], b[12 + k], _MM_SHUFFLE(3, 2, 3, 2));
    r[0 + k] = _mm512_shuffle_i32x4(c0, c2, _MM_SHUFFLE(2, 0, 2, 0));
    r[4 + k] = _mm512_shuffle_i32x4(c0, c2, _MM_SHUFFLE(3, 1, 3, 1));
    r[8 + k] = _mm512_shuffle_i32x4(c1, c3, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + k] = _mm512_shuffle_i32x4(c1, c3, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

/* dst[k][r] = rows[r][k] for r < RC (rows >= nrows are 0), k < n: 32-bit
 * elements, rows of `rows` are n apart, dst rows RC apart (64-byte aligned). */
static inline void transpose_rows(uint32_t *dst, int rc, const uint32_t *rows, int nrows, int n) {
  for (int r0 = 0; r0 < rc; r0 += 16) {
    for (int k0 = 0; k0 < n; k0 += 16) {
      const __mmask16 km = tail_mask(n - k0);
      __m512i r[16];
      for (int t = 0; t < 16; t++)
        r[t] = r0 + t < nrows ? _mm512_maskz_loadu_epi32(km, rows + (size_t)(r0 + t) * n + k0) : _mm512_setzero_si512();
      transpose16(r);
      for (int t = 0; t < 16 && k0 + t < n; t++) _mm512_store_si512(dst + (size_t)(k0 + t) * rc + r0, r[t]);
    }
  }
}
