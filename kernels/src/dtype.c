/* Storage types: names, sizes and scalar conversions (round to nearest even).
 * The SIMD paths convert whole tiles with their own instructions; these scalar
 * versions serve the reference, the portable path, the CLI and the tests. */
#include <math.h>
#include <string.h>

#include "xattn/xattn.h"
#include "internal/fp8.h"

size_t xattn_dtype_size(xattn_dtype t) {
  return t == XATTN_F32 ? 4 : t == XATTN_E4M3FN || t == XATTN_E5M2 ? 1 : 2;
}

const char *xattn_dtype_name(xattn_dtype t) {
  switch (t) {
    case XATTN_DTYPE_SAME: return "same";
    case XATTN_F32: return "f32";
    case XATTN_BF16: return "bf16";
    case XATTN_F16: return "f16";
    case XATTN_E4M3FN: return "e4m3fn";
    case XATTN_E5M2: return "e5m2";
  }
  return "?";
}

int xattn_dtype_parse(const char *name, xattn_dtype *t) {
  static const xattn_dtype all[] = {XATTN_F32, XATTN_BF16, XATTN_F16, XATTN_E4M3FN, XATTN_E5M2};
  if (!name || !t) return -1;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (strcmp(name, xattn_dtype_name(all[i])) == 0) { *t = all[i]; return 0; }
  return -1;
}

static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float xattn_bf16_to_f32(uint16_t x) { return float_of((uint32_t)x << 16); }

uint16_t xattn_f32_to_bf16(float x) {
  uint32_t u = bits_of(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float xattn_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | (man << 13)); /* inf / nan */
  if (exp == 0) { /* zero or subnormal: man * 2^-24 */
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
  }
  return float_of(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t xattn_f32_to_f16(float x) {
  uint32_t u = bits_of(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  float a = fabsf(x);
  if (isnan(x)) return (uint16_t)(sign | 0x7e00u);
  if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00u); /* rounds to inf */
  if (a < 0x1p-14f) { /* subnormal range: quantum 2^-24, nearbyint rounds to even */
    return (uint16_t)(sign | (uint16_t)nearbyintf(a * 0x1p24f));
  }
  uint32_t ua = bits_of(a);
  uint32_t exp = (ua >> 23) - 112u, man = ua & 0x7fffffu;
  uint32_t h = (exp << 10) | (man >> 13);
  uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* carries into exp correctly */
  return (uint16_t)(sign | h);
}

/* fp8 decoding, straight from the formats' definitions (the kernels' tables,
 * internal/fp8.h, are filled from this and tested against it code by code). */
float xattn_fp8_to_f32(uint8_t code, xattn_dtype t) {
  const int sign = code >> 7;
  float v;
  if (t == XATTN_E4M3FN) {
    const int e = (code >> 3) & 0xf, m = code & 7;
    if (e == 0xf && m == 7) return NAN;
    v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
  } else if (t == XATTN_E5M2) {
    const int e = (code >> 2) & 0x1f, m = code & 3;
    if (e == 0x1f) return m ? NAN : (sign ? -INFINITY : INFINITY);
    v = e == 0 ? ldexpf((float)m, -16) : ldexpf(1.0f + (float)m / 4.0f, e - 15);
  } else {
    return NAN;
  }
  return sign ? -v : v;
}

/* Nearest code by bisection over the ordered positive codes (both formats'
 * codes 0..max are monotonic in value), ties to the even code. */
uint8_t xattn_f32_to_fp8(float x, xattn_dtype t) {
  const uint8_t maxc = t == XATTN_E4M3FN ? 0x7e : 0x7b; /* 448, 57344 */
  const uint8_t sign = signbit(x) ? 0x80 : 0;
  if (isnan(x)) return 0x7f; /* a NaN code in both formats */
  const float a = fabsf(x), top = xattn_fp8_to_f32(maxc, t);
  if (a > top) {
    /* halfway to the next (unrepresentable) step still rounds to the max */
    const float step = top - xattn_fp8_to_f32((uint8_t)(maxc - 1), t);
    if (a < top + step / 2) return (uint8_t)(sign | maxc);
    return t == XATTN_E4M3FN ? (uint8_t)(sign | 0x7f) : (uint8_t)(sign | 0x7c);
  }
  int lo = 0, hi = maxc; /* value(lo) <= a <= value(hi) */
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (xattn_fp8_to_f32((uint8_t)mid, t) <= a) lo = mid; else hi = mid;
  }
  const float dl = a - xattn_fp8_to_f32((uint8_t)lo, t), dh = xattn_fp8_to_f32((uint8_t)hi, t) - a;
  const int c = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  return (uint8_t)(sign | c);
}

/* The kernels' decode tables (internal/fp8.h), filled once at load time from
 * xattn_fp8_to_f32 so that both are one definition. */
float xattn_fp8_tables[2][256];
uint8_t xattn_fp8_bf16_bytes[2][2][128];

__attribute__((constructor)) static void fill_fp8_tables(void) {
  for (int c = 0; c < 256; c++) {
    xattn_fp8_tables[0][c] = xattn_fp8_to_f32((uint8_t)c, XATTN_E4M3FN);
    xattn_fp8_tables[1][c] = xattn_fp8_to_f32((uint8_t)c, XATTN_E5M2);
  }
  for (int f = 0; f < 2; f++) /* every fp8 value is a bf16 value: the f32's high half, exactly */
    for (int c = 0; c < 128; c++) {
      uint32_t u;
      memcpy(&u, &xattn_fp8_tables[f][c], sizeof u);
      xattn_fp8_bf16_bytes[f][0][c] = (uint8_t)(u >> 16);
      xattn_fp8_bf16_bytes[f][1][c] = (uint8_t)(u >> 24);
    }
}
