/* xattn_bench/workload.h — workload suites read from data files.
 *
 * A suite is a JSON file bench/suites/<name>.json (format: bench/suites/README.md).
 * Each workload is a batch of (prefix, extend) pairs with heads, head dims,
 * mode, window, cap, sinks and tree density; a suite's "shapes" multiply its
 * workloads. Errors are one line naming file, field and reason.
 */
#ifndef XATTN_BENCH_WORKLOAD_H
#define XATTN_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "xattn/xattn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xb_workload {
  char name[128];        /* unique in the suite, e.g. "e2048.ref"; no '/' or ':' */
  int32_t batch;         /* B >= 1 */
  int32_t *prefix_lens;  /* [B] */
  int32_t *extend_lens;  /* [B] */
  int32_t *encoder_lens; /* [B], cross mode only, else NULL */
  int32_t heads_q, heads_kv, head_dim, head_dim_v;
  xattn_mode mode;
  xattn_align align;
  int32_t window_left, window_right;
  float logit_cap;
  int has_sinks;
  double tree_density;   /* tree mode: probability an extend key is visible (ancestors) */
  int32_t slot_run;      /* slot layout of the token table: XB_SLOTS_SHUFFLED (every prefix slot
                            drawn at random), XB_SLOTS_CONTIGUOUS (each request's prefix in
                            consecutive slots), or N > 0: runs of N consecutive slots (pages of a
                            paged allocator) in random order */
  int32_t page_size;     /* > 1: a paged block table of page_size tokens per block ("page_size") */
  xattn_cache_layout cache_layout; /* paged cache layout ("cache_layout") */
  xattn_dtype kv_cache;  /* XATTN_DTYPE_SAME, or XATTN_E4M3FN / XATTN_E5M2 ("kv_cache": fp8 caches) */
  int ndtypes;
  xattn_dtype dtypes[3]; /* dtypes to run (suite or workload "dtypes") */
  uint64_t seed;         /* data seed (suite "seed" unless overridden) */
} xb_workload;

typedef struct xb_suite {
  char name[128];        /* "suite" field, defaults to the file's stem */
  char path[1024];
  char description[512];
  int count;
  xb_workload *workloads;
} xb_suite;

/* Loads a suite by name (looked up as <dir>/<name>.json for each dir in
 * xb_suite_dirs()) or by path (anything containing '/' or ending in .json).
 * Returns NULL with one line "file: field: reason" in err. */
xb_suite *xb_suite_load(const char *name_or_path, char *err, size_t errlen);
/* Parses suite text (path is used in messages only). */
xb_suite *xb_suite_parse(const char *text, const char *path, char *err, size_t errlen);
void xb_suite_free(xb_suite *s);

/* Directories searched for suite names, ':'-separated: $XATTN_SUITES_DIR, then
 * the source tree's bench/suites, then <prefix>/share/xattn/suites. */
const char *xb_suite_dirs(void);
/* Writes the names of all suites found in xb_suite_dirs() into out, one per
 * line; returns the count. */
int xb_suite_list(char *out, size_t outlen);

#define XB_SLOTS_SHUFFLED 0
#define XB_SLOTS_CONTIGUOUS (-1)
#define XB_SLOT_RUN_MAX 65536
/* "shuffled", "contiguous", "runsN" <-> slot_run; parse returns 0 on success. */
int xb_slot_layout_parse(const char *name, int32_t *run);
const char *xb_slot_layout_name(int32_t run, char *buf, size_t len);

/* Sums and maxima of a workload's batch. */
int64_t xb_workload_tokens(const xb_workload *w);      /* T = sum E_b */
int64_t xb_workload_max_context(const xb_workload *w); /* max P_b + E_b (or enc_len) */
/* docs/contract.md §5 FLOP count from a visible-pair count. */
double xb_flops(const xb_workload *w, int64_t visible_pairs);

#ifdef __cplusplus
}
#endif
#endif
