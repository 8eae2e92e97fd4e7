/* AMX-BF16 kernels (Sapphire Rapids tiles): bf16 problems run S = Q K^T and
 * O += P V as TDPBF16PS tile products (16x16 f32 results of 16x32 by 32x16 bf16
 * products), the online softmax stays in AVX-512. f32 and f16 problems are
 * handed to the avx512 kernels. Compiled with -mamx-tile -mamx-bf16 on top of
 * the avx512bf16 flags; cpu.c enables the tile state (arch_prctl) first.
 *
 * Layouts (NS = the tile's key count rounded up to 32, D32 = D rounded up to 32,
 * padding is zeros; u32 = a pair of bf16, the "VNNI" rows tile B operands need):
 *   qt chunk [RC][D32] bf16    queries as stored (tile A of Q K^T)
 *   kp       [NS/32][D32/2][32] u32  pair (k[j][2t], k[j][2t+1]) at [j/32][t][j%32]:
 *                              keys transposed with 16x16 register transposes (tile
 *                              B), blocks of 32 keys contiguous so that a block stays
 *                              in L1 (rows NS*4 bytes apart would share a few sets)
 *   vp       [NS/2][DVP] u32   pair (v[2j][c], v[2j+1][c]) at [j][c]  (tile B of P V)
 *   st       [NS/16][RC][16] f32  scores, tile-major: each 16 x 16 C tile is stored as
 *                              one contiguous KiB (row-major rows NS*4 bytes apart
 *                              made the tile stores cost as much as the products);
 *                              blocks of 16 keys ST_BLOCK floats apart, 64 bytes more
 *                              than RC x 16 so that a row's blocks do not all fall in
 *                              one L1 set (4 KiB apart they did)
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
#include "isa/amx_profile.h"

#define RC 64
#define KR 32 /* keys are padded to a multiple of 32 */
#define ST_BLOCK (RC * 16 + 16) /* st: floats from one block of 16 keys to the next (fits the (BN + KR) x RC of item.inc) */

static inline int up32(int x) { return (x + 31) & ~31; }

static size_t hook_qt_bytes(int d, int mp) { return sizeof(uint16_t) * (size_t)mp * up32(d); }
static size_t hook_kp_bytes(int bn, int d) { return sizeof(uint32_t) * (size_t)(up32(d) / 2) * up32(bn); }
static size_t hook_vp_bytes(int bn, int dvp) { return sizeof(uint32_t) * (size_t)(up32(bn) / 2) * dvp; }
static size_t hook_pp_bytes(int bn) { return sizeof(uint16_t) * (size_t)RC * up32(bn); }

static void hook_pack_q(void *qt_chunk, const char *const *srcs, int nrows, int d, xattn_dtype dt,
                        float scale2, float *tmp) {
  PROF_START(t0);
  const int d32 = up32(d);
  uint16_t *qt = (uint16_t *)qt_chunk;
  /* 64 bytes at a time, inline (a memcpy and a memset call per row cost more
     than the copy where the rows are cached), tails zeroed by the mask */
  for (int r = 0; r < RC; r++) {
    uint16_t *dst = qt + (size_t)r * d32;
    if (r >= nrows) {
      for (int c = 0; c < d32; c += 32) _mm512_store_si512(dst + c, _mm512_setzero_si512());
      continue;
    }
    const uint16_t *src = (const uint16_t *)srcs[r];
    for (int c = 0; c < d32; c += 32) {
      const __mmask32 k = c + 32 <= d ? 0xffffffffu : c < d ? (__mmask32)((1u << (d - c)) - 1) : 0;
      _mm512_store_si512(dst + c, _mm512_maskz_loadu_epi16(k, src + c));
    }
  }
  PROF_ADD(PROF_PACK_Q, t0, 0);
}

