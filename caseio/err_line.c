#include "err_line.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xattn_common/json_strict.h" /* xc_printable */

void err_line(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  for (char *c = err; *c; ++c)
    if (*c == '\n' || *c == '\r') *c = ' ';
  /* names copied from a file may hold bytes that are not UTF-8 (or terminal
     escapes): they are shown as \xNN, never written raw to stderr */
  char *raw = malloc(errlen);
  if (raw) {
    memcpy(raw, err, errlen);
    xc_printable(err, errlen, raw);
    free(raw);
  }
}
