/* The hook contract of the kernel template (item.inc), shared by every ISA.
 *
 * An ISA file defines RC, KR, the vector macros (simd_<isa>.h) and these hooks
 * before it includes item.inc:
 *   size_t hook_qt_bytes(int d, int mp)     packed queries of mp rows
 *   size_t hook_kp_bytes(int bn, int d)     packed keys of a tile
 *   size_t hook_vp_bytes(int bn, int dvp)   packed values of a tile
 *   size_t hook_pp_bytes(int bn)            the ISA's own p buffer (0: none)
 *   void hook_pack_q(qt_chunk, srcs, nrows, d, dtype, scale2, tmp)
 *   void hook_pack_kv(kp, vp, kptr, vptr, n, d, dv, dvp, dtype)
 *   void hook_qk(kp, n, d, qt_chunk, nv, st, scale2)      scores of a chunk x tile
 *   void hook_pv(st, n, vp, dvp, rows, acc, alpha, pp, fresh, sa)
 *                       acc = acc * alpha + P V; fresh: acc holds nothing yet (the
 *                       chunk's first product), write acc = P V without reading it;
 *                       sa: the chunk's softmax arguments, for their hints
 *                       (prefetch_rows), free to ignore
 * and optionally
 *   void hook_softmax(const xattn_softmax_args *a)  with HOOK_SOFTMAX_CUSTOM
 *                       (default: item.inc's, for key-major scores)
 *   HOOK_ITEM_BEGIN() / HOOK_ITEM_END()              e.g. AMX tile configuration
 */
#ifndef XATTN_ISA_HOOKS_H
#define XATTN_ISA_HOOKS_H

#include <stdint.h>

/* Everything the online-softmax hook needs for one chunk of rows x one key
 * tile. Scores are in base 2; the hook masks them (only when !full), turns
 * them into p (in st, or in pp for ISAs that keep p in their own format) and
 * updates the running max m and sum l, leaving the rescale factor in alpha. */
typedef struct xattn_softmax_args {
  float *st;              /* scores of the tile, laid out as the ISA's hook_qk writes them */
  int n;                  /* keys in the tile */
  int nv;                 /* row vectors of the chunk (rows rounded up to VL) */
  int crows;              /* rows of the chunk */
  int full;               /* every row of the chunk sees every key: no masking */
  int32_t kpos0;          /* key position of the tile's first key */
  const int32_t *lo, *hi; /* per row: the visible key interval [lo, hi] */
  const uint8_t *vis;     /* tree tiles: vis[j * RC + r] = row r sees key j; else NULL */
  float cap2;             /* soft cap in base 2 (logit_cap * log2 e), 0 = off */
  float scale2;           /* scale * log2 e, for ISAs whose scores are not pre-scaled */
  float *m, *l, *alpha;   /* per row: running max, running sum, rescale factor */
  void *pp;               /* the ISA's p buffer (hook_pp_bytes), or unused */
  /* rows the softmax or the P V hook may ask the cache for while it works
     (the next chunk's queries, prefetch_n rows of prefetch_bytes), or NULL; a
     hint, free to ignore */
  const char *const *prefetch_rows;
  int prefetch_n, prefetch_bytes;
  /* this chunk's slice of the next key tile's packed K (i = 0) and V (1), for
     the hook to ask L2 for while it works: [span[i], span[i] + span_bytes[i]),
     or NULL; a hint, free to ignore */
  const char *span[2];
  int span_bytes[2];
} xattn_softmax_args;

#endif
