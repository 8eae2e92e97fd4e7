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
/* the decode block's score blocks: 3 keys x 4 rows = 12 accumulators of 16
 * registers (the q rows are the FMAs' memory operands; the tile's last 4 keys
 * as two blocks of 2). 2 keys x 4 rows are 8 chains of 4-cycle FMAs: exactly
 * 2 FMAs a cycle, no slack. With v_sum8 and the 4-row softmax the
 * L1-resident block ran 1.10-1.13x faster on the Zen 3 (bench/README.md "the
 * AVX2 decode block's reductions") */
#define DEC_KB 3
/* its score loop unrolled 4 e steps: fewer loop and prefetch-test operations
 * per FMA (that loop alone in L1: f32 1.10x, bf16 0.95-1.03x) */
#define DEC_E_UNROLL 4
#include "decode/decode.inc"

XATTN_ISA_KERNELS(avx2);
