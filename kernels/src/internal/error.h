/* Thread-local error reporting shared by every part of libxattn. */
#ifndef XATTN_INTERNAL_ERROR_H
#define XATTN_INTERNAL_ERROR_H
#include "xattn/xattn.h"

/* Sets this thread's last-error line (printf format: name the field, then the
 * reason) and returns s, so that callers can write `return xattn_fail(...)`. */
xattn_status xattn_fail(xattn_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears the last-error line (called on success paths of the public API). */
void xattn_clear_error(void);

#endif
