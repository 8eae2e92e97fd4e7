/* Strict reader and writer of numpy's .npy format (versions 1.0, 2.0, 3.0).
 *
 * Cases come from other tools (numpy, PyTorch, an engine's dump), so the reader
 * trusts nothing: the header dict is parsed exactly, only little-endian C-order
 * arrays of the dtypes below are accepted, the element count is checked for
 * overflow and the file size must match the header exactly. Every refusal is one
 * line in err naming the file and the reason.
 */
#ifndef XATTN_CLI_NPY_H
#define XATTN_CLI_NPY_H

#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_DIMS 8

typedef enum npy_dtype {
  NPY_F4 = 0, /* <f4 */
  NPY_F2,     /* <f2 */
  NPY_U2,     /* <u2 (bf16 bit patterns) */
  NPY_I4,     /* <i4 */
  NPY_I8,     /* <i8 */
  NPY_B1,     /* |b1 */
  NPY_U1,     /* |u1 */
  NPY_F8,     /* <f8 */
  NPY_DTYPE_COUNT
} npy_dtype;

typedef struct npy_array {
  npy_dtype dtype;
  int ndim;
  int64_t shape[NPY_MAX_DIMS];
  int64_t count;  /* product of shape */
  void *data;     /* count * npy_dtype_size(dtype) bytes, malloc'd (non-NULL even when empty) */
  unsigned long long file_dev, file_ino; /* the file it was read from (npy_read), 0 otherwise */
} npy_array;

const char *npy_dtype_descr(npy_dtype t); /* "<f4", ... */
size_t npy_dtype_size(npy_dtype t);

/* Reads path into *a. Returns 0, or -1 with one line in err (no trailing newline). */
int npy_read(const char *path, npy_array *a, char *err, size_t errlen);

/* Writes a C-order array as version 1.0 (2.0 if the header needs it) through a
 * temporary file renamed into place, so a killed writer never leaves a partial
 * file under the final name. Returns 0, or -1 with one line in err. */
int npy_write(const char *path, npy_dtype t, int ndim, const int64_t *shape,
              const void *data, char *err, size_t errlen);

void npy_free(npy_array *a);

/* "[3, 4, 5]" for messages. */
void npy_shape_string(int ndim, const int64_t *shape, char *buf, size_t len);

#endif
