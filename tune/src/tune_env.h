/* The real environment of a tuning run: this machine (through bench's
 * topology library and hwloc), this build (compiler, flags, kernel digest,
 * commit) and what libxattn offers (variants, layouts, thread counts). */
#ifndef TUNE_ENV_H
#define TUNE_ENV_H

#include <stddef.h>
#include <stdio.h>
#include "tune_space.h"
#include "tune_store.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/topology.h"

typedef struct tune_env {
  xb_topology *topo;
  tune_identity id;
  tune_machine machine;
  tune_axes axes;
  xattn_cpu_class cpu;  /* the CPU class the tuned header is written for */
  char commit[64];      /* 12 hex (+ -dirty) or nogit */
  char commit_dir[64];
} tune_env;

int tune_env_open(tune_env *e, char *err, size_t errn);
void tune_env_close(tune_env *e);
void tune_env_print(const tune_env *e, FILE *f);

#endif
