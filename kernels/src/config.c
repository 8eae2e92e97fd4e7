/* The config header (docs/formats.md §4): CMake passes its path as XATTN_CONFIG_HEADER_FILE;
 * its XATTN_CONFIG_CLASSES(X) rows become a table searched top to bottom.
 * A header merged from several machines (xattn-tune merge) also lists CPU
 * classes (XATTN_CONFIG_CPU_CLASSES) and the class of each row
 * (XATTN_CONFIG_ROW_CPU_CLASSES, -1: every CPU); the lookup then skips the rows
 * of the other classes. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "internal/error.h"
#include "internal/kernel.h"
#include "xattn/xattn_introspect.h"
#include XATTN_CONFIG_HEADER_FILE

/* A header without XATTN_CONFIG_FORMAT was written before the few-rows extend
 * buckets (format 1): its rows keep their meaning, a call's bucket is mapped
 * into that format at lookup (xattn_extend_bucket_in_format). */
#ifndef XATTN_CONFIG_FORMAT
#define XATTN_CONFIG_FORMAT 1
#endif
#if XATTN_CONFIG_FORMAT < 1 || XATTN_CONFIG_FORMAT > XATTN_CONFIG_FORMAT_CURRENT
#error "config header: XATTN_CONFIG_FORMAT is not 1 or 2, the formats this build reads (docs/formats.md §4)"
#endif

/* threads, kv_splits, prefetch, lanes_rows, lanes_rows_fp8: older headers end
 * at threads, prefetch or lanes_rows and the rest is 0 (auto; never for
 * lanes_rows; lanes_rows' value for lanes_rows_fp8), which is what C gives the
 * fields an initializer leaves out */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define XATTN_CONFIG_ROW(isa, dtype, d, dv, mode, eb, pb, variant, layout, schedule, ...) \
  {isa, dtype, d, dv, mode, eb, pb, variant, layout, schedule, __VA_ARGS__},
static const xattn_config_row config_rows[] = {XATTN_CONFIG_CLASSES(XATTN_CONFIG_ROW)};
#undef XATTN_CONFIG_ROW
enum { CONFIG_ROW_COUNT = sizeof(config_rows) / sizeof(config_rows[0]) };

#ifdef XATTN_CONFIG_CPU_CLASSES
#define XATTN_CONFIG_CPU(name, isa, vendor, family, model, l2_kib, cores_per_l3) \
  {name, isa, vendor, family, model, l2_kib, cores_per_l3},
static const xattn_cpu_class cpu_classes[] = {XATTN_CONFIG_CPU_CLASSES(XATTN_CONFIG_CPU)};
#undef XATTN_CONFIG_CPU
static const int row_cpu_class[] = XATTN_CONFIG_ROW_CPU_CLASSES;
_Static_assert(sizeof row_cpu_class / sizeof row_cpu_class[0] == CONFIG_ROW_COUNT,
               "XATTN_CONFIG_ROW_CPU_CLASSES needs one entry per XATTN_CONFIG_CLASSES row");
enum { CPU_CLASS_COUNT = sizeof(cpu_classes) / sizeof(cpu_classes[0]) };
#else
static const xattn_cpu_class *const cpu_classes = NULL;
static const int *const row_cpu_class = NULL;
enum { CPU_CLASS_COUNT = 0 };
#endif

const char *xattn_config_header_path(void) { return XATTN_CONFIG_HEADER_FILE; }
const char *xattn_config_provenance(void) { return XATTN_CONFIG_PROVENANCE; }
int xattn_config_class_count(void) { return CONFIG_ROW_COUNT; }
int xattn_config_format(void) { return XATTN_CONFIG_FORMAT; }
int xattn_config_cpu_class_count(void) { return CPU_CLASS_COUNT; }

/* The CPU class this process uses, decided once: index into cpu_classes, -1
 * when none has this CPU's ISA (only the rows of every CPU serve). */
static struct {
  pthread_once_t once;
  int index;
  xattn_status status;
  char error[320];
  char why[512];
} cpu_match = {PTHREAD_ONCE_INIT, -1, XATTN_OK, "", ""};

static void match_cpu_class(void) {
  if (CPU_CLASS_COUNT == 0) {
    snprintf(cpu_match.why, sizeof cpu_match.why, "the config header has no CPU classes: its rows serve every CPU");
    return;
  }
  xattn_cpu_class self;
  cpu_match.status = xattn_cpu_class_get(&self);
  if (cpu_match.status != XATTN_OK) {
    snprintf(cpu_match.error, sizeof cpu_match.error, "%s", xattn_last_error());
    snprintf(cpu_match.why, sizeof cpu_match.why, "%s", cpu_match.error);
    return;
  }
  cpu_match.index = xattn_cpu_class_nearest(&self, cpu_classes, CPU_CLASS_COUNT, cpu_match.why,
                                            sizeof cpu_match.why);
}

static xattn_status cpu_class_index(int *index) {
  pthread_once(&cpu_match.once, match_cpu_class);
  *index = cpu_match.index;
  if (cpu_match.status != XATTN_OK) return xattn_fail(cpu_match.status, "%s", cpu_match.error);
  return XATTN_OK;
}

xattn_status xattn_resolve_cpu_class(const char **cls, const char **why) {
  int index;
  xattn_status s = cpu_class_index(&index);
  if (why) *why = cpu_match.why;
  if (cls) *cls = CPU_CLASS_COUNT == 0 ? "*" : index >= 0 ? cpu_classes[index].name : "";
  if (s == XATTN_OK) xattn_clear_error();
  return s;
}

static int str_matches(const char *pattern, const char *value) {
  return strcmp(pattern, "*") == 0 || strcmp(pattern, value) == 0;
}
static int int_matches(int pattern, int value) { return pattern == -1 || pattern == value; }

xattn_status xattn_config_cpu_check(void) {
  int index;
  return CPU_CLASS_COUNT > 0 ? cpu_class_index(&index) : XATTN_OK;
}

const xattn_config_row *xattn_config_lookup(const char *isa, xattn_dtype dt, int d, int dv,
                                            xattn_mode mode, int extend_bucket,
                                            int prefix_bucket) {
  int cpu = -1;
  if (CPU_CLASS_COUNT > 0 && cpu_class_index(&cpu) != XATTN_OK) cpu = -1; /* the hand default rows */
  extend_bucket = xattn_extend_bucket_in_format(XATTN_CONFIG_FORMAT, extend_bucket);
  for (int i = 0; i < CONFIG_ROW_COUNT; i++) {
    const xattn_config_row *r = &config_rows[i];
    if (CPU_CLASS_COUNT > 0 && row_cpu_class[i] != -1 && row_cpu_class[i] != cpu) continue;
    if (str_matches(r->isa, isa) && str_matches(r->dtype, xattn_dtype_name(dt)) &&
        int_matches(r->d, d) && int_matches(r->dv, dv) && str_matches(r->mode, xattn_mode_name(mode)) &&
        int_matches(r->extend_bucket, extend_bucket) && int_matches(r->prefix_bucket, prefix_bucket))
      return r;
  }
  return NULL;
}
