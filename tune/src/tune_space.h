/* The tuning space: workload classes (docs/formats.md §4) and the candidate configurations
 * tried for each of them, plus the named constraints that prune candidates
 * that cannot run or cannot be good (tune_prune.c, one table). */
#ifndef TUNE_SPACE_H
#define TUNE_SPACE_H

#include <stddef.h>
#include <stdint.h>

#define TUNE_NAME_MAX 32
#define TUNE_KEY_MAX 160
#define TUNE_MAX_AXIS 64

/* A workload class: the key of one config-header row, plus facts about the
 * class's workloads that constraints need (longest extend / prefix / keys). */
typedef struct tune_class {
  char isa[TUNE_NAME_MAX];
  char dtype[TUNE_NAME_MAX];
  int d, dv;
  char mode[TUNE_NAME_MAX];
  int extend_bucket, prefix_bucket;
  int64_t max_extend, max_prefix, max_keys; /* over the class's workloads */
  int heads_q, heads_kv;                    /* of its first workload (for the scratch estimate) */
  int n_workloads;
  char workloads_digest[17];                /* which workloads make up the class */
  char key[TUNE_KEY_MAX];                   /* "isa/dtype/dD/dvDV/mode/eE/pP#digest" */
} tune_class;

/* One configuration to run a class with. */
typedef struct tune_cand {
  char variant[TUNE_NAME_MAX]; /* "BMxBN" */
  int block_m, block_n;
  char layout[TUNE_NAME_MAX];
  char schedule[TUNE_NAME_MAX]; /* "static" / "dynamic" */
  int threads;
  char placement[TUNE_NAME_MAX];
  int kv_splits;                /* decode: key-range splits, 0 = auto */
  int prefetch;                 /* decode: prefetch distance in tokens, 0 = auto, -1 = off; flash: 0 or -1 */
  int prefetch_level;           /* few-rows layouts: 1 = that prefetch fills L1; 0 = the default (L2) */
  char key[TUNE_KEY_MAX];       /* "BMxBN/layout/schedule/tN/placement[/sS][/pfP][/pflL]" */
} tune_cand;

/* What can vary, as the library build and the machine offer it. */
typedef struct tune_axes {
  int n_variants;   const char *variants[TUNE_MAX_AXIS];
  int n_layouts;    const char *layouts[TUNE_MAX_AXIS];
  int n_schedules;  const char *schedules[TUNE_MAX_AXIS];
  int n_threads;    int threads[TUNE_MAX_AXIS];
  int n_placements; const char *placements[TUNE_MAX_AXIS];
  int n_splits;     int splits[TUNE_MAX_AXIS];   /* decode layout only */
  int n_prefetch;   int prefetch[TUNE_MAX_AXIS]; /* decode layout only */
  int prefetch_level[TUNE_MAX_AXIS];             /* paired with prefetch[]: 1 = into L1, 0 = default */
} tune_axes;

/* Machine facts the constraints read (from hwloc via bench in the real tool). */
typedef struct tune_machine {
  int cores;                 /* usable cores */
  int64_t l1d_bytes, l2_bytes, l3_bytes; /* per core for L1/L2; L3 shared */
  /* 1 if placement p gives a different core set than placement 0 at t threads */
  int (*placement_differs)(void *ctx, const char *placement, int threads);
  void *ctx;
} tune_machine;

void tune_class_make_key(tune_class *c);
void tune_cand_make_key(tune_cand *c);
/* Parses "BMxBN"; 0 on success. */
int tune_parse_variant(const char *v, int *bm, int *bn);

/* 1 for the few-rows layouts ("decode", "lanes"): no BLOCK_M x BLOCK_N, their
   own split-count and prefetch axes, a request's rows in one item. */
int tune_layout_few_rows(const char *layout);
/* 1 where a flash layout ("flat", "gqa", "kvsplit") of the class gets the
   prefetch axis {0 = auto, -1 = off}: 16-bit dtypes, E <= 64, P > 1024. */
int tune_flash_prefetch_axis(const tune_class *cls, const char *layout);

/* Every combination of the axes for a class, minus what the constraints prune.
 * Writes at most cap candidates into out; returns how many survived. Prune
 * counts accumulate into the constraint table (tune_prune_report). */
int tune_space_enumerate(const tune_class *cls, const tune_axes *axes,
                         const tune_machine *m, tune_cand *out, int cap);

#endif
