/* xattn config header — written by xattn-tune (docs/formats.md §4 format).
 *
 * machine: intel-xeon-processor-2c-85196785
 * cpu model: Intel(R) Xeon(R) Processor @ 2.80GHz
 * topology: 1 package, 1 numa, 1 l3 (48MB), 2 cores, 2 pus; caches L1d 48 KiB, L2 1280 KiB, L3 49152 KiB
 * compiler: GNU 12.2.0
 * flags:  -O3 -DNDEBUG
 * commit: cb5c67cc533a
 * date: 2026-12-06T05:36:16Z
 * strategy: halving, 9 reps to judge, eta 3, best 3 re-measured interleaved, 15+ interleaved reps vs the defaults, threshold 3%; 6609 timed reps in 223s
 * inputs: suites default.json fnv1a64:dd7efb03bc140b8f; kernel digest sha256:33c7028f39d29c9993067732aeebe2e6248a4366d50d9494e27f39071ebe5bd3
 * timing: warm: calls back to back, the problem left in the caches by the call before
 * base header: kernels/config/xattn_config_default.h
 * speedup over the defaults: geomean 1.067x over 14 classes (2 tuned, the rest kept at the defaults)
 *
 * per class (speedup = median default / median tuned, interleaved; 95% paired bootstrap CI):
 *   avx512/f32/d128/dv128/causal/e3/p0#238cbb8933186fa2: kept the defaults (64x64/gqa/dynamic/tall): no better config found: best 0.981x (95% CI 0.961-1.000), needs >= 1.03x and CI above 1
 *   avx512/bf16/d128/dv128/causal/e3/p0#d7320e8b7cc1ec6f: kept the defaults (64x64/gqa/dynamic/tall): no better config found: the defaults beat the 3 finalists (median 11.7 ms vs best finalist 12.4 ms)
 *   avx512/f32/d128/dv128/causal/e4/p0#35d2a875b30b5023: kept the defaults (64x64/gqa/dynamic/tall): no better config found: the defaults beat the 3 finalists (median 44.3 ms vs best finalist 46.6 ms)
 *   avx512/bf16/d128/dv128/causal/e4/p0#8f78eb036fdf9762: kept the defaults (64x64/gqa/dynamic/tall): no better config found: the defaults beat the 3 finalists (median 48.6 ms vs best finalist 48.9 ms)
 *   avx512/f32/d128/dv128/bidirectional/e3/p0#1038f4ff9cdd5c56: kept the defaults (64x64/gqa/dynamic/tall): no better config found: best 0.975x (95% CI 0.966-0.990), needs >= 1.03x and CI above 1
 *   avx512/bf16/d128/dv128/bidirectional/e3/p0#a724377117c35af7: kept the defaults (64x64/gqa/dynamic/tall): no better config found: best 0.974x (95% CI 0.931-1.014), needs >= 1.03x and CI above 1
 *   avx512/f32/d128/dv128/causal/e2/p2#f561c1ae01a091ea: 1.897x [1.886, 2.019] 64x128/kvsplit/static/t2/compact (default 64x64/decode/static/tall/lanes>=16/fp8lanes>=32)
 *   avx512/bf16/d128/dv128/causal/e2/p2#83eb5ff14f96ed6b: kept the defaults (64x64/kvsplit/static/tall): no better config found: best 0.732x (95% CI 0.711-1.018), needs >= 1.03x and CI above 1
 *   avx512/f32/d128/dv128/causal/e3/p2#1d6879d797f1fdc0: kept the defaults (64x64/gqa/dynamic/tall): no better config found: best 1.010x (95% CI 1.000-1.024), needs >= 1.03x and CI above 1
 *   avx512/bf16/d128/dv128/causal/e3/p2#70c945a1ec2c3ef1: kept the defaults (64x64/gqa/dynamic/tall): no better config found: best 1.010x (95% CI 0.998-1.014), needs >= 1.03x and CI above 1
 *   avx512/f32/d128/dv128/tree/e2/p2#c4196e87ae380709: 1.314x [1.066, 1.446] 16x128/gqa/dynamic/t2/compact (default 64x64/decode/static/tall/lanes>=16/fp8lanes>=32)
 *   avx512/bf16/d128/dv128/tree/e2/p2#22d72245495202d0: kept the defaults (64x64/kvsplit/static/tall): no better config found: the defaults beat the 3 finalists (median 11 ms vs best finalist 11 ms)
 *   avx512/f32/d128/dv128/causal/e0/p2#de4bef0b37e1bb06: kept the defaults (64x64/decode/static/tall/lanes>=32/fp8lanes>=32): no better config found: best 1.002x (95% CI 0.995-1.019), needs >= 1.03x and CI above 1
 *   avx512/bf16/d128/dv128/causal/e0/p2#0dfb0f4ea6c5f88a: kept the defaults (64x64/decode/static/tall/lanes>=32/fp8lanes>=32): no better config found: best 0.932x (95% CI 0.868-1.050), needs >= 1.03x and CI above 1
 *
 * Rows: X(isa, dtype, d, dv, mode, extend_bucket, prefix_bucket,
 *          variant, layout, schedule, threads[, kv_splits, prefetch[, lanes_rows[, lanes_rows_fp8]]]);
 *          first * match wins, the last row matches everything. Build with -DXATTN_CONFIG_HEADER=<this file>.
 */
