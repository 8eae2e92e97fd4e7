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

/* Why xc_read_text_file gave no text. */
typedef enum { XC_READ_OK = 0, XC_READ_OPEN, XC_READ_TOO_LARGE, XC_READ_IO, XC_READ_NUL } xc_read_status;

/* The whole of a regular text file (opened as xc_fopen_regular does), NUL-
 * terminated, for the JSON loaders: *text is malloc'ed on XC_READ_OK. Else
 * *text is NULL and the status says why: XC_READ_OPEN (*why says the reason),
 * XC_READ_TOO_LARGE (more than max_bytes), XC_READ_IO, or XC_READ_NUL with the
 * offset in *nul_at (a NUL would silently end the text early for a parser).
 * why and nul_at may be NULL. */
xc_read_status xc_read_text_file(const char *path, size_t max_bytes, char **text, size_t *nul_at, const char **why);

/* Whether path may be replaced by a temp-file-and-rename write: it does not
 * exist, or it is a regular file (not followed if it is a symlink). Returns 0,
 * or -1 with *why saying what is there ("a FIFO", "a symlink", "a device", ...). */
int xc_output_path_ok(const char *path, const char **why);

#ifdef __cplusplus
}
#endif
#endif
