/* AMX-BF16 kernels (Sapphire Rapids tiles): bf16 problems run S = Q K^T and
 * O += P V as TDPBF16PS tile products (16x16 f32 results of 16x32 by 32x16 bf16
 * products), the online softmax stays in AVX-512. f32 and f16 problems are
 * handed to the avx512 kernels. Compiled with -mamx-tile -mamx-bf16 on top of
 * the avx512bf16 flags; cpu.c enables the tile state (arch_prctl) first.
 *
 * Layouts (NS = the tile's key count rounded up to 32, D32 = D rounded up to 32,
 * padding is zeros; u32 = a pair of bf16, the "VNNI" rows tile B operands need):
 *   qt chunk [RC][D32] bf16    queries as stored (tile A of Q K^T)
 *   kp       [D32/2][NS] u32   pair (k[j][2t], k[j][2t+1]) at [t][j]: keys transposed
 *                              with 16x16 register transposes (tile B)
 *   vp       [NS/2][DVP] u32   pair (v[2j][c], v[2j+1][c]) at [j][c]  (tile B of P V)
 *   st       [RC][NS] f32      scores row-major (tile C), softmax'd in place
 *   pp       [RC][NS] bf16     p rounded to bf16 (tile A of P V)
 * Rows are processed in blocks of 32 (2 tiles), keys in blocks of 32. */
#include "isa/exp2_poly.h"
#include <sys/syscall.h>
#include <unistd.h>
#include "xattn/xattn.h"
#include "internal/kernel.h"
#include "xattn_variant_list.h"
#include "isa/simd_avx512.h"
#include "isa/bf16_pairs.h"
#include "isa/amx_tiles.h"
#include "isa/hooks.h"

#define RC 64
#define KR 32 /* keys are padded to a multiple of 32 */

static inline int up32(int x) { return (x + 31) & ~31; }

static size_t hook_qt_bytes(int d, int mp) { return sizeof(uint16_t) * (size_t)mp * up32(d); }
static size_t hook_kp_bytes(int bn, int d) { return sizeof(uint32_t) * (size_t)(up32(d) / 2) * up32(bn); }
static size_t hook_vp_bytes(int bn, int dvp) { return sizeof(uint32_t) * (size_t)(up32(bn) / 2) * dvp; }
static size_t hook_pp_bytes(int bn) { return sizeof(uint16_t) * (size_t)RC * up32(bn); }

static void hook_pack_q(void *qt_chunk, const char *const *srcs, int nrows, int d, xattn_dtype dt,
                        float scale2, float *tmp) {
  const int d32 = up32(d);
  uint16_t *qt = (uint16_t *)qt_chunk;
  for (int r = 0; r < RC; r++) {
    uint16_t *dst = qt + (size_t)r * d32;
    int c = 0;
    if (r < nrows) {
      memcpy(dst, srcs[r], sizeof(uint16_t) * d);
      c = d;
    }
    memset(dst + c, 0, sizeof(uint16_t) * (d32 - c));
  }
}

static void hook_pack_kv(void *kpv, void *vpv, const char *const *kptr, const char *const *vptr, int n,
                         int d, int dv, int dvp, xattn_dtype dt) {
  const int ns = up32(n), d32 = up32(d);
  uint32_t *kp = (uint32_t *)kpv;
  for (int j0 = 0; j0 < ns; j0 += 16) {
    for (int e0 = 0; e0 < d32; e0 += 32) { /* 16 keys x 32 bf16 (16 pairs) */
      const __mmask32 k = e0 + 32 <= d ? 0xffffffffu : e0 < d ? (__mmask32)((1ull << (d - e0)) - 1) : 0;
      __m512i r[16];
      for (int t = 0; t < 16; t++)
        r[t] = j0 + t < n ? _mm512_maskz_loadu_epi16(k, (const uint16_t *)kptr[j0 + t] + e0) : _mm512_setzero_si512();
      transpose16(r);
      for (int t = 0; t < 16; t++) _mm512_store_si512(kp + (size_t)(e0 / 2 + t) * ns + j0, r[t]);
    }
  }
  uint32_t *vp = (uint32_t *)vpv;
  for (int j = 0; j < ns; j += 2) {
    uint32_t *dst = vp + (size_t)(j / 2) * dvp;
    if (j >= n) {
      memset(dst, 0, sizeof(uint32_t) * dvp);
      continue;
    }
    const uint16_t *a = (const uint16_t *)vptr[j];
    const uint16_t *b = j + 1 < n ? (const uint16_t *)vptr[j + 1] : NULL;
    pack_bf16_pair_row(dst, a, b, dv, dvp);
  }
}

