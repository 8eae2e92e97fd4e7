/* AVX-512 + BF16 kernels: bf16 problems run both products with vdpbf16ps
 * (pairs of bf16 multiplied and summed into f32 lanes); f32 and f16 problems
 * are handed to the avx512 kernels (bf16 products would lose their precision).
 * Compiled with -mavx512bf16 on top of the avx512 flags.
 *
 * Packed layouts (u32 = a pair of bf16):
 *   qt chunk [D2/2][RC] u32   pair (q[r][2k], q[r][2k+1]), not pre-scaled: the
 *                             scale is applied to the f32 scores instead, so q
 *                             is never rounded twice
 *   kp       [BN+KR][D2] bf16 keys as stored (a row is already pairs over d)
 *   vp       [BN2/2][DVP] u32 pair (v[2j][c], v[2j+1][c]): rows interleaved
 *   pp       [BN2/2][RC] u32  pair (p[2j][r], p[2j+1][r]), rounded from f32 p
 * D2, BN2: D and the tile's key count rounded up to even, padded with zeros. */
#include "xattn/xattn.h"
#include "internal/kernel.h"
#include "xattn_variant_list.h"
#include "isa/simd_avx512.h"
#include "isa/bf16_pairs.h"
#include "isa/hooks.h"

#define RC 64
#define KR 6 /* QK block: 6 keys x 4 row vectors */
#define KC 4
#define PR 6 /* PV block: 6 rows x 4 dv vectors */
#define PC 4

static inline int even_up(int x) { return (x + 1) & ~1; }

static size_t hook_qt_bytes(int d, int mp) { return sizeof(uint32_t) * (size_t)(even_up(d) / 2) * mp; }
static size_t hook_kp_bytes(int bn, int d) { return sizeof(uint16_t) * (size_t)(bn + KR) * even_up(d); }
static size_t hook_vp_bytes(int bn, int dvp) { return sizeof(uint32_t) * (size_t)(even_up(bn) / 2) * dvp; }
static size_t hook_pp_bytes(int bn) { return sizeof(uint32_t) * (size_t)(even_up(bn) / 2) * RC; }

static void hook_pack_q(void *qt_chunk, const char *const *srcs, int nrows, int d, xattn_dtype dt,
                        float scale2, float *tmp) {
  const int d2h = even_up(d) / 2;
  uint32_t *qt = (uint32_t *)qt_chunk, *rows = (uint32_t *)tmp;
  for (int r = 0; r < nrows; r++) {
    rows[(size_t)r * d2h + d2h - 1] = 0; /* odd D: the last pair's high half is 0 */
    memcpy(rows + (size_t)r * d2h, srcs[r], sizeof(uint16_t) * d);
  }
  transpose_rows(qt, RC, rows, nrows, d2h);
}

static void hook_pack_kv(void *kpv, void *vpv, const char *const *kptr, const char *const *vptr, int n,
                         int d, int dv, int dvp, xattn_dtype dt) {
  const int d2 = even_up(d), nr = (n + KR - 1) / KR * KR;
  uint16_t *kp = (uint16_t *)kpv;
  for (int j = 0; j < n; j++) {
    kp[(size_t)j * d2 + d2 - 1] = 0;
    memcpy(kp + (size_t)j * d2, kptr[j], sizeof(uint16_t) * d);
  }
  memset(kp + (size_t)n * d2, 0, sizeof(uint16_t) * (size_t)(nr - n) * d2);
  uint32_t *vp = (uint32_t *)vpv;
  for (int j = 0; j < n; j += 2) {
    const uint16_t *a = (const uint16_t *)vptr[j];
    const uint16_t *b = j + 1 < n ? (const uint16_t *)vptr[j + 1] : NULL;
    uint32_t *dst = vp + (size_t)(j / 2) * dvp;
    pack_bf16_pair_row(dst, a, b, dv, dvp);
  }
}

static inline __attribute__((always_inline)) void qk_block(int R, int C, const uint32_t *kp, int d2h,
                                                           const uint32_t *qt, float *st, float scale2) {
  __m512 acc[KR][KC];
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_ps();
  for (int k = 0; k < d2h; k++) {
    __m512bh b[KC];
    for (int c = 0; c < C; c++) b[c] = (__m512bh)_mm512_load_si512(qt + (size_t)k * RC + c * 16);
    for (int r = 0; r < R; r++) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32((int)kp[(size_t)r * d2h + k]);
      for (int c = 0; c < C; c++) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], a, b[c]);
    }
  }
  const __m512 s = _mm512_set1_ps(scale2);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) _mm512_store_ps(st + (size_t)r * RC + c * 16, _mm512_mul_ps(acc[r][c], s));
}

