/* fp8 KV caches: the decode tables and the per-token scales, shared by the
 * reference-free parts of the library (validation, every ISA's load path). */
#ifndef XATTN_INTERNAL_FP8_H
#define XATTN_INTERNAL_FP8_H

#include <stdint.h>
#include "xattn/xattn.h"

/* [0]: e4m3fn, [1]: e5m2; code -> exact float (dtype.c fills them at load). */
extern float xattn_fp8_tables[2][256];

static inline int xattn_is_fp8(xattn_dtype t) { return t == XATTN_E4M3FN || t == XATTN_E5M2; }

static inline const float *xattn_fp8_table(xattn_dtype t) { return xattn_fp8_tables[t == XATTN_E5M2]; }

/* Scale of cache token `token`, KV head h, of K (v = 0) or V (v = 1). */
static inline float xattn_fp8_scale(const xattn_problem *p, int v, int64_t token, int h) {
  const float *per = v ? p->v_scales : p->k_scales;
  const float s = v ? p->v_scale : p->k_scale;
  return per ? s * per[token * p->heads_kv + h] : s;
}

/* dst[i] = table[src[i]] * scale for n codes (one rounding, in f32). */
static inline void xattn_fp8_decode_f32(float *dst, const uint8_t *src, int n, const float *table, float scale) {
  for (int i = 0; i < n; i++) dst[i] = table[src[i]] * scale;
}

#endif
