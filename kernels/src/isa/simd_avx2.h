/* AVX2 + FMA vectors of 8 floats; F16C for f16 conversions. Masks are vectors
 * of all-ones/all-zeros lanes. */
#include "isa/exp2_poly.h"
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "internal/fp8.h"
#define VL 8
typedef __m256 vf;
typedef __m256 vmask;
#define V_ZERO() _mm256_setzero_ps()
#define V_LOAD(p) _mm256_load_ps((const float *)(p))
#define V_STORE(p, v) _mm256_store_ps((float *)(p), (v))
#define V_BCAST(p) _mm256_broadcast_ss((const float *)(p))
#define V_SET1(x) _mm256_set1_ps((float)(x))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_SUB(a, b) _mm256_sub_ps((a), (b))
#define V_MAX(a, b) _mm256_max_ps((a), (b))
static inline vmask v_mask_interval(int32_t kp, const int32_t *lo, const int32_t *hi) {
  const __m256i k = _mm256_set1_epi32(kp);
  const __m256i below = _mm256_cmpgt_epi32(_mm256_loadu_si256((const __m256i *)lo), k); /* lo > kp */
  const __m256i above = _mm256_cmpgt_epi32(k, _mm256_loadu_si256((const __m256i *)hi)); /* kp > hi */
  return _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_or_si256(below, above), _mm256_set1_epi32(-1)));
}
#define V_MASK_INTERVAL(kp, lo, hi) v_mask_interval((kp), (lo), (hi))
static inline vmask v_mask_and_bytes(vmask m, const uint8_t *bytes) {
  const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)bytes));
  const __m256i set = _mm256_cmpgt_epi32(b, _mm256_setzero_si256());
  return _mm256_and_ps(m, _mm256_castsi256_ps(set));
}
#define V_MASK_AND_BYTES(m, bytes) v_mask_and_bytes((m), (const uint8_t *)(bytes))
#define V_SELECT(m, a, b) _mm256_blendv_ps((b), (a), (m))
#define V_IS_NEG_INF(v) _mm256_cmp_ps((v), _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ)
/* sum of the lanes */
static inline float V_HSUM(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
/* Lane sums and lane maxima of several vectors at once, for the decode
 * block (decode/decode.inc): one shuffle tree instead of a horizontal
 * reduction per vector ending in a scalar. v_sum8: lane i = a[i]'s sum, 21
 * operations where 8 V_HSUMs take 48. */
static inline __m256 v_sum8(const __m256 *a) {
  __m256 t[4];
  for (int i = 0; i < 4; i++) /* per 128-bit half: x0+x2, y0+y2, x1+x3, y1+y3 of x = a[2i], y = a[2i+1] */
    t[i] = _mm256_add_ps(_mm256_unpacklo_ps(a[2 * i], a[2 * i + 1]), _mm256_unpackhi_ps(a[2 * i], a[2 * i + 1]));
  const __m256 u0 = _mm256_add_ps(_mm256_shuffle_ps(t[0], t[1], 0x44), _mm256_shuffle_ps(t[0], t[1], 0xee));
  const __m256 u1 = _mm256_add_ps(_mm256_shuffle_ps(t[2], t[3], 0x44), _mm256_shuffle_ps(t[2], t[3], 0xee));
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}
/* lane i = a[i]'s sum (v_sum4) or maximum (v_max4), i < 4. max_ps returns
 * its second operand where either is NaN: v_max4 wants NaN-free vectors. */
#define V_REDUCE4(OP, OP128)                                                          \
  const __m256 t0 = OP(_mm256_unpacklo_ps(a[0], a[1]), _mm256_unpackhi_ps(a[0], a[1])); \
  const __m256 t1 = OP(_mm256_unpacklo_ps(a[2], a[3]), _mm256_unpackhi_ps(a[2], a[3])); \
  const __m256 u = OP(_mm256_shuffle_ps(t0, t1, 0x44), _mm256_shuffle_ps(t0, t1, 0xee)); \
  return OP128(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1))
static inline __m128 v_sum4(const __m256 *a) { V_REDUCE4(_mm256_add_ps, _mm_add_ps); }
static inline __m128 v_max4(const __m256 *a) { V_REDUCE4(_mm256_max_ps, _mm_max_ps); }
#undef V_REDUCE4
#define V_HAVE_SUM8 1
#define V_HAVE_MAX4 1

/* 2^x as in simd_avx512.h; 2^n built in the exponent field. x is clamped to
 * -127, where the biased exponent is 0 and the result exactly 0. */
