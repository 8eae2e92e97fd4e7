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
/* the decode block's near prefetch, 2 key blocks (4 keys) ahead (f32 rows):
 * on the Zen 3 1.04-1.20x on the f32 decode rows from DRAM
 * (bench/README.md "the near prefetch") */
#define DEC_NEAR_PF 2
#include "decode/decode.inc"

XATTN_ISA_KERNELS(avx2);