/* tiles 0-3: C (2 x 2 blocks of 16 x 16 f32), 4-5: A, 6-7: B */
static void amx_begin(void) {
  xattn_amx_tile_config cfg;
  xattn_amx_tiles_16x64(&cfg);
  _tile_loadconfig(&cfg);
}
#define HOOK_ITEM_BEGIN() amx_begin()
#define HOOK_ITEM_END() _tile_release()

static __attribute__((noinline)) void hook_qk(const void *kpv, int n, int d, const void *qtv, int nv,
                                              float *st, float scale2) {
  const uint16_t *qt = (const uint16_t *)qtv;
  const uint32_t *kp = (const uint32_t *)kpv;
  const int ns = up32(n), d32 = up32(d), nrb = (nv + 1) & ~1;
  for (int rb = 0; rb < nrb; rb += 2) {
    for (int kb = 0; kb < ns / 16; kb += 2) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int e0 = 0; e0 < d32; e0 += 32) {
        _tile_loadd(4, qt + (size_t)(rb * 16) * d32 + e0, d32 * 2);
        _tile_loadd(5, qt + (size_t)(rb * 16 + 16) * d32 + e0, d32 * 2);
        _tile_loadd(6, kp + (size_t)(e0 / 2) * ns + kb * 16, ns * 4);
        _tile_loadd(7, kp + (size_t)(e0 / 2) * ns + kb * 16 + 16, ns * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      float *s = st + (size_t)(rb * 16) * ns + kb * 16;
      _tile_stored(0, s, ns * 4);
      _tile_stored(1, s + 16, ns * 4);
      _tile_stored(2, s + (size_t)16 * ns, ns * 4);
      _tile_stored(3, s + (size_t)16 * ns + 16, ns * 4);
    }
  }
}

/* 2^x for p that is rounded to bf16 right after (relative error 2^-9): a
 * degree-4 polynomial (relative error < 5e-5) is plenty and saves 3 FMAs. */
static inline __m512 exp2_bf16_finite(__m512 x) { /* x finite: scalef underflows to 0 */
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, n);
  __m512 p = _mm512_set1_ps(XATTN_EXP2_C4);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C3));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C2));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C1));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_C0));
  return _mm512_scalef_ps(p, n);
}
static inline __m512 exp2_bf16(__m512 x) { /* x may be -inf (masked): clamp first, x second so NaN stays NaN */
  return exp2_bf16_finite(_mm512_max_ps(_mm512_set1_ps(XATTN_EXP2_MIN_INPUT), x));
}

/* Online softmax on row-major raw dot products (scaled here). Fully visible
 * tiles without a cap take the short path: max of the raw scores, then
 * p = 2^(s * scale - m) in one FMA + exp. Rescale factors and sums are
 * finished for all rows at once with vector exp2. */
