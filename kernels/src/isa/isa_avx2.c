/* AVX2 + FMA kernels (F16C for f16 tiles): the f32 kernel template with 8-lane vectors. */
#include "xattn/xattn.h"
#include "internal/kernel.h"
#include "xattn_variant_list.h"
#include "isa/simd_avx2.h"

#define RC 32 /* rows per chunk: 4 vectors */
#define KR 3  /* QK block: 3 keys x 4 row vectors = 12 accumulators (16 ymm) */
#define KC 4
#define PR 3  /* PV block: 3 rows x 4 dv vectors = 12 accumulators */
#define PC 4
#include "isa/kernels_f32.inc"
#include "isa/item.inc"
/* the decode block's near prefetch, 4 key blocks (12 keys) ahead (f32 rows;
 * with 16-key tiles, all of a tile's K rows are asked for during its first
 * key block). On the Zen 3, with 2-key blocks 2 ahead, 1.04-1.20x on the f32
 * decode rows from DRAM (bench/README.md "the near prefetch"); with 3-key
 * blocks, f32 B 8 x P 4096 E = 1 against main's 2-key block: 3 keys ahead
 * 0.86, 6 keys 0.93, 9 keys 0.97, 12 keys 1.01, against a two-binary floor
 * of ~0.95 ("the AVX2 decode block's reductions") */
#define DEC_NEAR_PF 4
/* the decode block's score loop unrolled 4 e steps: fewer loop and
 * prefetch-test operations per FMA (1.04-1.10x on the L1-resident block's
 * score loop) */
#define DEC_E_UNROLL 4
#include "decode/decode.inc"

XATTN_ISA_KERNELS(avx2);