static void hook_pack_kv(void *kpv, void *vpv, const char *const *kptr, const char *const *vptr, int n,
                         int d, int dv, int dvp, xattn_dtype dt) {
  PROF_START(t0);
  const int ns = up32(n), d32 = up32(d);
  uint32_t *kp = (uint32_t *)kpv;
  for (int j0 = 0; j0 < ns; j0 += 16) {
    for (int e0 = 0; e0 < d32; e0 += 32) { /* 16 keys x 32 bf16 (16 pairs) */
      const __mmask32 k = e0 + 32 <= d ? 0xffffffffu : e0 < d ? (__mmask32)((1ull << (d - e0)) - 1) : 0;
      __m512i r[16];
      for (int t = 0; t < 16; t++)
        r[t] = j0 + t < n ? _mm512_maskz_loadu_epi16(k, (const uint16_t *)kptr[j0 + t] + e0) : _mm512_setzero_si512();
      transpose16(r);
      uint32_t *blk = kp + (size_t)(j0 / 32) * (d32 / 2) * 32 + (j0 & 16);
      for (int t = 0; t < 16; t++) _mm512_store_si512(blk + (size_t)(e0 / 2 + t) * 32, r[t]);
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
  PROF_ADD(PROF_PACK_KV, t0, 0);
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
  PROF_START(t0);
  const int ns = up32(n), d32 = up32(d), nrb = (nv + 1) & ~1;
  for (int kb = 0; kb < ns / 32; kb++) { /* keys outer: the 32-key block is reused from L1 by every row block */
    const uint32_t *kblk = kp + (size_t)kb * (d32 / 2) * 32;
    for (int rb = 0; rb < nrb; rb += 2) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int e0 = 0; e0 < d32; e0 += 32) {
        _tile_loadd(4, qt + (size_t)(rb * 16) * d32 + e0, d32 * 2);
        _tile_loadd(5, qt + (size_t)(rb * 16 + 16) * d32 + e0, d32 * 2);
        _tile_loadd(6, kblk + (size_t)(e0 / 2) * 32, 128);
        _tile_loadd(7, kblk + (size_t)(e0 / 2) * 32 + 16, 128);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      float *s = st + (size_t)(kb * 2) * ST_BLOCK + rb * 16 * 16;
      _tile_stored(0, s, 64);
      _tile_stored(1, s + ST_BLOCK, 64);
      _tile_stored(2, s + 16 * 16, 64);
      _tile_stored(3, s + ST_BLOCK + 16 * 16, 64);
    }
  }
  PROF_ADD(PROF_QK, t0, (size_t)nrb * (ns / 16) * (d32 / 32));
}

/* 2^x for p that is rounded to bf16 right after (relative error 2^-9):
 * x = floor(x) + f with f = vreduceps(x) in [0, 1), a degree-3 polynomial in
 * f (relative error < 7.5e-5), then vscalefps by 2^floor(x) (it floors x
 * itself): 4 vector ops fewer than a clamp, round-to-nearest, subtraction and
 * degree 4. No clamp is needed: x = -inf reduces to 0 and scales to 0, +inf
 * to +inf, NaN stays NaN, x below -149 gives 0 (nonfinite_inputs case 4 sends
 * -inf and +inf scores through the unmasked path). Lanes that are masked are
 * zeroed by the caller, whatever they hold. */
static inline __m512 exp2_bf16(__m512 x) {
  const __m512 f = _mm512_reduce_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 p = _mm512_set1_ps(XATTN_EXP2_FLOOR_C3);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_FLOOR_C2));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_FLOOR_C1));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(XATTN_EXP2_FLOOR_C0));
  return _mm512_scalef_ps(p, x);
}

/* Lazy running max: a row keeps its max m while its scaled scores stay below
 * m + LAZY_TAU (base 2). Then p = 2^(x - m) <= 2^LAZY_TAU, exact enough for
 * bf16 and the f32 sums (the final o = acc / l uses the same m for both, so
 * any m is exact; the bound only rules out overflow), alpha stays 1 (no
 * accumulator rescale) and the row needs one pass over its scores instead of
 * a max pass, a horizontal max and an exp pass. */
#define LAZY_TAU 8.0f
#define LAZY_SUM_BOUND 255.0f /* below 2^LAZY_TAU with room for the polynomial's error */

/* What one row of a chunk sees of the tile: keys j < n, inside [lo, hi], tree bits. */
typedef struct row_view {
  int n, full, capped;
  int32_t kpos0, lo, hi;
  const uint8_t *vis; /* [key][RC] tree bits of this row (stride RC), or NULL */
  float scale2, cap2;
} row_view;

