/* Storage types: names, sizes and scalar conversions (round to nearest even).
 * The SIMD paths convert whole tiles with their own instructions; these scalar
 * versions serve the reference, the portable path, the CLI and the tests. */
#include <math.h>
#include <string.h>

#include "xattn/xattn.h"

size_t xattn_dtype_size(xattn_dtype t) { return t == XATTN_F32 ? 4 : 2; }

const char *xattn_dtype_name(xattn_dtype t) {
  switch (t) {
    case XATTN_F32: return "f32";
    case XATTN_BF16: return "bf16";
    case XATTN_F16: return "f16";
  }
  return "?";
}

int xattn_dtype_parse(const char *name, xattn_dtype *t) {
  static const xattn_dtype all[] = {XATTN_F32, XATTN_BF16, XATTN_F16};
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
