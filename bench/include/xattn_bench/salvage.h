/* What survives a killed xattn-bench run: the complete benchmarks of its
 * Google Benchmark temp file, published as a result of their own. */
#ifndef XATTN_BENCH_SALVAGE_H
#define XATTN_BENCH_SALVAGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* tmp_path: the .tmp-STAMP-PID.json of a run killed while Google Benchmark's
 * JSON reporter was writing it (a JSON document cut anywhere). Keeps its
 * context and every benchmark whose rows were all written (the repetitions
 * and the aggregates through the last one, "min"; every row where a run had
 * no aggregates), adds the context key xattn_killed_run, and publishes that as
 * DIR/STAMP_<label>-killed.json (xb_publish_result: never overwrites), label
 * being the context's xattn_label (else xattn_suite). Returns the number of
 * benchmarks kept with the path in out, 0 when none was complete (no file),
 * -1 with a reason in err when the file cannot be read or written. The temp
 * file is left to the caller. */
int xb_salvage_killed(const char *tmp_path, const char *dir, const char *stamp, long pid, char *out, size_t outlen,
                      char *err, size_t errlen);

/* The rows a results file (a whole run's or a -killed one) measured, for
 * --resume: when the file's context holds "xattn_resume_key": "<key>" (a run
 * of the same command line and label), calls each(name, ctx) once per
 * benchmark with its row name (run_name without Google Benchmark's
 * "/real_time") and returns how many; a row that failed (error_occurred)
 * measured nothing and is left out. 0 for any other file, a file that cannot
 * be read included. */
int xb_measured_rows(const char *path, const char *key, void (*each)(const char *name, void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
