/* Test problems: seeded random batches built around an xattn_problem, with the
 * traps every differential test wants armed:
 *  - padding between heads and tokens of every input tensor, rows between
 *    requests (gapped extend_start), unused KV-pool slots and unused
 *    req_to_token entries all hold NaN (or point at a NaN slot), so a kernel
 *    that reads anything it should not gets a NaN in its answer;
 *  - the output buffer has guard zones, padding and gap rows filled with a
 *    sentinel byte, checked untouched after every run;
 *  - slots are shuffled and req_index is a non-identity permutation.
 * tp_check() compares the written rows with the fp64 reference under the
 * tolerances of docs/contract.md §3 and reports the worst element.
 */
#ifndef XATTN_TESTS_TPROBLEM_H
#define XATTN_TESTS_TPROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "xattn/xattn.h"

#define TP_MAX_BATCH 8

/* The shape of a batch: everything except dtype and mask. */
typedef struct tp_shape {
  const char *name;
  int batch;
  int32_t prefix[TP_MAX_BATCH], extend[TP_MAX_BATCH], encoder[TP_MAX_BATCH];
  int hq, hkv, d, dv;
  int pad_head;   /* extra elements after each head's vector (head stride = D + pad) */
  int pad_token;  /* extra elements after each token's heads */
  int idx64;      /* req_to_token is int64 */
  int gapped;     /* explicit extend_start with unused rows between requests */
  float scale;    /* 0: 1/sqrt(D) */
  float cap;      /* logit cap, 0 = off */
  int sinks;
  double tree_density; /* tree mode: probability an off-diagonal extend key is visible */
} tp_shape;

/* The mask and storage of a problem. */
typedef struct tp_mask {
  xattn_dtype dtype;
  xattn_mode mode;
  xattn_align align;
  int wl, wr;
  /* KV cache storage (zero: the slot table of SGLang) */
  int page_size;                   /* > 1: paged block table */
  xattn_cache_layout cache_layout; /* token-major or head-major blocks */
  int start_cols;                  /* requests' keys start at columns 0..4 of their table row */
  xattn_dtype kv8;                 /* 0: the cache holds dtype; XATTN_E4M3FN / XATTN_E5M2: fp8 with scales */
  int kv_tensor_scales;            /* fp8: the tensor scales only (no per-token-per-head arrays) */
} tp_mask;

typedef struct tproblem {
  xattn_problem p;
  tp_shape shape;
  tp_mask mask;
  uint64_t seed;
  /* storage */
  void *q, *k_ext, *v_ext, *k_cache, *v_cache, *table;
  int32_t *prefix, *extend, *encoder, *start;
  int64_t *req_index, *start_col;
  float *kv_scales;       /* fp8 caches: k_scales then v_scales */
  float *sinks;
  uint8_t *tree;
  unsigned char *o_buf;   /* guard + o + guard */
  size_t o_bytes, o_guard_bytes;
  uint8_t *row_written;   /* [T]: row belongs to some request */
  double *ref;            /* dense [T, H_Q, DV] reference, after tp_reference() */
  int planted;            /* NaN/Inf values tp_plant_nonfinite() put into used rows */
} tproblem;

/* The sentinel byte the output buffer is filled with: 0x7f7f7f7f is 3.4e38 in
 * f32 and bf16 and NaN in f16, so an element a kernel forgets to write never
 * passes the tolerance check. */
#define TP_SENTINEL 0x7f

/* Builds the problem (seeded); returns 0 or -1 (and prints why). */
int tp_build(tproblem *tp, const tp_shape *s, tp_mask m, uint64_t seed);
void tp_free(tproblem *tp);
/* Computes tp->ref with xattn_reference(); returns its status. */
xattn_status tp_reference(tproblem *tp);
/* V of docs/contract.md §5 counted pair by pair straight from the docs/contract.md §2 table (an
 * independent check of xattn_visible_pairs). */
int64_t tp_count_visible(const tproblem *tp);
/* Plants NaN and +-Inf in rows of q, k and v that requests use, so that every
 * mode has them both where a query may look and where it may not (the last key
 * of each request, which causal masks for all but the last query, and random
 * keys and queries). Call before tp_reference(). Returns the number planted. */
