/* Portable C kernels (any CPU): the f32 kernel template with the generic
 * vectors of simd_scalar.h. */
#include "xattn/xattn.h"
#include "internal/kernel.h"
#include "xattn_variant_list.h"
#include "isa/simd_scalar.h"

#define RC 16 /* rows per chunk */
#define KR 2  /* QK block: keys */
#define KC 4  /* QK block: row vectors */
#define PR 2  /* PV block: rows */
#define PC 4  /* PV block: dv vectors */
#include "isa/kernels_f32.inc"
#include "isa/item.inc"
#include "decode/decode.inc"

XATTN_ISA_KERNELS(scalar);
