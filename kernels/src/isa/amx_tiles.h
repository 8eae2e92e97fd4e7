/* The AMX tile configuration the kernels (isa_amx.c) and the AMX peak probe
 * (bench/src/peak.c) both use: palette 1, tiles 0-7 all 16 rows x 64 bytes
 * (0-3: 16x16 f32 accumulators, 4-5: A, 6-7: B operands of TDPBF16PS).
 * Plain C: the caller loads it with _tile_loadconfig in code built for AMX. */
#ifndef XATTN_ISA_AMX_TILES_H
#define XATTN_ISA_AMX_TILES_H

#include <stdint.h>
#include <string.h>

typedef struct xattn_amx_tile_config {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} xattn_amx_tile_config;
_Static_assert(sizeof(xattn_amx_tile_config) == 64, "LDTILECFG reads a 64-byte block");

static inline void xattn_amx_tiles_16x64(xattn_amx_tile_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->palette = 1;
  for (int t = 0; t < 8; t++) {
    cfg->colsb[t] = 64;
    cfg->rows[t] = 16;
  }
  /* GCC 12 does not see ldtilecfg read the block: without this it may drop
   * the stores above as dead and the load faults (#GP on garbage) */
  __asm__ volatile("" : : "r"(cfg) : "memory");
}

#endif