int tp_plant_nonfinite(tproblem *tp, uint64_t seed);
/* Sets element (row, head, d) of tensor view t (storage buf) to x in the problem's dtype. */
void tp_set(tproblem *tp, void *buf, const xattn_tensor *t, int64_t row, int head, int d, float x);
/* Fills the whole output buffer (guards, padding, rows) with TP_SENTINEL. */
void tp_reset_output(tproblem *tp);

/* Value of output element (t, h, d) as a double. */
double tp_out(const tproblem *tp, int64_t t, int h, int d);

typedef struct tp_result {
  int64_t checked, bad, nonfinite, overwritten;
  double worst_ratio; /* max over elements of |o - ref| / (atol + rtol |ref|) */
  double max_abs;     /* max |o - ref| */
  int64_t wt, wh, wd; /* worst element */
  double got, want;
  int64_t ow_offset;  /* first overwritten byte outside the written elements */
} tp_result;

/* Compares every written element with tp->ref and checks that no byte outside
 * them changed. ok = bad == 0 && overwritten == 0. A finite reference element
 * must be matched within tolerance (so NaN or Inf there is bad); where the
 * reference is NaN the output must be NaN, where it is +-Inf the output must be
 * the same infinity or NaN (docs/contract.md: a weight that underflows in f32
 * or bf16 but not in fp64 turns w x Inf into 0 x Inf). */
tp_result tp_check(const tproblem *tp);
int tp_ok(const tp_result *r);
void tp_tolerance(xattn_dtype t, double *atol, double *rtol);

/* "shape=A mode=causal align=bottom_right window=(3,2) dtype=bf16 seed=7" */
void tp_describe(const tproblem *tp, char *buf, size_t len);
/* "2 of 640 bad, 0 non-finite, 0 overwritten; worst [t=3 h=1 d=7] got .. want .. (ratio ..)" */
void tp_describe_result(const tp_result *r, char *buf, size_t len);

/* ---- run configurations -------------------------------------------------- */
typedef struct tp_exec {
  const char *isa, *variant, *layout;
  int threads;
  xattn_schedule schedule;
  int kv_splits;
  int prefetch; /* decode layout */
  int prefetch_level; /* decode layout: 0 (header), 1 (L1), 2 (L2) */
} tp_exec;

typedef enum tp_level {
  TP_LEVEL_FULL = 0,    /* isa x variant x layout(x kv_splits) x threads x schedule */
  TP_LEVEL_REDUCED = 1, /* isa x variant x layout(x kv_splits); threads/schedule rotate */
  TP_LEVEL_SMOKE = 2,   /* each variant, layout(x kv_splits) and isa at least once; the rest rotate */
  TP_LEVEL_LAYOUTS = 3, /* isa x layout(x kv_splits); variant, threads and schedule rotate */
  TP_LEVEL_AUTO = 4     /* isa x threads with the config header's variant and layout (NULL: what
                           resolution picks, e.g. lanes for large query groups); schedule rotates */
} tp_level;

/* Fills *out (malloc'd) with the run configurations of a level; returns the count. */
int tp_exec_list(tp_level level, tp_exec **out);
void tp_exec_describe(const tp_exec *e, char *buf, size_t len);
void tp_exec_options(const tp_exec *e, xattn_options *o);
/* The BMxBN variant a test asks for when this build compiled it, else the compiled
 * one nearest to it (xattn_variant_nearest, as for a config row): a build's
 * XATTN_VARIANTS may leave any variant out, so a test never names one bare. */
const char *tp_compiled_variant(const char *want);

/* Runs xattn_extend_attention under e on a reset output and checks it.
 * Returns the check (status != OK is reported as bad = -1). */
tp_result tp_run_check(tproblem *tp, const tp_exec *e, xattn_status *status);

/* With XATTN_TEST_DUMP=DIR set, writes the problem as a case folder
 * DIR/<n>_<mode>_<dtype> (docs/formats.md §1, for `xattn run`) and prints where; no-op
 * otherwise. At most 20 dumps per process. */
void tp_dump(const tproblem *tp);

/* Small deterministic PRNG (splitmix64). */
uint64_t tp_rand(uint64_t *state);
double tp_uniform(uint64_t *state); /* [-1, 1) */

#endif
