/* xattn config header (fixture for tune/tests/check_release_check.sh).
 * Rows: X(isa, dtype, d, dv, mode, extend_bucket, prefix_bucket, ...) */
#ifndef XATTN_CONFIG_HEADER_INCLUDED
#define XATTN_CONFIG_HEADER_INCLUDED

#define XATTN_CONFIG_PROVENANCE \
  "xattn-tune halving; machine: fixture; commit: 0123456789ab; speedup: 1.145 (geomean, 2 of 3 classes tuned); inputs: 1 suite file(s) fnv1a64:0123"

#define XATTN_CONFIG_CLASSES(X) \
  /* 1.090x over the defaults (95% CI 1.019-1.129) */ \
  X("amx", "f32", 128, 128, "causal", 1, 2, "128x32", "gqa", "dynamic", 0) \
  /* 1.200x over the defaults (95% CI 1.100-1.300) */ \
  X("avx512", "f32", 64, 64, "causal", 0, 0, "16x256", "kvsplit", "static", 0) \
  /* rows of the base header */ \
  X("amx", "bf16", -1, -1, "*", -1, -1, "64x512", "gqa", "dynamic", 0) \
  X("*", "*", -1, -1, "*", -1, -1, "64x64", "gqa", "dynamic", 0)

#endif
