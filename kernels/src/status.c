/* Status names and the thread-local "last error" line. */
#include <stdarg.h>
#include <stdio.h>

#include "internal/error.h"

static _Thread_local char last_error[512];

const char *xattn_status_string(xattn_status s) {
  switch (s) {
    case XATTN_OK: return "ok";
    case XATTN_ERR_NULL: return "null";
    case XATTN_ERR_SHAPE: return "shape";
    case XATTN_ERR_INDEX: return "index";
    case XATTN_ERR_STRIDE: return "stride";
    case XATTN_ERR_MODE: return "mode";
    case XATTN_ERR_DTYPE: return "dtype";
    case XATTN_ERR_UNSUPPORTED: return "unsupported";
    case XATTN_ERR_NOMEM: return "nomem";
    case XATTN_ERR_IO: return "io";
  }
  return "unknown";
}

const char *xattn_last_error(void) { return last_error; }

void xattn_clear_error(void) { last_error[0] = '\0'; }

xattn_status xattn_fail(xattn_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}
