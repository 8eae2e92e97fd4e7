#include "err_line.h"

#include <stdarg.h>
#include <stdio.h>

void err_line(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  for (char *c = err; *c; ++c)
    if (*c == '\n' || *c == '\r') *c = ' ';
}
