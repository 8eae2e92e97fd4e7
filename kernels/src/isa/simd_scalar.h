/* The portable ISA's vectors. With GCC or Clang: 4 floats in the compilers'
 * generic vector extensions, which they lower to the baseline target's SIMD
 * (SSE2 on x86-64, NEON on arm64) or to plain scalar code, so nothing here is
 * specific to an instruction set (~3.4x the one-lane version on x86-64).
 * Other compilers (or -DXATTN_SCALAR_ONE_LANE): one-lane "vectors" of floats. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(XATTN_SCALAR_ONE_LANE)
#include "isa/exp2_poly.h"
#include <math.h>
#include <string.h>
#include "internal/fp8.h"
#define VL 4
typedef float vf __attribute__((vector_size(16), aligned(16)));
typedef int vmask __attribute__((vector_size(16), aligned(16)));
typedef unsigned vumask __attribute__((vector_size(16), aligned(16)));
static inline vf V_ZERO(void) { return (vf){0.0f, 0.0f, 0.0f, 0.0f}; }
static inline vf V_LOAD(const void *p) { vf r; memcpy(&r, p, sizeof r); return r; }
#define V_STORE(p, x) v_store((float *)(p), (x))
static inline void v_store(float *p, vf x) { memcpy(p, &x, sizeof x); }
static inline vf V_SET1(float x) { return (vf){x, x, x, x}; }
#define V_BCAST(p) V_SET1(*(const float *)(p))
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define V_MUL(a, b) ((a) * (b))
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
static inline vf V_MAX(vf a, vf b) { return (vf)(((vmask)(a > b) & (vmask)a) | (~(vmask)(a > b) & (vmask)b)); }
/* 2^x as in simd_avx512.h: n = round(x) by the 1.5 * 2^23 trick (exact for
 * |x| < 2^22 in round-to-nearest), degree-7 polynomial on f = x - n, 2^n built
 * in the exponent field; x clamped to [-127, 127] so that -inf gives exactly 0. */
static inline vf V_EXP2(vf x) {
  x = V_MAX(V_SET1(-127.0f), x); /* x second: a NaN stays NaN */
  x = -V_MAX(V_SET1(-127.0f), -x);
  const vf magic = V_SET1(12582912.0f);
  const vf n = (x + magic) - magic;
  const vf f = x - n;
  vf p = V_SET1(XATTN_EXP2_C7);
  p = p * f + V_SET1(XATTN_EXP2_C6);
  p = p * f + V_SET1(XATTN_EXP2_C5);
  p = p * f + V_SET1(XATTN_EXP2_C4);
  p = p * f + V_SET1(XATTN_EXP2_C3);
  p = p * f + V_SET1(XATTN_EXP2_C2);
  p = p * f + V_SET1(XATTN_EXP2_C1);
  p = p * f + V_SET1(XATTN_EXP2_C0);
  /* unsigned shift: a NaN lane converts to INT_MIN, and p is NaN there anyway */
  const vumask e = (vumask)(__builtin_convertvector(n, vmask) + 127) << 23;
  vf scale;
  memcpy(&scale, &e, sizeof scale);
  return p * scale;
}
static inline vmask V_MASK_INTERVAL(int32_t kp, const int32_t *lo, const int32_t *hi) {
  vmask l, h;
  memcpy(&l, lo, sizeof l);
  memcpy(&h, hi, sizeof h);
  const vmask k = {kp, kp, kp, kp};
  return (k >= l) & (k <= h);
}
static inline vmask V_MASK_AND_BYTES(vmask m, const uint8_t *b) {
  const vmask v = {b[0], b[1], b[2], b[3]};
  return m & (v != 0);
}
static inline vf V_SELECT(vmask m, vf a, vf b) { return (vf)((m & (vmask)a) | (~m & (vmask)b)); }
static inline vmask V_IS_NEG_INF(vf x) { return x == V_SET1(-INFINITY); }
static inline float V_HSUM(vf x) { return (x[0] + x[1]) + (x[2] + x[3]); }
static inline vf v_tanh(vf x) { return (vf){tanhf(x[0]), tanhf(x[1]), tanhf(x[2]), tanhf(x[3])}; }
#else
#include <math.h>
#include <string.h>
#include "internal/fp8.h"
#define VL 1
typedef float vf;
typedef int vmask;
#define V_ZERO() 0.0f
#define V_LOAD(p) (*(const float *)(p))
#define V_STORE(p, v) (*(float *)(p) = (v))
#define V_BCAST(p) (*(const float *)(p))
#define V_SET1(x) ((float)(x))
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define V_MUL(a, b) ((a) * (b))
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
#define V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define V_EXP2(x) exp2f(x)
/* lanes (rows) whose interval [lo, hi] contains key position kp */
#define V_MASK_INTERVAL(kp, lo, hi) ((kp) >= *(lo) && (kp) <= *(hi))
#define V_MASK_AND_BYTES(m, bytes) ((m) && *(const uint8_t *)(bytes))
#define V_SELECT(m, a, b) ((m) ? (a) : (b))
#define V_IS_NEG_INF(v) ((v) == -INFINITY)
#define V_HSUM(v) (v)

