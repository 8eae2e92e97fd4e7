/* xattn-bench's C side: its own flags, the rows it registers, running one
 * row, and the tables rows share (BLAS medians, peaks). The C++ file only
 * glues these to Google Benchmark. */
#ifndef XATTN_BENCH_RUN_H
#define XATTN_BENCH_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "xattn_bench/baseline.h"
#include "xattn_bench/memroof.h"
#include "xattn_bench/problem.h"
#include "xattn_bench/topology.h"
#include "xattn_bench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XB_MAX_LIST 64

typedef enum xb_impl { XB_IMPL_PEAK = 0, XB_IMPL_REFERENCE, XB_IMPL_BLAS, XB_IMPL_XATTN } xb_impl;

typedef struct xb_options {
  const char *suite;            /* --suite NAME|PATH (default "default") */
  int nvariants;                /* --variants 64x64,16x256 | auto (0 = auto) */
  const char *variants[XB_MAX_LIST];
  int nlayouts;                 /* --layouts flat,gqa,kvsplit | auto */
  const char *layouts[XB_MAX_LIST];
  int nisas;                    /* --isa avx512,avx2 | auto */
  const char *isas[XB_MAX_LIST];
  /* the run settings the tuner searches besides variant and layout (0 = not
     given: the rows keep the config header's choice and their names stay as
     before; given, each value is a row and its name gains the segment) */
  int nschedules;               /* --schedules static,dynamic | auto */
  xattn_schedule schedules[XB_MAX_LIST];
  int nsplits;                  /* --kv-splits auto,1,2,8 (0 = auto: header / library) */
  int splits[XB_MAX_LIST];
  int nprefetch;                /* --prefetch auto,off,16,64 (0 = auto, -1 = off, else tokens) */
  int prefetch[XB_MAX_LIST];
  int nlevels;                  /* --prefetch-level auto,l1,l2 (0 = auto: header / L2, 1 = L1, 2 = L2) */
  int levels[XB_MAX_LIST];
  const char *threads;          /* --threads 1,2 | auto */
  int nplacements;              /* --placement compact,scatter,... */
  xb_placement placements[8];
  int ndtypes;                  /* --dtypes f32,bf16 (0 = the suite's) */
  xattn_dtype dtypes[3];
  const char *workloads;        /* --workloads substring filter on workload names */
  uint64_t seed;                /* --seed (default 42) */
  int seed_given;
  const char *results_dir;      /* --results-dir DIR ("" or "none": don't write) */
  const char *label;            /* --label NAME (default: suite name) */
  int no_baseline;              /* --no-baseline */
  int no_peak;                  /* --no-peak */
  double reference_max_flops;   /* --reference-max-gflop X (0: no reference rows) */
  xb_blas_threading blas_threading; /* --blas-threading heads|gemm */
  int repetitions;              /* --repetitions N (default 5) */
  double roof_seconds;          /* --roof-seconds S: time spent on each memory roof (default 0.2) */
  double peak_seconds;          /* --peak-seconds S: length of one peak-probe run at start-up (default 0.02) */
  int check;                    /* --check: before timing, compare each xattn row's output with the
                                   fp64 reference (small calls) or the BLAS baseline (docs/contract.md §3 tolerances) */
  xb_cache_pages cache_pages;   /* --cache-pages default|huge (xb_set_cache_pages) */
  int flush_caches;             /* --flush-caches: the problem flushed from every cache level before each
                                   timed call and each gather-roof pass (xb_problem_flush) */
  int list_suites;              /* --list-suites */
  int resume;                   /* --resume: skip the rows earlier runs of this command measured (main) */
} xb_options;

/* Parses and removes xattn-bench's own flags from argv (the rest goes to
 * benchmark::Initialize). 0 ok, 1 help printed, -1 error (line in err). */
int xb_options_parse(xb_options *o, int *argc, char **argv, char *err, size_t errlen);
void xb_options_usage(const char *argv0);

