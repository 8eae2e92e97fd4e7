/* Workload suites -> workload classes (docs/formats.md §4): every (workload, dtype) of
 * the suites lands in the class of its ISA, dtype, D, DV, mode and extend /
 * prefix buckets (xattn_extend_bucket / xattn_prefix_bucket: the library's
 * bounds, never re-written here). Suites are read by bench's parser. */
#ifndef TUNE_CLASSES_H
#define TUNE_CLASSES_H

#include "tune_space.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/workload.h"

#define TUNE_MAX_SUITES 16

typedef struct tune_member {
  const xb_workload *w;
  xattn_dtype dtype;
  const char *suite;
} tune_member;

typedef struct tune_class_set {
  int n;
  tune_class *classes;
  tune_member **members; /* [n][n_members[i]] */
  int *n_members;
  int n_suites;
  xb_suite *suites[TUNE_MAX_SUITES];
  char inputs[1024];     /* "default.json fnv1a64:0123..., ..." */
  char inputs_digest[40]; /* one digest over all suite files, no names */
} tune_class_set;

/* Loads the suites and groups their workloads; only classes whose key
 * contains `only` (if non-NULL) are kept. 0, or -1 with one line in err. */
int tune_classes_load(tune_class_set *cs, const char *const *suites, int n_suites, const char *only,
                      char *err, size_t errn);
void tune_classes_free(tune_class_set *cs);

#endif
