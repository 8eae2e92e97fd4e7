/* xattn_bench/mask.h — docs/contract.md §2 written out directly, one (query, key) pair at
 * a time: the brute-force count that tests xattn_visible_pairs and the mask
 * the BLAS baseline applies. Deliberately simple, not fast.
 */
#ifndef XATTN_BENCH_MASK_H
#define XATTN_BENCH_MASK_H

#include <stdint.h>

#include "xattn/xattn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of key positions of request b: S_b = P_b + E_b, or enc_len_b in cross mode. */
int32_t xb_key_count(const xattn_problem *p, int32_t b);
/* 1 if extend query i of request b sees key position j (0 <= j < xb_key_count). */
int xb_key_visible(const xattn_problem *p, int32_t b, int32_t i, int32_t j);
/* Visible keys of one query row: the smallest range [*lo, *hi) holding every
 * visible key (empty: *lo == *hi). Tree mode: the range, holes decided by
 * xb_key_visible. */
void xb_visible_range(const xattn_problem *p, int32_t b, int32_t i, int32_t *lo, int32_t *hi);
/* Sum over requests, queries and keys of xb_key_visible: V of docs/contract.md §5. */
int64_t xb_brute_visible_pairs(const xattn_problem *p);

#ifdef __cplusplus
}
#endif
#endif