static inline __mmask16 row_mask(const row_view *v, int j) {
  __mmask16 k = tail_mask(v->n - j);
  if (v->full) return k;
  const __m512i kpos = _mm512_add_epi32(_mm512_set1_epi32(v->kpos0 + j),
                                        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  k &= _mm512_cmpge_epi32_mask(kpos, _mm512_set1_epi32(v->lo)) & _mm512_cmple_epi32_mask(kpos, _mm512_set1_epi32(v->hi));
  if (v->vis) {
    __mmask16 bits = 0;
    for (int t = 0; t < 16 && j + t < v->n; t++)
      if (v->vis[(size_t)(j + t) * RC]) bits |= (__mmask16)(1u << t);
    k &= bits;
  }
  return k;
}

/* the scores of keys j..j+15 of the row whose scores start at s (see st) */
static inline const float *st_keys(const float *s, int j) { return s + (size_t)(j >> 4) * ST_BLOCK; }

/* x = the scaled (and soft-capped) score minus m, for 16 keys */
static inline __m512 row_x(const row_view *v, const float *s, __m512 neg_m) {
  if (!v->capped) return _mm512_fmadd_ps(_mm512_load_ps(s), _mm512_set1_ps(v->scale2), neg_m);
  const __m512 x = _mm512_mul_ps(_mm512_load_ps(s), _mm512_set1_ps(v->scale2));
  const __m512 c = _mm512_mul_ps(_mm512_set1_ps(v->cap2), v_tanh(_mm512_mul_ps(x, _mm512_set1_ps(1.0f / v->cap2))));
  return _mm512_add_ps(c, neg_m);
}

/* The row's open blocks [*a, *b): the 32-key blocks it sees whole, which need
 * no mask (every block below n & ~31 on a full tile; on a partly masked tile
 * those inside [lo, hi], so that a causal diagonal tile masks only the one or
 * two blocks a row's interval ends in; none under tree bits). */
static inline void row_open_blocks(const row_view *v, int *a, int *b) {
  *a = 0;
  *b = v->n & ~31;
  if (v->full) return;
  if (v->vis) {
    *b = 0;
    return;
  }
  const int64_t lo = (int64_t)v->lo - v->kpos0, hi = (int64_t)v->hi - v->kpos0 + 1; /* visible j: [lo, hi) */
  if (lo > 0) *a = lo >= *b ? *b : (int)((lo + 31) & ~31);
  if (hi < *b) *b = hi <= 0 ? 0 : (int)(hi & ~31);
  if (*b < *a) *b = *a;
}

/* max over the row's visible keys of x (m = 0), -inf if it sees none */
static inline __attribute__((always_inline)) float row_max(const row_view *v, const float *s) {
  const __m512 neg_inf = _mm512_set1_ps(-INFINITY), zero = _mm512_setzero_ps();
  __m512 mx0 = neg_inf, mx1 = neg_inf; /* two chains: max has a latency of 4 */
  const int ns = up32(v->n);
  int a, b;
  row_open_blocks(v, &a, &b);
  for (int j = 0; j < a; j += 32) {
    mx0 = _mm512_mask_max_ps(mx0, row_mask(v, j), mx0, row_x(v, st_keys(s, j), zero));
    mx1 = _mm512_mask_max_ps(mx1, row_mask(v, j + 16), mx1, row_x(v, st_keys(s, j + 16), zero));
  }
  if (!v->capped && v->scale2 > 0.0f) { /* max(s * scale) = max(s) * scale: raw scores */
    __m512 r0 = neg_inf, r1 = neg_inf;
    for (int j = a; j < b; j += 32) {
      r0 = _mm512_max_ps(r0, _mm512_load_ps(st_keys(s, j)));
      r1 = _mm512_max_ps(r1, _mm512_load_ps(st_keys(s, j + 16)));
    }
    if (a < b) mx0 = _mm512_max_ps(mx0, _mm512_mul_ps(_mm512_max_ps(r0, r1), _mm512_set1_ps(v->scale2)));
  } else {
    for (int j = a; j < b; j += 32) {
      mx0 = _mm512_max_ps(mx0, row_x(v, st_keys(s, j), zero));
      mx1 = _mm512_max_ps(mx1, row_x(v, st_keys(s, j + 16), zero));
    }
  }
  for (int j = b; j < ns; j += 32) {
    mx0 = _mm512_mask_max_ps(mx0, row_mask(v, j), mx0, row_x(v, st_keys(s, j), zero));
    mx1 = _mm512_mask_max_ps(mx1, row_mask(v, j + 16), mx1, row_x(v, st_keys(s, j + 16), zero));
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(mx0, mx1));
}

/* one step of 32 keys from j on with masks: p to prow, added to the two sums */
static inline void row_exp_masked(const row_view *v, const float *s, __m512 neg_m, uint16_t *prow, int j,
                                  __m512 *sum0, __m512 *sum1) {
  const __mmask16 k0 = row_mask(v, j), k1 = row_mask(v, j + 16);
  const __m512 x0 = row_x(v, st_keys(s, j), neg_m), x1 = row_x(v, st_keys(s, j + 16), neg_m);
  const __m512 p0 = _mm512_maskz_mov_ps(k0, exp2_bf16(x0)), p1 = _mm512_maskz_mov_ps(k1, exp2_bf16(x1));
  *sum0 = _mm512_add_ps(*sum0, p0);
  *sum1 = _mm512_add_ps(*sum1, p1);
  _mm512_store_si512(prow + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
}

/* p = 2^(x - m) of the visible keys (0 elsewhere) to prow as bf16; returns
 * the sum of p and, in *over (unless NULL), whether some x - m exceeded
 * LAZY_TAU. That test costs nothing per key: such an x makes its p, hence the
 * lane of sum0 or sum1 it was added to, exceed 2^LAZY_TAU (up to the
 * polynomial's 7.5e-5), so only a row with such a lane takes an exact max pass
 * (tracking the max in the exp pass was 2 of its ~18 vector ops per 32 scores;
 * a lane sums ns / 32 values of p, so flat rows with p ~ 1 do not trigger it). */
static inline float row_exp(const row_view *v, const float *s, float m, uint16_t *prow, int *over) {
  const __m512 neg_m = _mm512_set1_ps(-m);
  __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
  const int ns = up32(v->n);
  int a, b;
  row_open_blocks(v, &a, &b);
  for (int j = 0; j < a; j += 32) row_exp_masked(v, s, neg_m, prow, j, &sum0, &sum1);
  if (!v->capped) /* the common case: no masks, no cap (32 keys per step into two sums: one chain would bind) */
    for (int j = a; j < b; j += 32) {
      const __m512 x0 = _mm512_fmadd_ps(_mm512_load_ps(st_keys(s, j)), _mm512_set1_ps(v->scale2), neg_m);
      const __m512 x1 = _mm512_fmadd_ps(_mm512_load_ps(st_keys(s, j + 16)), _mm512_set1_ps(v->scale2), neg_m);
      const __m512 p0 = exp2_bf16(x0), p1 = exp2_bf16(x1);
      sum0 = _mm512_add_ps(sum0, p0);
      sum1 = _mm512_add_ps(sum1, p1);
      _mm512_store_si512(prow + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
    }
  else
    for (int j = a; j < b; j += 32) {
      const __m512 p0 = exp2_bf16(row_x(v, st_keys(s, j), neg_m)), p1 = exp2_bf16(row_x(v, st_keys(s, j + 16), neg_m));
      sum0 = _mm512_add_ps(sum0, p0);
      sum1 = _mm512_add_ps(sum1, p1);
      _mm512_store_si512(prow + j, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
    }
  for (int j = b; j < ns; j += 32) row_exp_masked(v, s, neg_m, prow, j, &sum0, &sum1);
  if (over) {
    const __m512 bound = _mm512_set1_ps(LAZY_SUM_BOUND);
    *over = (_mm512_cmp_ps_mask(sum0, bound, _CMP_GT_OQ) | _mm512_cmp_ps_mask(sum1, bound, _CMP_GT_OQ)) &&
            row_max(v, s) - m > LAZY_TAU;
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(sum0, sum1));
}

/* One step of group_exp: keys j..j+31 (scores b0: keys 0-15, b1: 16-31 of
 * the 16 rows, 64 bytes apart) to p in bf16 at prow (rows ns apart), added to
 * the rows' sums; keys outside k0 / k1 get p = 0. */
static inline __attribute__((always_inline)) void group_step(const float *b0, const float *b1, uint16_t *prow, int ns,
                                                              __m512 scale, const float *neg_m, __m512 *sum,
                                                              __mmask16 k0, __mmask16 k1) {
#pragma GCC unroll 16
  for (int r = 0; r < 16; r++) {
    const __m512 x0 = _mm512_fmadd_ps(_mm512_load_ps(b0 + r * 16), scale, _mm512_set1_ps(neg_m[r]));
    const __m512 x1 = _mm512_fmadd_ps(_mm512_load_ps(b1 + r * 16), scale, _mm512_set1_ps(neg_m[r]));
    const __m512 p0 = _mm512_maskz_mov_ps(k0, exp2_bf16(x0)), p1 = _mm512_maskz_mov_ps(k1, exp2_bf16(x1));
    sum[r] = _mm512_add_ps(sum[r], _mm512_add_ps(p0, p1));
    _mm512_store_si512(prow + (size_t)r * ns, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
  }
}

/* The exp pass of 16 rows [g0, g0 + 16) of a full tile (no masks but the
 * tile's tail, no cap) in the order the scores were stored: per 32 keys, the
 * rows one after another, so that st is read as the two contiguous KiB that
 * hook_qk stored per 16-key block (row by row it is 16 lines 4 KiB apart per
 * row), each row's sum stays in its own register, and the 16 sums reduce
 * together (v_sum16) instead of one horizontal sum per row. neg_m[r] = -m of
 * row g0 + r. Returns the 16 row sums; *over gets the rows with a lane of
 * their sum above LAZY_SUM_BOUND (see row_exp: a p above 2^LAZY_TAU puts its
 * lane there; a lane here sums ns / 16 values of p). */
static inline __attribute__((always_inline)) __m512 group_exp(const float *st, int g0, int n, const float *neg_m,
                                                               float scale2, uint16_t *pp, __mmask16 *over,
                                                               const xattn_softmax_args *args) {
  const int ns = up32(n);
  /* this group's quarter of the chunk's slice of the next tile's K and V
     (span), spread over its steps */
  const char *sp[2];
  int s_next[2], s_end[2], s_step[2];
  for (int i = 0; i < 2; i++) {
    const int lines = args->span[i] ? (args->span_bytes[i] + 63) / 64 : 0, q = (lines + 3) / 4;
    sp[i] = args->span[i];
    s_next[i] = (g0 / 16) * q;
    s_end[i] = s_next[i] + q < lines ? s_next[i] + q : lines;
    s_step[i] = (q + ns / 32 - 1) / (ns / 32);
  }
  const __m512 scale = _mm512_set1_ps(scale2);
  __m512 sum[16];
  for (int r = 0; r < 16; r++) sum[r] = _mm512_setzero_ps();
  for (int j = 0; j < ns; j += 32) {
    const float *b0 = st_keys(st, j) + (size_t)g0 * 16, *b1 = b0 + ST_BLOCK;
    uint16_t *prow = pp + (size_t)g0 * ns + j;
    for (int i = 0; i < 2; i++)
      for (int e = s_next[i] + s_step[i]; s_next[i] < e && s_next[i] < s_end[i]; s_next[i]++)
        _mm_prefetch(sp[i] + (size_t)s_next[i] * 64, _MM_HINT_T1);
    if (j + 32 <= n) /* all 32 keys (constant masks: none in the code) */
      group_step(b0, b1, prow, ns, scale, neg_m, sum, 0xffff, 0xffff);
    else /* the tile's last keys: p = 0 past n */
      group_step(b0, b1, prow, ns, scale, neg_m, sum, tail_mask(n - j), tail_mask(n - j - 16));
  }
  const __m512 bound = _mm512_set1_ps(LAZY_SUM_BOUND);
  __mmask16 o = 0;
  for (int r = 0; r < 16; r++) o |= (__mmask16)((_mm512_cmp_ps_mask(sum[r], bound, _CMP_GT_OQ) != 0) << r);
  *over = o;
  __m512 t[16]; /* v_sum16 puts the sum of its input 4p + q in lane 4q + p */
  for (int r = 0; r < 16; r++) t[(r & 3) * 4 + (r >> 2)] = sum[r];
  return v_sum16(t);
}

/* Online softmax on the raw dot products of a chunk (st): p (bf16) to pp,
 * alpha (1 where the row kept its max), m and l updated. A row with a running
 * max tries one pass against it (row_exp); a row without one tries the max of
 * its first 32 keys; a row whose scores outgrew the try takes the exact max of
 * the tile first and a second pass. */
static __attribute__((noinline)) void hook_softmax(const xattn_softmax_args *args) {
  PROF_START(t0);
  float *const st = args->st, *const m = args->m, *const l = args->l, *const alpha = args->alpha;
  const int n = args->n, full = args->full, crows = args->crows;
  const int32_t kpos0 = args->kpos0, *const lo = args->lo, *const hi = args->hi;
  const uint8_t *const vis = args->vis;
  const float cap2 = args->cap2, scale2 = args->scale2;
  void *const ppv = args->pp;
  const int ns = up32(n);
  uint16_t *pp = (uint16_t *)ppv;
  row_view v = {n, full, cap2 > 0.0f, kpos0, 0, 0, NULL, scale2, cap2};
  /* full tiles, 16 rows at a time in the scores' order (group_exp); rows it
     cannot settle take the per-row passes below */
  __mmask64 done = 0;
  if (full && !v.capped && scale2 > 0.0f)
    for (int g0 = 0; g0 + 16 <= crows; g0 += 16) {
      float neg_m[16], guess[16];
      __mmask16 slow = 0;
      for (int r = 0; r < 16; r++) { /* a row's first tile: the max of its first 32 keys, as below */
        guess[r] = m[g0 + r];
        if (guess[r] == -INFINITY) {
          const float *s = st + (size_t)(g0 + r) * 16;
          guess[r] = ns > 32 ? _mm512_reduce_max_ps(_mm512_max_ps(_mm512_load_ps(s), _mm512_load_ps(s + ST_BLOCK))) * scale2
                             : -INFINITY;
        }
        if (!(guess[r] > -INFINITY && guess[r] < INFINITY)) slow |= (__mmask16)(1u << r), guess[r] = 0.0f;
        neg_m[r] = -guess[r];
      }
      __mmask16 over;
      float sums[16];
      _mm512_storeu_ps(sums, group_exp(st, g0, n, neg_m, scale2, pp, &over, args));
      for (int r = 0; r < 16; r++) {
        if ((slow | over) >> r & 1) continue; /* the row's own passes below */
        alpha[g0 + r] = 1.0f; /* kept its max, or had none (acc and l are 0) */
        l[g0 + r] += sums[r];
        m[g0 + r] = guess[r];
        done |= (__mmask64)1 << (g0 + r);
      }
    }
  for (int r = 0; r < crows; r++) {
    if (done >> r & 1) continue;
    const float *s = st + (size_t)r * 16;
    uint16_t *prow = pp + (size_t)r * ns;
    v.lo = lo[r];
    v.hi = hi[r];
    v.vis = vis ? vis + r : NULL;
    const float m_old = m[r];
    int over = 1;
    float sum = 0.0f, m_new = m_old;
    if (m_old != -INFINITY) {
      sum = row_exp(&v, s, m_old, prow, &over);
    } else if (ns > 32) { /* a row's first tile: try the max of its first 32 keys as m */
      row_view head = v;
      head.n = 32;
      const float guess = row_max(&head, s);
      if (guess != -INFINITY) {
        sum = row_exp(&v, s, guess, prow, &over);
        if (!over) m_new = guess;
      }
    }
    if (over) {
      const float mx = row_max(&v, s);
      if (mx > m_new) m_new = mx;
      sum = row_exp(&v, s, m_new == -INFINITY ? 0.0f : m_new, prow, NULL);
    }
    /* a row that had no max yet has acc = 0 and l = 0: nothing to rescale */
    const float a = m_new == m_old || m_old == -INFINITY ? 1.0f : exp2f(m_old - m_new);
    alpha[r] = a;
    l[r] = l[r] * a + sum;
    m[r] = m_new;
  }
  for (int r = crows; r < ((crows + 31) & ~31); r++) { /* padding rows of the last block */
    memset(pp + (size_t)r * ns, 0, sizeof(uint16_t) * ns);
    alpha[r] = 1.0f;
  }
  PROF_ADD(PROF_SOFTMAX, t0, 0);
}
#define HOOK_SOFTMAX_CUSTOM 1
#define HOOK_P_AT(st, pp, n, r, j) xattn_bf16_to_f32(((const uint16_t *)(pp))[(size_t)(r) * up32(n) + (j)])

/* accumulator tile t from acc at src, or zeros when the chunk is fresh */
#define ACC_IN(t, src)                  \
  do {                                  \
    if (fresh)                          \
      _tile_zero(t);                    \
    else                                \
      _tile_loadd(t, (src), dvp * 4);   \
  } while (0)
/* P V for the chunk's rows, acc tiles 2 x 2 blocks (32 rows x 32 dv) over the
 * tile's keys. The next chunk's query rows (sa->prefetch_rows) are asked for
 * here, one row per product step: the steps wait on their tile loads anyway,
 * where the softmax's own loads compete with them (spread over the softmax,
 * landed in session 6, they cost bidirectional's softmax ~3k ticks per chunk;
 * here 1.02-1.03x end to end, kernels/README.md). */
static __attribute__((noinline)) void hook_pv(float *st, int n, const void *vpv, int dvp, int rows,
                                              float *acc, const float *alpha, void *ppv, int fresh,
                                              const xattn_softmax_args *sa) {
  const char *const *pf = sa->prefetch_rows;
  const int npf = pf ? sa->prefetch_n : 0;
  int pf_r = 0; /* the next of them */
  const uint16_t *pp = (const uint16_t *)ppv;
  const uint32_t *vp = (const uint32_t *)vpv;
  PROF_START(t0);
  const int ns = up32(n), nr = (rows + 31) & ~31, ndb = dvp / 16;
  for (int r = 0; r < nr && !fresh; r++) {
    if (alpha[r] == 1.0f) continue; /* the row's max did not move */
    const __m512 a = _mm512_set1_ps(alpha[r]);
    float *o = acc + (size_t)r * dvp;
    for (int c = 0; c < dvp; c += 16) _mm512_store_ps(o + c, _mm512_mul_ps(_mm512_load_ps(o + c), a));
  }
  PROF_ADD(PROF_RESCALE, t0, 0);
  PROF_START(t1);
  for (int rb = 0; rb < nr / 16; rb += 2) {
    float *o = acc + (size_t)(rb * 16) * dvp;
    const uint16_t *p0 = pp + (size_t)(rb * 16) * ns;
    int db = 0;
    for (; db + 2 <= ndb; db += 2) {
      ACC_IN(0, o + db * 16);
      ACC_IN(1, o + db * 16 + 16);
      ACC_IN(2, o + (size_t)16 * dvp + db * 16);
      ACC_IN(3, o + (size_t)16 * dvp + db * 16 + 16);
      for (int j0 = 0; j0 < ns; j0 += 32) {
        _tile_loadd(4, p0 + j0, ns * 2);
        _tile_loadd(5, p0 + (size_t)16 * ns + j0, ns * 2);
        _tile_loadd(6, vp + (size_t)(j0 / 2) * dvp + db * 16, dvp * 4);
        _tile_loadd(7, vp + (size_t)(j0 / 2) * dvp + db * 16 + 16, dvp * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        if (pf_r < npf) {
          for (int o = 0; o < sa->prefetch_bytes; o += 64) _mm_prefetch(pf[pf_r] + o, _MM_HINT_T1);
          pf_r++;
        }
      }
      _tile_stored(0, o + db * 16, dvp * 4);
      _tile_stored(1, o + db * 16 + 16, dvp * 4);
      _tile_stored(2, o + (size_t)16 * dvp + db * 16, dvp * 4);
      _tile_stored(3, o + (size_t)16 * dvp + db * 16 + 16, dvp * 4);
    }
    if (db < ndb) { /* an odd number of 16-wide dv blocks */
      ACC_IN(0, o + db * 16);
      ACC_IN(2, o + (size_t)16 * dvp + db * 16);
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
  for (; pf_r < npf; pf_r++) /* fewer product steps than rows */
    for (int o = 0; o < sa->prefetch_bytes; o += 64) _mm_prefetch(pf[pf_r] + o, _MM_HINT_T1);
  PROF_ADD(PROF_PV, t1, (size_t)(nr / 16) * ndb * (ns / 32));
}
#undef ACC_IN

#define HOOK_STAGE_DTYPE(dt) (dt) /* bf16 problems only: decode fp8 rows to bf16 */
#define HOOK_OUT_STREAM 1 /* large outputs with streaming stores (xattn_run.stream_out) */
/* kp and vp are sequences of 32-key blocks (16 pair rows of vp), so a span of
 * keys packed once for the whole call serves any tile starting on a block */
#define HOOK_KV_PREPACK 1
#include "isa/item.inc"
#define XATTN_LANES_AMX 1 /* the lanes span of bf16 problems on tiles (decode/lanes_amx.inc) */
#define DEC_BF16_DOTS 1   /* raw bf16 query rows and the fp8 byte tables of decode/dots_bf16.inc, */
#define DEC_AMX_TILES 1   /* for the decode layout's fp8 full tiles on tiles (decode/tiles_amx.inc) */
#include "decode/decode.inc"

XATTN_ISA_KERNELS(amx);