static inline vf v_tanh(vf x) { return tanhf(x); }

#endif

/* Largest lane (callers keep NaN out). */
static inline float V_HMAX(vf x) {
#if VL == 1
  return x;
#else
  float m = x[0];
  for (int i = 1; i < VL; i++) m = x[i] > m ? x[i] : m;
  return m;
#endif
}

/* VL elements of storage type dt at src widened to f32, as simd_avx512.h's
 * v_load_widen (fp8 through the exact tables of internal/fp8.h, unscaled;
 * e4m3fn as value / 256). */
static inline vf v_load_widen(const void *src, xattn_dtype dt) {
  float t[VL];
  for (int i = 0; i < VL; i++) {
    if (dt == XATTN_F32) memcpy(&t[i], (const float *)src + i, sizeof(float));
    else if (dt == XATTN_BF16 || dt == XATTN_F16) {
      uint16_t h;
      memcpy(&h, (const uint16_t *)src + i, sizeof h);
      t[i] = dt == XATTN_BF16 ? xattn_bf16_to_f32(h) : xattn_f16_to_f32(h);
    } else {
      const uint8_t c = ((const uint8_t *)src)[i];
      t[i] = dt == XATTN_E5M2 ? xattn_fp8_tables[1][c] : xattn_fp8_tables[0][c] * (1.0f / 256.0f);
    }
  }
  return V_LOAD(t);
}

/* Whether any of the first n e4m3fn codes of any of the nrows rows is a NaN code (low 7 bits set). */
static inline int v_e4m3fn_rows_have_nan(const char *const *rows, int nrows, int n) {
  for (int r = 0; r < nrows; r++)
    if (xattn_e4m3fn_has_nan((const uint8_t *)rows[r], n)) return 1;
  return 0;
}

/* Row conversions between storage dtypes and f32. */
static inline void cvt_to_f32(float *dst, const void *src, int n, xattn_dtype dt, float mul) {
  if (dt == XATTN_F32) {
    const float *s = (const float *)src;
    for (int i = 0; i < n; i++) dst[i] = s[i] * mul;
  } else if (dt == XATTN_BF16) {
    const uint16_t *s = (const uint16_t *)src;
    for (int i = 0; i < n; i++) dst[i] = xattn_bf16_to_f32(s[i]) * mul;
  } else {
    const uint16_t *s = (const uint16_t *)src;
    for (int i = 0; i < n; i++) dst[i] = xattn_f16_to_f32(s[i]) * mul;
  }
}
static inline void cvt_from_f32(void *dst, const float *src, int n, xattn_dtype dt, float mul) {
  if (dt == XATTN_F32) {
    float *d = (float *)dst;
    for (int i = 0; i < n; i++) d[i] = src[i] * mul;
  } else if (dt == XATTN_BF16) {
    uint16_t *d = (uint16_t *)dst;
    for (int i = 0; i < n; i++) d[i] = xattn_f32_to_bf16(src[i] * mul);
  } else {
    uint16_t *d = (uint16_t *)dst;
    for (int i = 0; i < n; i++) d[i] = xattn_f32_to_f16(src[i] * mul);
  }
}
