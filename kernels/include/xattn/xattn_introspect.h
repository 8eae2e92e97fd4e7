/* xattn_introspect.h — what this build of libxattn has and how it resolves a
 * call: the ISA registry, the compiled variants and layouts, the config header
 * and its workload classes. The tuner, the benchmarks, `xattn info` and the
 * tests need these; a program that only computes attention does not. */
#ifndef XATTN_XATTN_INTROSPECT_H
#define XATTN_XATTN_INTROSPECT_H

#include "xattn/xattn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- what this build has -------------------------------------------------- */
/* Names are stable strings owned by the library. Counts are >= 1. */
XATTN_API int xattn_isa_count(void);
XATTN_API const char *xattn_isa_name(int i);    /* built ISA i, in preference order (best first) */
XATTN_API int xattn_isa_runnable(const char *isa); /* 1 if built and this CPU can run it */
XATTN_API const char *xattn_best_isa(void);     /* what NULL isa resolves to (honours XATTN_ISA env) */
/* The ISA whose kernels run a problem of this dtype when `isa` is asked for
 * (NULL: the best runnable): an ISA with bf16 code only (amx, avx512bf16) runs
 * f32/f16 with avx512. Config-header classes are keyed by this name. NULL if
 * `isa` is not built. */
XATTN_API const char *xattn_running_isa(const char *isa, xattn_dtype dtype);

XATTN_API int xattn_variant_count(void);
XATTN_API const char *xattn_variant_name(int i); /* "BMxBN" */
XATTN_API int xattn_layout_count(void);
XATTN_API const char *xattn_layout_name(int i);

/* The config header the build was compiled with: its path as given to CMake,
 * a one-line provenance summary, and the number of tuned classes it holds. */
XATTN_API const char *xattn_config_header_path(void);
XATTN_API const char *xattn_config_provenance(void);
XATTN_API int xattn_config_class_count(void);
XATTN_API int xattn_config_format(void); /* the compiled-in header's XATTN_CONFIG_FORMAT (1 when it has none) */

/* What a call with these options would run (after config lookup and ISA
 * resolution), without running it. Any out pointer may be NULL. */
XATTN_API xattn_status xattn_resolve(const xattn_problem *p, const xattn_options *opts,
                           const char **variant, const char **layout,
                           const char **isa, int *threads);

/* The decode / lanes layouts' prefetch distance in tokens when neither the
 * options nor the config header set one (prefetch 0, "auto"): the tokens that
 * hold ~64 KiB of K and V rows of every KV head in the cache's storage type,
 * from 1 to 256 (e.g. 16 for bf16 rows of 8 heads of D 128, 8 for f32). Reads
 * only heads_kv, head_dim, head_dim_v, dtype and cache_dtype; 1 for a shape
 * without them. */
XATTN_API int xattn_auto_prefetch_tokens(const xattn_problem *p);

/* ---- CPU classes (multi-CPU config headers; docs/formats.md) -------------
 * A header merged from the tuned headers of several machines (xattn-tune merge)
 * keys its rows by CPU class as well as by workload class. A CPU class holds
 * what tuned choices depend on between machines of one ISA: the vendor and
 * CPUID family/model (the microarchitecture: AMX, vdpbf16ps rate, L1), the L2
 * per core (which tiles stay in cache) and the cores per L3 (thread layouts). */
typedef struct xattn_cpu_class {
  char name[96];     /* "intel-6-143-l2_2048k-l3_2c-amx" (xattn_cpu_class_set_name) */
  char isa[16];      /* the best ISA this CPU runs */
  char vendor[16];   /* CPUID vendor string, "GenuineIntel" */
  int family, model; /* CPUID display family and model */
  int l2_kib;        /* L2 KiB per core; 0 unknown */
  int cores_per_l3;  /* cores sharing one L3; 0 unknown */
} xattn_cpu_class;
/* This CPU's class, from CPUID and the caches in sysfs; or, for tests only,
 * from XATTN_CPU_CLASS="vendor:family:model:l2_kib:cores_per_l3[:isa]", which
 * lets one host present itself as another machine. A malformed override is an
 * error (reason in xattn_last_error()). */
XATTN_API xattn_status xattn_cpu_class_get(xattn_cpu_class *out);
XATTN_API void xattn_cpu_class_set_name(xattn_cpu_class *c); /* c->name from the other fields */
/* The class of `classes` whose rows a CPU `self` uses: the exact match; else
 * the nearest one with the same ISA (same vendor, family, model first, then the
 * closest L2 per core and cores per L3); -1 when no class has its ISA. `why`
 * gets one line saying which and why. */
XATTN_API int xattn_cpu_class_nearest(const xattn_cpu_class *self, const xattn_cpu_class *classes, int n,
                            char *why, size_t whyn);
/* Which CPU class of the compiled-in config header this process uses (what
 * xattn_resolve and every call look up): *cls its name, "*" for a header
 * without CPU classes (its rows serve every CPU), "" when no class has this
 * CPU's ISA (the hand default rows serve); *why one line. Read once per process. */
XATTN_API xattn_status xattn_resolve_cpu_class(const char **cls, const char **why);
XATTN_API int xattn_config_cpu_class_count(void); /* CPU classes in the header; 0 for a one-machine header */

/* ---- workload classes (docs/formats.md §4) ------------------------------------------
 * The config header's table is keyed by ISA, dtype, D, DV, mode and two buckets
 * of the batch: the longest extend and the longest prefix. The bucket bounds
 * live here and nowhere else; the tuner and the kernels both call these. */
#define XATTN_EXTEND_BUCKETS 6 /* max E_b: <=1, <=4, <=64, <=512, <=2048, >2048 */
#define XATTN_PREFIX_BUCKETS 4 /* max P_b: 0, <=1024, <=8192, >8192 */
XATTN_API int xattn_extend_bucket(int64_t max_extend);
XATTN_API int xattn_prefix_bucket(int64_t max_prefix);
/* The config header format these buckets belong to (a header says
 * `#define XATTN_CONFIG_FORMAT 2`; one without it is format 1, whose extend
 * buckets were <=64, <=512, <=2048, >2048). */
#define XATTN_CONFIG_FORMAT_CURRENT 2
#define XATTN_EXTEND_BUCKETS_FORMAT1 4
/* The extend bucket of a header of `format` (1 or 2) that holds this
 * library's extend bucket `bucket`; -1 for an unknown format or bucket. */
XATTN_API int xattn_extend_bucket_in_format(int format, int bucket);

/* What a plan runs: the same answers as xattn_resolve gave when it was made.
 * Any out pointer may be NULL. */
XATTN_API void xattn_plan_describe(const xattn_plan *plan, const char **variant, const char **layout,
                                   const char **isa, int *threads);
/* The plan's key-range splits and prefetch distance as resolved from the
 * options, else the config header's row (0: auto; prefetch -1: no software
 * prefetch). Any out pointer may be NULL. */
XATTN_API void xattn_plan_run_settings(const xattn_plan *plan, int *kv_splits, int *prefetch);
/* How many (request, KV head) pairs the plan's runs pack K and V for once,
 * for all their query blocks and heads (kernels/README.md, "The AMX path"),
 * instead of per work item; and in how many waves the call-wide packing runs
 * (0: none). Pairs packed locally (by the thread that runs all of the pair's
 * items, just before them) count as packed but need no wave. */
XATTN_API int64_t xattn_plan_kv_packed_pairs(const xattn_plan *plan, int *waves);

#ifdef __cplusplus
}
#endif
#endif /* XATTN_XATTN_INTROSPECT_H */