static __attribute__((noinline)) void hook_softmax(const xattn_softmax_args *args) {
  float *const st = args->st, *const m = args->m, *const l = args->l, *const alpha = args->alpha;
  const int n = args->n, full = args->full, crows = args->crows;
  const int32_t kpos0 = args->kpos0, *const lo = args->lo, *const hi = args->hi;
  const uint8_t *const vis = args->vis;
  const float cap2 = args->cap2, scale2 = args->scale2;
  void *const ppv = args->pp;
  const int ns = up32(n);
  uint16_t *pp = (uint16_t *)ppv;
  const __m512 vscale = _mm512_set1_ps(scale2), neg_inf = _mm512_set1_ps(-INFINITY);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const int fast = full && cap2 <= 0.0f && scale2 > 0.0f; /* max(s * scale) = max(s) * scale */
  float mnew[RC] __attribute__((aligned(64))), sums[RC] __attribute__((aligned(64)));
  for (int r = 0; r < crows; r++) {
    float *s = st + (size_t)r * ns;
    __m512 vmx = neg_inf;
    float mx;
    if (fast) {
      for (int j = 0; j + 16 <= n; j += 16) vmx = _mm512_max_ps(vmx, _mm512_load_ps(s + j));
      if (n & 15) vmx = _mm512_mask_max_ps(vmx, tail_mask(n & 15), vmx, _mm512_load_ps(s + (n & ~15)));
      mx = _mm512_reduce_max_ps(vmx) * scale2;
    } else {
      for (int j = 0; j < ns; j += 16) {
        __m512 x = _mm512_mul_ps(_mm512_load_ps(s + j), vscale);
        if (cap2 > 0.0f) x = _mm512_mul_ps(_mm512_set1_ps(cap2), v_tanh(_mm512_mul_ps(x, _mm512_set1_ps(1.0f / cap2))));
        __mmask16 k = tail_mask(n - j);
        if (!full) {
          const __m512i kpos = _mm512_add_epi32(_mm512_set1_epi32(kpos0 + j), iota);
          k &= _mm512_cmpge_epi32_mask(kpos, _mm512_set1_epi32(lo[r])) &
               _mm512_cmple_epi32_mask(kpos, _mm512_set1_epi32(hi[r]));
          if (vis) {
            __mmask16 bits = 0;
            for (int t = 0; t < 16 && j + t < n; t++)
              if (vis[(size_t)(j + t) * RC + r]) bits |= (__mmask16)(1u << t);
            k &= bits;
          }
        }
        x = _mm512_mask_blend_ps(k, neg_inf, x);
        _mm512_store_ps(s + j, x);
        vmx = _mm512_max_ps(vmx, x);
      }
      mx = _mm512_reduce_max_ps(vmx);
    }
    if (m[r] > mx) mx = m[r];
    mnew[r] = mx;
    const float m_use = mx == -INFINITY ? 0.0f : mx;
    /* p for 32 keys per step (ns is a multiple of 32) into two sums: the
       additions would otherwise chain on one register */
    __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
    uint16_t *prow = pp + (size_t)r * ns;
    const __m512 mul = fast ? vscale : _mm512_set1_ps(1.0f);
    const __m512 vm = _mm512_set1_ps(-m_use);
    int j = 0;
    if (fast) /* all scores finite, all keys valid up to n & ~31 */
      for (; j + 32 <= n; j += 32) {
        const __m512 p0 = exp2_bf16_finite(_mm512_fmadd_ps(_mm512_load_ps(s + j), mul, vm));
        const __m512 p1 = exp2_bf16_finite(_mm512_fmadd_ps(_mm512_load_ps(s + j + 16), mul, vm));
        sum0 = _mm512_add_ps(sum0, p0);
        sum1 = _mm512_add_ps(sum1, p1);
        _mm512_store_si512(prow + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
      }
    for (; j < ns; j += 32) {
      const __m512 p0 = _mm512_maskz_mov_ps(tail_mask(n - j), exp2_bf16(_mm512_fmadd_ps(_mm512_load_ps(s + j), mul, vm)));
      const __m512 p1 = _mm512_maskz_mov_ps(tail_mask(n - j - 16),
                                            exp2_bf16(_mm512_fmadd_ps(_mm512_load_ps(s + j + 16), mul, vm)));
      sum0 = _mm512_add_ps(sum0, p0);
      sum1 = _mm512_add_ps(sum1, p1);
      _mm512_store_si512(prow + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
    }
    const __m512 sum = _mm512_add_ps(sum0, sum1);
    sums[r] = _mm512_reduce_add_ps(sum);
  }
  for (int r = 0; r < crows; r += 16) { /* alpha = 2^(m_old - m_new), l = l * alpha + sum */
    const __mmask16 k = tail_mask(crows - r);
    const __m512 mo = _mm512_maskz_loadu_ps(k, m + r), mn = _mm512_maskz_loadu_ps(k, mnew + r);
    const __m512 mu = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(mn, neg_inf, _CMP_EQ_OQ), mn, _mm512_setzero_ps());
    const __m512 a = V_EXP2(_mm512_sub_ps(mo, mu));
    _mm512_mask_storeu_ps(alpha + r, k, a);
    _mm512_mask_storeu_ps(l + r, k, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, l + r), a, _mm512_maskz_loadu_ps(k, sums + r)));
    _mm512_mask_storeu_ps(m + r, k, mn);
  }
  for (int r = crows; r < ((crows + 31) & ~31); r++) { /* padding rows of the last block */
    memset(pp + (size_t)r * ns, 0, sizeof(uint16_t) * ns);
    alpha[r] = 1.0f;
  }
}
#define HOOK_SOFTMAX_CUSTOM 1
#define HOOK_P_AT(st, pp, n, r, j) xattn_bf16_to_f32(((const uint16_t *)(pp))[(size_t)(r) * up32(n) + (j)])

