/* xattn_bench/machine.h — what this run is: machine, commit, build; and where
 * its results go (docs/formats.md §3: results/<machine>/<commit>/<UTC stamp>_<label>.json,
 * temp file + rename, never overwriting).
 */
#ifndef XATTN_BENCH_MACHINE_H
#define XATTN_BENCH_MACHINE_H

#include <stddef.h>

#include "xattn_bench/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "model name" of /proc/cpuinfo (first CPU), or "unknown". */
const char *xb_cpu_model(void);
/* "flags" of /proc/cpuinfo (first CPU), or "". */
const char *xb_cpu_flags(void);

/* Lowercase slug of a CPU model: "(R)", "(TM)", "CPU", "@ 2.60GHz" dropped,
 * runs of other characters become '-'. "Intel(R) Xeon(R) Processor" ->
 * "intel-xeon-processor". */
void xb_model_slug(const char *model, char *out, size_t outlen);
/* <slug>-<cores>c-<first 8 hex of FNV-1a 64 of "model\ntopology summary">,
 * or XATTN_MACHINE_ID when set (for tests: lets jobs on one host present as
 * several machines; letters, digits, '.', '_', '-' only). 0, or -1 with the
 * reason in err when the override is malformed. */
int xb_machine_name(const char *model, int cores, const char *topology_summary,
                    char *out, size_t outlen, char *err, size_t errlen);

/* "<12 hex>", "<12 hex>-dirty" or "nogit", from xc_build_commit() and
 * xc_build_dirty() (xattn_common/build_info.h: the build's identity). */
void xb_commit_dir_name(const char *commit, int dirty, char *out, size_t outlen);

/* A path as committed files record it: relative to the source tree this
 * binary was built from when it lies inside it (resolved with realpath, so a
 * relative or symlinked path works too), else unchanged. Returns out. */
const char *xb_repo_relative(const char *path, char *out, size_t outlen);

/* UTC stamp yyyymmddTHHMMSSZ of now. */
void xb_utc_stamp(char *out, size_t outlen);
/* Label sanitised for a file name ([A-Za-z0-9._-], others -> '-'). */
void xb_sanitize_label(const char *label, char *out, size_t outlen);

/* Creates dir and its parents (mode 0777 & umask). 0 or -1 with err. */
int xb_mkdirs(const char *dir, char *err, size_t errlen);
/* <results_dir>/<machine>/<commit_dir>; created. 0 or -1 with err. */
int xb_results_subdir(const char *results_dir, const char *machine, const char *commit_dir,
                      char *out, size_t outlen, char *err, size_t errlen);
/* Moves tmp_path to <dir>/<stamp>_<label>.json atomically without ever
 * overwriting: link() then unlink(); if the name exists tries _2, _3, ...
 * Writes the final path to out. 0 or -1 with err. */
int xb_publish_result(const char *tmp_path, const char *dir, const char *stamp,
                      const char *label, char *out, size_t outlen, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
