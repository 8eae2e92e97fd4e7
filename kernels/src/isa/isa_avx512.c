/* AVX-512F/BW/VL kernels: f32 compute for every dtype (bf16 and f16 tiles are
 * widened to f32 while packing). Compiled with -mavx512f -mavx512bw -mavx512vl
 * -mfma -mf16c; only called after cpu.c checked the CPU. */
#include "xattn/xattn.h"
#include "internal/kernel.h"
#include "xattn_variant_list.h"
#include "isa/simd_avx512.h"

#ifndef XATTN_AVX512_BLOCKS /* overridable for microkernel experiments */
#define RC 64 /* rows per chunk: 4 vectors, the QK block's width */
#define KR 6  /* QK block: 6 keys x 4 row vectors = 24 accumulators */
#define KC 4
#define PR 6  /* PV block: 6 rows x 4 dv vectors = 24 accumulators */
#define PC 4
#endif
#include "isa/kernels_f32.inc"
#include "isa/item.inc"
#include "decode/decode.inc"

XATTN_ISA_KERNELS(avx512);