/* hook_qk's remainder switch covers 1..3 leftover row vectors */
_Static_assert(KC >= 1 && KC <= 4, "hook_qk handles at most 3 leftover column blocks: KC must be 1..4");
#define QK_CASE(R_, C_) qk_block(R_, C_, kp + (size_t)j * d2h, d2h, qt + c * 16, st + (size_t)j * RC + c * 16, scale2)
static __attribute__((noinline)) void hook_qk(const void *kpv, int n, int d, const void *qtv, int nv,
                                              float *st, float scale2) {
  const uint32_t *kp = (const uint32_t *)kpv, *qt = (const uint32_t *)qtv;
  const int d2h = even_up(d) / 2;
  n = (n + KR - 1) / KR * KR;
  for (int j = 0; j < n; j += KR) {
    int c = 0;
    for (; c + KC <= nv; c += KC) QK_CASE(KR, KC);
    switch (nv - c) {
      case 1: QK_CASE(KR, 1); break;
      case 2: QK_CASE(KR, 2); break;
      case 3: QK_CASE(KR, 3); break;
      default: break;
    }
  }
}

static inline __attribute__((always_inline)) void pv_block(int R, int C, const uint32_t *pp, int nh2,
                                                           const uint32_t *vp, int dvp, float *acc,
                                                           const float *alpha, int fresh) {
  __m512 o[PR][PC];
  for (int r = 0; r < R; r++) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    for (int c = 0; c < C; c++)
      o[r][c] = fresh ? _mm512_setzero_ps() : _mm512_mul_ps(_mm512_load_ps(acc + (size_t)r * dvp + c * 16), a);
  }
  for (int j = 0; j < nh2; j++) {
    __m512bh b[PC];
    for (int c = 0; c < C; c++) b[c] = (__m512bh)_mm512_load_si512(vp + (size_t)j * dvp + c * 16);
    for (int r = 0; r < R; r++) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32((int)pp[(size_t)j * RC + r]);
      for (int c = 0; c < C; c++) o[r][c] = _mm512_dpbf16_ps(o[r][c], a, b[c]);
    }
  }
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) _mm512_store_ps(acc + (size_t)r * dvp + c * 16, o[r][c]);
}

#define PV_CASE(R_, C_) pv_block(R_, C_, pp + i, nh2, vp + c * 16, dvp, acc + (size_t)i * dvp + c * 16, alpha + i, fresh)
static __attribute__((noinline)) void hook_pv(float *st, int n, const void *vpv, int dvp, int rows,
                                              float *acc, const float *alpha, void *ppv, int fresh, const xattn_softmax_args *sa) {
  (void)sa; /* no hints taken */
  const uint32_t *vp = (const uint32_t *)vpv;
  uint32_t *pp = (uint32_t *)ppv;
  const int nh2 = even_up(n) / 2, nrv = (rows + 15) / 16;
  /* p rows 2j and 2j+1 -> one bf16 pair per lane */
  for (int j = 0; j < nh2; j++) {
    for (int c = 0; c < nrv; c++) {
      const __m512 x = _mm512_load_ps(st + (size_t)(2 * j) * RC + c * 16);
      const __m512 y = 2 * j + 1 < n ? _mm512_load_ps(st + (size_t)(2 * j + 1) * RC + c * 16) : _mm512_setzero_ps();
      const __m512i lo = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x));
      const __m512i hi = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(y));
      _mm512_store_si512(pp + (size_t)j * RC + c * 16, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
  }
  const int nv = dvp / 16;
  int i = 0;
  for (; i + PR <= rows; i += PR) {
    int c = 0;
    for (; c + PC <= nv; c += PC) PV_CASE(PR, PC);
    for (; c < nv; c++) PV_CASE(PR, 1);
  }
  for (; i < rows; i++) {
    int c = 0;
    for (; c + PC <= nv; c += PC) PV_CASE(1, PC);
    for (; c < nv; c++) PV_CASE(1, 1);
  }
}

#define HOOK_STAGE_DTYPE(dt) (dt) /* bf16 problems only: decode fp8 rows to bf16 */
#include "isa/item.inc"
#define DEC_BF16_DOTS 1 /* the decode layout's full tiles on vdpbf16ps (decode/dots_bf16.inc) */
#define XATTN_LANES_BF16 1 /* the lanes span on bf16 pairs (decode/lanes_bf16.inc) */
#include "decode/decode.inc"

XATTN_ISA_KERNELS(avx512bf16);
