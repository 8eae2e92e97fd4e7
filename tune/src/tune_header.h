/* Reading and writing config headers (docs/formats.md §4, the format of
 * kernels/config/xattn_config_default.h). */
#ifndef TUNE_HEADER_H
#define TUNE_HEADER_H

#include <stddef.h>

#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"

typedef struct tune_row {
  char isa[32], dtype[32];
  int d, dv;
  char mode[32];
  int extend_bucket, prefix_bucket;
  char variant[32], layout[32], schedule[32];
  int threads;
  int kv_splits, prefetch; /* optional columns (decode layout); 0 = auto, written only when set */
  int lanes_rows;          /* optional column (decode layout): groups of this many rows run lanes; 0 = never */
  int lanes_rows_fp8;      /* optional column after it: the same for an fp8 cache; 0 = lanes_rows */
  int prefetch_level;      /* optional column after it: 1 = decode / lanes prefetch into L1; 0 = default (L2) */
  char comment[240]; /* written as a comment line above the row; may be empty */
} tune_row;

/* Parses the rows and the provenance string of a header file. Returns the
 * number of rows (<= cap), or -1 with a one-line reason in err. */
int tune_header_parse(const char *path, tune_row *rows, int cap, char *provenance, size_t provn,
                      char *err, size_t errn);

/* Does a row match a class? ("*" and -1 match anything.) */
int tune_row_matches(const tune_row *r, const char *isa, const char *dtype, int d, int dv,
                     const char *mode, int extend_bucket, int prefix_bucket);

/* Writes the header atomically (temp file in the same folder, fsync, rename).
 * comment: the provenance block (plain text lines, no comment markers);
 * provenance: the one-line XATTN_CONFIG_PROVENANCE string. Rows are written
 * in the given order; the caller puts specific rows first and makes the last
 * one match everything (checked: returns -1 otherwise). */
int tune_header_write(const char *path, const char *comment, const char *provenance,
                      const tune_row *rows, int n, char *err, size_t errn);

/* The CPU-class part of a header (docs/formats.md). A header tuned on one
 * machine names the class it was tuned on (XATTN_CONFIG_TUNED_CPU); a merged
 * header (xattn-tune merge) lists its classes (XATTN_CONFIG_CPU_CLASSES), the
 * class of every row (XATTN_CONFIG_ROW_CPU_CLASSES, -1: every CPU) and the
 * kernel digest its tunings share (XATTN_CONFIG_KERNEL_DIGEST). */
enum { TUNE_MAX_CPU_CLASSES = 64, TUNE_MAX_HEADER_ROWS = 1024 };
typedef struct tune_header_cpu {
  int has_tuned_on;
  xattn_cpu_class tuned_on;
  int n_classes;
  xattn_cpu_class classes[TUNE_MAX_CPU_CLASSES];
  int row_class[TUNE_MAX_HEADER_ROWS];
  char kernel_digest[72];
} tune_header_cpu;

/* tune_header_write plus the CPU-class part (cpu may be NULL: none). */
int tune_header_write_cpu(const char *path, const char *comment, const char *provenance,
                          const tune_row *rows, int n, const tune_header_cpu *cpu, char *err,
                          size_t errn);
/* Reads the CPU-class part of a header (all zero / -1 rows when it has none).
 * 0, or -1 with a one-line reason. */
int tune_header_parse_cpu(const char *path, tune_header_cpu *cpu, char *err, size_t errn);

/* ';'-separated distinct variants of the rows (for -DXATTN_VARIANTS). */
void tune_rows_variants(const tune_row *rows, int n, char *out, size_t outn);

#endif
