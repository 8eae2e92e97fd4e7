/* xattn config header — hand-written default (docs/formats.md §4 format).
 *
 * The kernel build includes exactly one header of this format (CMake option
 * XATTN_CONFIG_HEADER; this file by default). xattn-tune writes the same format
 * with measured choices and full provenance.
 *
 * XATTN_CONFIG_FORMAT 2 says which extend buckets the rows use (a header
 * without it is format 1: <= 64, <= 512, <= 2048, more).
 * XATTN_CONFIG_CLASSES(X) lists rows
 *   X(isa, dtype, d, dv, mode, extend_bucket, prefix_bucket,
 *     variant, layout, schedule, threads[, kv_splits, prefetch[, lanes_rows[, lanes_rows_fp8[, prefetch_level]]]])
 * matched top to bottom against a call's class (see xattn_extend_bucket /
 * xattn_prefix_bucket in xattn.h); "*" and -1 match anything; threads 0 means
 * all available. The first matching row wins, so specific rows come first and
 * the last row must match everything.
 */
#ifndef XATTN_CONFIG_HEADER_INCLUDED
#define XATTN_CONFIG_HEADER_INCLUDED

/* extend buckets of format 2: <= 1, <= 4, <= 64, <= 512, <= 2048, more */
#define XATTN_CONFIG_FORMAT 2

#define XATTN_CONFIG_PROVENANCE \
  "hand-written default; not tuned; machine: none; compiler: any; commit: none; date: none; speedup: 1.00; inputs: none"

