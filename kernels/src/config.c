/* The config header (docs/formats.md §4): CMake passes its path as XATTN_CONFIG_HEADER_FILE;
 * its XATTN_CONFIG_CLASSES(X) rows become a table searched top to bottom. */
#include <string.h>
#include "internal/kernel.h"
#include XATTN_CONFIG_HEADER_FILE

/* threads, kv_splits, prefetch: older headers end at threads and the rest is
 * 0 = auto, which is what C gives the fields an initializer leaves out */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define XATTN_CONFIG_ROW(isa, dtype, d, dv, mode, eb, pb, variant, layout, schedule, ...) \
  {isa, dtype, d, dv, mode, eb, pb, variant, layout, schedule, __VA_ARGS__},
static const xattn_config_row config_rows[] = {XATTN_CONFIG_CLASSES(XATTN_CONFIG_ROW)};
#undef XATTN_CONFIG_ROW
enum { CONFIG_ROW_COUNT = sizeof(config_rows) / sizeof(config_rows[0]) };

const char *xattn_config_header_path(void) { return XATTN_CONFIG_HEADER_FILE; }
const char *xattn_config_provenance(void) { return XATTN_CONFIG_PROVENANCE; }
int xattn_config_class_count(void) { return CONFIG_ROW_COUNT; }

static int str_matches(const char *pattern, const char *value) {
  return strcmp(pattern, "*") == 0 || strcmp(pattern, value) == 0;
}
static int int_matches(int pattern, int value) { return pattern == -1 || pattern == value; }

const xattn_config_row *xattn_config_lookup(const char *isa, xattn_dtype dt, int d, int dv,
                                            xattn_mode mode, int extend_bucket,
                                            int prefix_bucket) {
  for (int i = 0; i < CONFIG_ROW_COUNT; i++) {
    const xattn_config_row *r = &config_rows[i];
    if (str_matches(r->isa, isa) && str_matches(r->dtype, xattn_dtype_name(dt)) &&
        int_matches(r->d, d) && int_matches(r->dv, dv) && str_matches(r->mode, xattn_mode_name(mode)) &&
        int_matches(r->extend_bucket, extend_bucket) && int_matches(r->prefix_bucket, prefix_bucket))
      return r;
  }
  return NULL;
}
