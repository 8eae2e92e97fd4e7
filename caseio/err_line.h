/* One-line error messages for the CLI's loaders (npy, case folders). */
#ifndef XATTN_CLI_ERR_LINE_H
#define XATTN_CLI_ERR_LINE_H
#include <stddef.h>

/* printf into err (if any), with newlines turned into spaces: a refused input
 * is always reported on exactly one line. */
void err_line(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
