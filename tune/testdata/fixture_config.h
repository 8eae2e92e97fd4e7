/* A config header for tune.cli: rows with comments inside the macro, a
 * repeated variant, and a catch-all last (the format of
 * kernels/config/xattn_config_default.h). */
#ifndef XATTN_CONFIG_HEADER_INCLUDED
#define XATTN_CONFIG_HEADER_INCLUDED

#define XATTN_CONFIG_PROVENANCE \
  "fixture; not tuned"

#define XATTN_CONFIG_CLASSES(X)                                              \
  /* a comment that spans lines   \
     inside the macro */                                                     \
  X("avx512", "f32", 128, 128, "causal", 2, 0, "32x128", "flat", "static", 1) \
  X("*", "*", -1, -1, "*", 0, 2, "16x256", "kvsplit", "static", 0)           \
  X("*", "*", -1, -1, "*", 0, 3, "16x256", "kvsplit", "static", 0)           \
  X("*", "*", -1, -1, "*", -1, -1, "64x64", "gqa", "dynamic", 0)

#endif
