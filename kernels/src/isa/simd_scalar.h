/* Portable "vectors" of one float: the scalar ISA runs the same kernel
 * template as the SIMD ISAs with VL = 1 (plain C, any CPU). */
#include <math.h>
#include <string.h>
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

static inline vf v_tanh(vf x) { return tanhf(x); }

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