#define XATTN_CONFIG_CLASSES(X)                                                        \
  /* a decode step (E = 1): the few-rows path reads each K/V row once for all  \
     the query heads of its group (bench/README.md "The memory-bound half");    \
     large groups (lanes_rows: E x H_Q / H_KV rows per KV group) run the lanes  \
     tile instead: AVX2 from 16 (1.13-1.24x), f32 / f16 / bf16 on AVX-512 from  \
     32 (1.06-1.13x; 16 rows tie or lose); bench/README.md "Large query groups". \
     bf16 on AMX: decode's tile block takes up to 16 rows per product, so       \
     decode beats lanes at 8 rows (1.06-1.16x) and MQA's 32 (1.20-1.34x), bf16, \
     e4m3fn and e5m2 caches alike (bench/README.md "the decode tile block on up \
     to 16 rows"): lanes from 64. The last column, lanes_rows_fp8, is the same  \
     for an fp8 cache: the other tiles lose at 16 rows (decode / lanes          \
     0.70-1.13 on AVX2, 0.72-0.93 bf16 on avx512bf16) and win at MQA's 32       \
     (1.04-1.61x); bench/README.md "the lanes threshold of fp8 caches" */       \
  X("amx", "bf16", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 64, 64)    \
  /* bf16 on avx512bf16 (no AMX: Zen 4, where vdpbf16ps runs at twice the f32 \
     FMA rate): the lanes tile on bf16 pairs from 16 rows (B 8, P 4096, E 4 x  \
     4 heads: 1.34x decode; 8 rows: 0.80x; MQA's 32: 1.83x); bench/README.md  \
     "the lanes tile on bf16 pairs" */                                         \
  X("avx512bf16", "bf16", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx2", "*", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 16, 32)          \
  X("*", "*", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 32, 32)              \
  /* 2-4 new tokens on a long prefix (speculative drafts): still bound by the    \
     gathered K/V rows, so a few-rows layout: lanes for bf16 on AMX tiles,       \
     decode elsewhere; 1.06-2.4x the flash rows named here before on every      \
     shape measured (reference, MQA, MHA, D 64, D 256; P 8192, B 1 and 8,        \
     E 2 and 4; bench/README.md "Few rows: the extend buckets"). E 8-64 mixes    \
     wins and losses of lanes on the Xeon (flash rows below, after Zen 4's).    \
     The lanes columns as for E = 1 */                                           \
  X("amx", "bf16", -1, -1, "*", 1, 2, "64x64", "lanes", "static", 0)                   \
  X("amx", "bf16", -1, -1, "*", 1, 3, "64x64", "lanes", "static", 0)                   \
  X("avx512bf16", "bf16", -1, -1, "*", 1, 2, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx512bf16", "bf16", -1, -1, "*", 1, 3, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("*", "*", -1, -1, "*", 1, 2, "64x64", "decode", "static", 0, 0, 0, 32, 32)              \
  X("*", "*", -1, -1, "*", 1, 3, "64x64", "decode", "static", 0, 0, 0, 32, 32)              \
  /* 5-64 new tokens on a long prefix, bf16 on avx512bf16 (no AMX: Zen 4) and f32   \
     on AVX-512: the lanes tile from 16 rows per KV group (fp8 caches from 32, as   \
     for E <= 4), decode below (MHA at E 8: 1.4-1.5x lanes). Zen 4, P 8192, B 1 /   \
     8, E 8-64, 3 rounds, kvsplit 64x64 (the row before) / lanes: reference shape   \
     bf16 1.13-1.53x at B 8, at B 1 1.44x (E 8) to 0.83-0.95x (E 64); f32           \
     1.11-1.91x at B 8, at B 1 1.59x to 0.97x; MQA 0.78-1.47x (loses at B 1 from    \
     E 32); MHA 1.06-2.6x; e4m3fn caches 1.13-3.5x; bench/README.md "the E 5-64     \
     bucket on Zen 4". The Xeon's older f32 figures (bench/README.md "the lanes     \
     layout") lost from E 16 at B 1 (0.73-0.92x): f32 there is not re-measured.    \
     f32 without software prefetch (prefetch -1): on Ice Lake (session 24, 3      \
     interleaved rounds, auto / off time) the next span's rows asked for in a     \
     burst stall the lanes tile's loads: reference shape E 8-16 1.09-1.38x        \
     faster without, D 256 1.32x, MHA E 32 1.49x, E 32-64 and MQA 0.88-1.07x;   \
     f32 queries on an fp8 cache lose 0-11 % (128-byte rows: the hardware         \
     prefetchers follow them less). Zen 4 not re-measured; bench/README.md        \
     "the lanes tile's prefetch on Ice Lake" */                                   \
  X("avx512bf16", "bf16", -1, -1, "*", 2, 2, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx512bf16", "bf16", -1, -1, "*", 2, 3, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx512", "f32", -1, -1, "*", 2, 2, "64x64", "decode", "static", 0, 0, -1, 16, 32) \
  X("avx512", "f32", -1, -1, "*", 2, 3, "64x64", "decode", "static", 0, 0, -1, 16, 32) \
  /* bf16 on AMX tiles: tile products are cheap, the softmax is not, so long key   \
     tiles win; since masked tiles mask only where rows end, 128x256 beats 64x512 \
     (targets suite, 2 threads, 3 rounds: causal 2048 1.09x, 4096 1.06x, prefix  \
     mix 1.04x, chat 1.19x, bidirectional 16x256 1.00x; kernels/README.md) */     \
  X("amx", "bf16", -1, -1, "*", -1, -1, "128x256", "gqa", "dynamic", 0)              \
  /* short extends on long prefixes: every KV head's 64 x heads rows share each   \
     key tile; kvsplit only cuts key ranges when there are fewer items than       \
     4 per thread (a single request on few KV heads), so it costs nothing else   \
     (64x64 measured ~1.15x 16x256 at E=64, P=4096) */                            \
  X("*", "*", -1, -1, "*", 2, 2, "64x64", "kvsplit", "static", 0)                      \
  X("*", "*", -1, -1, "*", 2, 3, "64x64", "kvsplit", "static", 0)                      \
  /* everything else: GQA-grouped work items, dynamic schedule balances triangles */  \
  X("*", "*", -1, -1, "*", -1, -1, "64x64", "gqa", "dynamic", 0)

#endif