typedef struct xb_row {
  char name[512];
  xb_impl impl;
  int workload;      /* index into the suite; -1 for peak */
  xattn_dtype dtype;
  const char *variant, *layout, *isa; /* NULL = resolved default */
  xattn_schedule schedule; /* XATTN_SCHED_AUTO = the config header's */
  int kv_splits, prefetch; /* xattn_options' values (0 = the config header's) */
  int prefetch_level;      /* the same: 0 = the header's, 1 = L1, 2 = L2 */
  int threads;
  int placement;     /* index into options.placements */
  char pair_key[256]; /* (workload, dtype, threads, placement): the BLAS table key */
  int checked;        /* --check done for this row */
} xb_row;

typedef struct xb_session {
  xb_options opt;
  xb_topology *topo;
  xb_suite *suite;
  int nthreads;
  int threads[XB_MAX_LIST];
  xb_row *rows;
  int nrows;
  /* peaks per (thread index, placement) */
  double peak_fp32[XB_MAX_LIST][8], peak_bf16[XB_MAX_LIST][8], peak_amx[XB_MAX_LIST][8];
  /* stream read roof per (thread index, placement), GB/s */
  double stream_gbps[XB_MAX_LIST][8];
  /* current problem (rows sharing it run consecutively) */
  xb_problem pb;
  int pb_valid, pb_workload, pb_threads, pb_placement;
  xb_must_read pb_must_read; /* what the current problem must read */
  xb_gather_roof pb_gather; /* its gather roof with the bound team (GB/s, winning strategy) */
  xattn_dtype pb_dtype;
  int bound_threads, bound_placement;
  /* progress */
  int progress_total, progress_done, progress_last_row;
  double progress_t0;
  char machine[256], commit_dir[64];
} xb_session;

/* Opens topology and suite, builds rows, measures peaks. 0 or -1 with err. */
int xb_session_open(xb_session *s, char *err, size_t errlen);
void xb_session_close(xb_session *s);

/* Makes row r runnable: binds the team, builds (or reuses) its problem, and
 * for xattn rows resolves names and checks the call is supported. 0 or -1. */
int xb_row_prepare(xb_session *s, int r, char *err, size_t errlen);
/* --flush-caches: the current problem out of every cache level (untimed, before a call). */
void xb_row_flush(const xb_session *s);
/* One timed call. 0 or -1 with err. */
int xb_row_call(xb_session *s, int r, char *err, size_t errlen);
/* Counters of row r given its seconds per call. */
typedef struct xb_counters {
  double gflops, tokens_per_s, pct_peak, speedup_vs_blas, flops, visible_pairs, input_bytes;
  /* memory side (not for peak rows): bytes the call must read (memroof.h), the
     rate at which it read them, and that rate against the gather roof */
  double bytes_must_read, gbps, pct_mem_roof, gather_roof_gbps, stream_roof_gbps;
  double gather_roof_tile, gather_roof_prefetch_kib, gather_roof_prefetch_l1; /* the strategy that set the gather roof */
  int has_speedup;
} xb_counters;
/* Records a BLAS row's measurement (iterations, seconds per call). */
void xb_blas_record(xb_session *s, int r, int64_t iterations, double seconds_per_call);
/* Fills counters for row r; for xattn rows the BLAS median comes from the
 * table (measured on demand when its row was filtered out). */
int xb_row_counters(xb_session *s, int r, double seconds_per_call, xb_counters *c, char *err, size_t errlen);

/* Progress line on stderr when row r starts: "[12/80] name eta 1m20s". */
void xb_progress(xb_session *s, int r);

/* Context keys (docs/formats.md §3): calls add(key, value, ctx) for each. */
void xb_context(xb_session *s, void (*add)(const char *key, const char *value, void *ctx), void *ctx);

/* likwid Marker API around kernel calls (no-ops without XATTN_LIKWID). */
void xb_likwid_init(void);
void xb_likwid_close(void);
void xb_likwid_begin(const char *region, int threads);
void xb_likwid_end(const char *region, int threads);
int xb_likwid_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
