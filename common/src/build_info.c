/* The build identity of common/include/xattn_common/build_info.h. */
#include "xattn_common/build_info.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "xc_build_info.h" /* generated at build time: XC_BUILD_DESCRIBE, XC_SOURCE_DIR, ... */

/* XC_BUILD_DESCRIBE is `git describe --always --dirty --abbrev=12` at build
 * time: "<hash>", "<tag>-<n>-g<hash>", each maybe with "-dirty"; or "". */
static void parse_describe(char *hash, int *dirty) {
  const char *d = XC_BUILD_DESCRIBE;
  hash[0] = 0;
  *dirty = strstr(d, "-dirty") != NULL;
  const char *g = strstr(d, "-g");
  const char *h = g ? g + 2 : d;
  int n = 0;
  while (n < 40 && isxdigit((unsigned char)h[n])) n++;
  if (n >= 7) snprintf(hash, 41, "%.*s", n < 12 ? n : 12, h);
}

const char *xc_build_commit(void) {
  static char hash[41];
  int dirty;
  parse_describe(hash, &dirty);
  if (!hash[0]) strcpy(hash, "nogit");
  return hash;
}

int xc_build_dirty(void) {
  static int cached = -2;
  if (cached != -2) return cached;
  char hash[41];
  int dirty;
  parse_describe(hash, &dirty);
  if (!hash[0]) return cached = -1;
  if (!dirty) {
    /* The tree may have changed since the build: ask git now, if we are in one. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null", XC_SOURCE_DIR);
    FILE *p = popen(cmd, "r");
    if (p) {
      char line[256];
      if (fgets(line, sizeof line, p)) dirty = 1;
      pclose(p);
    }
  }
  return cached = dirty;
}

const char *xc_build_compiler(void) { return XC_COMPILER; }
const char *xc_build_cflags(void) { return XC_CFLAGS; }
const char *xc_build_source_dir(void) { return XC_SOURCE_DIR; }
