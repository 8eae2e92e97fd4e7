/* The thread-local "last error" line (status names: names.c). */
#include <stdarg.h>
#include <stdio.h>

#include "internal/error.h"

static _Thread_local char last_error[512];

const char *xattn_last_error(void) { return last_error; }

void xattn_clear_error(void) { last_error[0] = '\0'; }

xattn_status xattn_fail(xattn_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}