static inline vf V_EXP2(vf x) {
  x = _mm256_max_ps(_mm256_set1_ps(-127.0f), x); /* x second: a NaN stays NaN */
  x = _mm256_min_ps(_mm256_set1_ps(127.0f), x);
  const vf n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const vf f = _mm256_sub_ps(x, n);
  vf p = _mm256_set1_ps(XATTN_EXP2_C7);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(XATTN_EXP2_C6));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(XATTN_EXP2_C5));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(XATTN_EXP2_C4));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(XATTN_EXP2_C3));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(XATTN_EXP2_C2));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(XATTN_EXP2_C1));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(XATTN_EXP2_C0));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}
/* 2^x of 4 lanes (V_EXP2 on the low half) */
static inline __m128 v_exp2_4(__m128 x) { return _mm256_castps256_ps128(V_EXP2(_mm256_zextps128_ps256(x))); }

static inline vf v_tanh(vf x) {
  const vf sign = _mm256_set1_ps(-0.0f);
  const vf ax = _mm256_andnot_ps(sign, x);
  const vf e = V_EXP2(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f * 1.4426950408889634f)));
  const vf t = _mm256_div_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), e), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  return _mm256_or_ps(t, _mm256_and_ps(x, sign));
}

static inline float V_HMAX(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* 8 elements of storage type dt at src (unaligned) widened to f32, as
 * simd_avx512.h's v_load_widen (the same bit moves, F16C's conversion; e4m3fn
 * as value / 256, NaN codes not set apart). */
static inline vf v_load_widen(const void *src, xattn_dtype dt) {
  if (dt == XATTN_F32) return _mm256_loadu_ps((const float *)src);
  if (dt == XATTN_BF16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)src)), 16));
  if (dt == XATTN_F16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)src));
  const __m128i b = _mm_loadl_epi64((const __m128i *)src);
  if (dt == XATTN_E5M2) return _mm256_cvtph_ps(_mm_unpacklo_epi8(_mm_setzero_si128(), b)); /* code to the high byte */
  const __m128i w = _mm_slli_epi16(_mm_cvtepi8_epi16(b), 7);
  return _mm256_cvtph_ps(_mm_and_si128(w, _mm_set1_epi16((short)0xbfff)));
}

/* Whether any of the first n e4m3fn codes of any of the nrows rows is a NaN
 * code (low 7 bits set): simd_avx512.h's running minimum of ~code & 0x7f
 * (0 where a NaN code was seen), 32 codes a step, the last n % 32 codes of
 * each row by xattn_e4m3fn_has_nan. */
static inline int v_e4m3fn_rows_have_nan(const char *const *rows, int nrows, int n) {
  const __m256i low7 = _mm256_set1_epi8(0x7f);
  __m256i m = low7;
  int tail = 0;
  for (int r = 0; r < nrows; r++) {
    const char *s = rows[r];
    int e = 0;
    for (; e + 32 <= n; e += 32) m = _mm256_min_epu8(m, _mm256_andnot_si256(_mm256_loadu_si256((const __m256i *)(s + e)), low7));
    if (e < n) tail |= xattn_e4m3fn_has_nan((const uint8_t *)s + e, n - e);
  }
  return tail || _mm256_movemask_epi8(_mm256_cmpeq_epi8(m, _mm256_setzero_si256())) != 0;
}

static inline __m256i tail_mask8(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline void cvt_to_f32(float *dst, const void *src, int n, xattn_dtype dt, float mul) {
  const vf m = _mm256_set1_ps(mul);
  int i = 0;
  if (dt == XATTN_F32) {
    const float *s = (const float *)src;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_loadu_ps(s + i), m));
    if (i < n) {
      const __m256i k = tail_mask8(n - i);
      _mm256_maskstore_ps(dst + i, k, _mm256_mul_ps(_mm256_maskload_ps(s + i, k), m));
    }
    return;
  }
  const uint16_t *s = (const uint16_t *)src;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128((const __m128i *)(s + i));
    const vf x = dt == XATTN_BF16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
                                  : _mm256_cvtph_ps(h);
    _mm256_storeu_ps(dst + i, _mm256_mul_ps(x, m));
  }
  for (; i < n; i++) dst[i] = (dt == XATTN_BF16 ? xattn_bf16_to_f32(s[i]) : xattn_f16_to_f32(s[i])) * mul;
}

static inline void cvt_from_f32(void *dst, const float *src, int n, xattn_dtype dt, float mul) {
  const vf m = _mm256_set1_ps(mul);
  int i = 0;
  if (dt == XATTN_F32) {
    float *d = (float *)dst;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_mul_ps(_mm256_loadu_ps(src + i), m));
    for (; i < n; i++) d[i] = src[i] * mul;
    return;
  }
  uint16_t *d = (uint16_t *)dst;
  if (dt == XATTN_F16) {
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128((__m128i *)(d + i),
                       _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(src + i), m), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) d[i] = xattn_f32_to_f16(src[i] * mul);
    return;
  }
  for (; i < n; i++) d[i] = xattn_f32_to_bf16(src[i] * mul);
}
