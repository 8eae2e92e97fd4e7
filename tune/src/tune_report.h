/* The Markdown reports and the header's provenance text. */
#ifndef TUNE_REPORT_H
#define TUNE_REPORT_H

#include <stdio.h>
#include "xattn/xattn_introspect.h"
#include "tune_classes.h"
#include "tune_env.h"
#include "tune_header.h"
#include "tune_run.h"

/* What the defaults resolve to for a class (xattn_resolve with no options,
 * schedule from the base header's matching row): "64x64/gqa/dynamic/t2". */
void tune_default_config(const tune_class_set *cs, int ci, char *out, size_t n);

/* Rows of the header this build was compiled with. Returns their count. */
int tune_base_rows(const tune_row **rows);

/* The provenance block (comment) and one-line string of a tuned header. */
/* What a timed call found in the caches, in words, from tune_identity.timing
 * ("warm" or "flushed"). */
const char *tune_timing_words(const char *timing);
void tune_provenance(const tune_env *env, const tune_class_set *cs, const tune_run *run,
                     double elapsed, const char *date, char *comment, size_t cn, char *line,
                     size_t ln);

/* Markdown report of a tuning run. */
void tune_report_run(FILE *f, const tune_env *env, const tune_class_set *cs, const tune_run *run,
                     double elapsed, const char *date, const char *header_path);

#endif
