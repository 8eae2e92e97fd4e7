/* Opening files the tools read, and checking paths they write, so that a FIFO,
 * a device or a symlink given where a file belongs is refused with one line
 * instead of hanging on open or being replaced by a rename. */
#ifndef XATTN_COMMON_FILES_H
#define XATTN_COMMON_FILES_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fopen(path, "rb") for a regular file only: opens without blocking (a FIFO
 * with no writer would block fopen forever), checks that it is a regular file,
 * and returns the stream; NULL with *why set ("no such file", "not a regular
 * file (a FIFO)", ...) otherwise. why may be NULL. */
FILE *xc_fopen_regular(const char *path, const char **why);

/* Whether path may be replaced by a temp-file-and-rename write: it does not
 * exist, or it is a regular file (not followed if it is a symlink). Returns 0,
 * or -1 with *why saying what is there ("a FIFO", "a symlink", "a device", ...). */
int xc_output_path_ok(const char *path, const char **why);

#ifdef __cplusplus
}
#endif
#endif
