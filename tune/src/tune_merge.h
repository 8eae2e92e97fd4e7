/* xattn-tune merge: one release header for many CPUs from the tuned headers of
 * several machines (docs/formats.md, docs/fleet-runbook.md). */
#ifndef TUNE_MERGE_H
#define TUNE_MERGE_H

#include <stddef.h>
#include <stdio.h>

typedef struct tune_merge_opts {
  const char *const *inputs; /* tuned headers, one per machine (xattn-tune run) */
  int n_inputs;
  const char *base; /* the hand default header: its rows serve CPUs of no class's ISA */
  const char *out;  /* the merged header */
  const char *date; /* UTC date for the provenance */
} tune_merge_opts;

/* Every input must name the CPU class it was tuned on and all must share one
 * kernel digest (else -1 and a line naming the file). The rows of input i
 * become the rows of its CPU class; a second input of an already present
 * class is left out and named in the provenance and on `log`; the base
 * header's rows come last for every CPU. 0 on success. */
int tune_merge(const tune_merge_opts *o, FILE *log, char *err, size_t errn);

/* The value of "key: value;" in a provenance line ("machine", "commit",
 * "speedup", "kernels sha256"), up to the next ';' or the end; "" if absent. */
void tune_provenance_field(const char *provenance, const char *key, char *out, size_t outn);

#endif