#ifndef XATTN_CONFIG_HEADER_INCLUDED
#define XATTN_CONFIG_HEADER_INCLUDED

/* extend buckets of this format: xattn_extend_bucket (docs/formats.md §4) */
#define XATTN_CONFIG_FORMAT 2

#define XATTN_CONFIG_PROVENANCE \
  "xattn-tune halving; machine: intel-xeon-processor-2c-85196785; cpu: Intel(R) Xeon(R) Processor @ 2.80GHz; compiler: GNU 12.2.0; commit: cb5c67cc533a; date: 2026-12-06T05:36:16Z; speedup: 1.067 (geomean, 2 of 14 classes tuned); inputs: 1 suite file(s) fnv1a64:08fe87073013dd24; kernels sha256:33c7028f39d29c99"

/* the CPU class this header was tuned on (xattn-tune merge reads it):
   C(name, isa, vendor, family, model, L2 KiB per core, cores per L3) */
#define XATTN_CONFIG_TUNED_CPU(C) C("intel-6-106-l2_1280k-l3_2c-avx512", "avx512", "GenuineIntel", 6, 106, 1280, 2)

#define XATTN_CONFIG_CLASSES(X) \
  /* 1.897x over the defaults (95% CI 1.886-2.019, 15 interleaved reps; placement compact) */ \
  X("avx512", "f32", 128, 128, "causal", 2, 2, "64x128", "kvsplit", "static", 0, 0, 0, 16, 32) \
  /* 1.314x over the defaults (95% CI 1.066-1.446, 15 interleaved reps; placement compact) */ \
  X("avx512", "f32", 128, 128, "tree", 2, 2, "16x128", "gqa", "dynamic", 0, 0, 0, 16, 32) \
  /* rows of the base header */ \
  X("amx", "bf16", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 64, 64) \
  X("avx512bf16", "bf16", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx2", "*", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("*", "*", -1, -1, "*", 0, -1, "64x64", "decode", "static", 0, 0, 0, 32, 32) \
  X("amx", "bf16", -1, -1, "*", 1, 2, "64x64", "lanes", "static", 0) \
  X("amx", "bf16", -1, -1, "*", 1, 3, "64x64", "lanes", "static", 0) \
  X("avx512bf16", "bf16", -1, -1, "*", 1, 2, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx512bf16", "bf16", -1, -1, "*", 1, 3, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("*", "*", -1, -1, "*", 1, 2, "64x64", "decode", "static", 0, 0, 0, 32, 32) \
  X("*", "*", -1, -1, "*", 1, 3, "64x64", "decode", "static", 0, 0, 0, 32, 32) \
  X("avx512bf16", "bf16", -1, -1, "*", 2, 2, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx512bf16", "bf16", -1, -1, "*", 2, 3, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx512", "f32", -1, -1, "*", 2, 2, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("avx512", "f32", -1, -1, "*", 2, 3, "64x64", "decode", "static", 0, 0, 0, 16, 32) \
  X("amx", "bf16", -1, -1, "*", -1, -1, "128x256", "gqa", "dynamic", 0) \
  X("*", "*", -1, -1, "*", 2, 2, "64x64", "kvsplit", "static", 0) \
  X("*", "*", -1, -1, "*", 2, 3, "64x64", "kvsplit", "static", 0) \
  X("*", "*", -1, -1, "*", -1, -1, "64x64", "gqa", "dynamic", 0)

#endif