static __attribute__((noinline)) void hook_pv(float *st, int n, const void *vpv, int dvp, int rows,
                                              float *acc, const float *alpha, void *ppv) {
  const uint16_t *pp = (const uint16_t *)ppv;
  const uint32_t *vp = (const uint32_t *)vpv;
  const int ns = up32(n), nr = (rows + 31) & ~31, ndb = dvp / 16;
  for (int r = 0; r < nr; r++) {
    if (alpha[r] == 1.0f) continue; /* the row's max did not move */
    const __m512 a = _mm512_set1_ps(alpha[r]);
    float *o = acc + (size_t)r * dvp;
    for (int c = 0; c < dvp; c += 16) _mm512_store_ps(o + c, _mm512_mul_ps(_mm512_load_ps(o + c), a));
  }
  for (int rb = 0; rb < nr / 16; rb += 2) {
    float *o = acc + (size_t)(rb * 16) * dvp;
    const uint16_t *p0 = pp + (size_t)(rb * 16) * ns;
    int db = 0;
    for (; db + 2 <= ndb; db += 2) {
      _tile_loadd(0, o + db * 16, dvp * 4);
      _tile_loadd(1, o + db * 16 + 16, dvp * 4);
      _tile_loadd(2, o + (size_t)16 * dvp + db * 16, dvp * 4);
      _tile_loadd(3, o + (size_t)16 * dvp + db * 16 + 16, dvp * 4);
      for (int j0 = 0; j0 < ns; j0 += 32) {
        _tile_loadd(4, p0 + j0, ns * 2);
        _tile_loadd(5, p0 + (size_t)16 * ns + j0, ns * 2);
        _tile_loadd(6, vp + (size_t)(j0 / 2) * dvp + db * 16, dvp * 4);
        _tile_loadd(7, vp + (size_t)(j0 / 2) * dvp + db * 16 + 16, dvp * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(0, o + db * 16, dvp * 4);
      _tile_stored(1, o + db * 16 + 16, dvp * 4);
      _tile_stored(2, o + (size_t)16 * dvp + db * 16, dvp * 4);
      _tile_stored(3, o + (size_t)16 * dvp + db * 16 + 16, dvp * 4);
    }
    if (db < ndb) { /* an odd number of 16-wide dv blocks */
      _tile_loadd(0, o + db * 16, dvp * 4);
      _tile_loadd(2, o + (size_t)16 * dvp + db * 16, dvp * 4);
      for (int j0 = 0; j0 < ns; j0 += 32) {
        _tile_loadd(4, p0 + j0, ns * 2);
        _tile_loadd(5, p0 + (size_t)16 * ns + j0, ns * 2);
        _tile_loadd(6, vp + (size_t)(j0 / 2) * dvp + db * 16, dvp * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(2, 5, 6);
      }
      _tile_stored(0, o + db * 16, dvp * 4);
      _tile_stored(2, o + (size_t)16 * dvp + db * 16, dvp * 4);
    }
  }
}

#define HOOK_STAGE_DTYPE(dt) (dt) /* bf16 problems only: decode fp8 rows to bf16 */
#include "isa/item.inc"
#include "decode/decode.inc"

XATTN_ISA_KERNELS(amx);
