/* Strict .npy reader/writer; see npy.h for what is accepted and why. */
#define _POSIX_C_SOURCE 200809L
#include "npy.h"
#include "err_line.h"
#include "xattn_common/files.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const descr_names[NPY_DTYPE_COUNT] = {"<f4", "<f2", "<u2", "<i4",
                                                         "<i8", "|b1", "|u1", "<f8"};
static const size_t descr_sizes[NPY_DTYPE_COUNT] = {4, 2, 2, 4, 8, 1, 1, 8};

/* A header longer than this is not something numpy writes for the arrays we use;
 * refusing it keeps a corrupt length field from allocating gigabytes. */
#define NPY_MAX_HEADER (1u << 20)

const char *npy_dtype_descr(npy_dtype t) {
  return (unsigned)t < NPY_DTYPE_COUNT ? descr_names[t] : "?";
}

size_t npy_dtype_size(npy_dtype t) { return (unsigned)t < NPY_DTYPE_COUNT ? descr_sizes[t] : 0; }

void npy_shape_string(int ndim, const int64_t *shape, char *buf, size_t len) {
  size_t n = 0;
  if (!len) return;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, len - n, "[");
  for (int i = 0; i < ndim && n < len; ++i)
    n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (n < len) snprintf(buf + n, len - n, "]");
}

/* ---- header dict parser ------------------------------------------------ */
typedef struct cursor {
  const char *s, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r'))
    ++c->s;
}

static int eat(cursor *c, char ch) {
  skip_ws(c);
  if (c->s < c->end && *c->s == ch) {
    ++c->s;
    return 1;
  }
  return 0;
}

/* A Python string literal without escapes ('...' or "..."), copied into out. */
static int parse_str(cursor *c, char *out, size_t outlen) {
  skip_ws(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) return -1;
  char q = *c->s++;
  size_t n = 0;
  while (c->s < c->end && *c->s != q) {
    if (*c->s == '\\' || n + 1 >= outlen) return -1;
    out[n++] = *c->s++;
  }
  if (c->s >= c->end) return -1;
  ++c->s;
  out[n] = '\0';
  return 0;
}

static int parse_word(cursor *c, const char *w) {
  skip_ws(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->s) < n || memcmp(c->s, w, n) != 0) return 0;
  c->s += n;
  return 1;
}

/* Non-negative decimal integer that fits int64. */
static int parse_dim(cursor *c, int64_t *v) {
  skip_ws(c);
  if (c->s >= c->end || *c->s < '0' || *c->s > '9') return -1;
  int64_t x = 0;
  while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
    int d = *c->s++ - '0';
    if (x > (INT64_MAX - d) / 10) return -1;
    x = x * 10 + d;
  }
  *v = x;
  return 0;
}

static int parse_shape(cursor *c, npy_array *a, const char **why) {
  if (!eat(c, '(')) return *why = "shape is not a tuple", -1;
  a->ndim = 0;
  if (eat(c, ')')) return 0;
  for (;;) {
    if (a->ndim == NPY_MAX_DIMS) return *why = "shape has too many dimensions", -1;
    if (parse_dim(c, &a->shape[a->ndim])) return *why = "shape entry is not a non-negative integer", -1;
    a->ndim++;
    if (eat(c, ')')) {
      /* "(5)" is an int in Python, not a tuple */
      if (a->ndim == 1) return *why = "shape (n) is not a tuple (write (n,))", -1;
      return 0;
    }
    if (!eat(c, ',')) return *why = "shape tuple is malformed", -1;
    if (eat(c, ')')) return 0;
  }
}

static int parse_header(const char *path, const char *h, size_t hlen, npy_array *a, char *err,
                        size_t errlen) {
  cursor c = {h, h + hlen};
  int have_descr = 0, have_order = 0, have_shape = 0;
  const char *why = NULL;
  if (!eat(&c, '{')) {
    err_line(err, errlen, "%s: header is not a dict", path);
    return -1;
  }
  for (;;) {
    if (eat(&c, '}')) break;
    char key[32], val[32];
    if (parse_str(&c, key, sizeof key) || !eat(&c, ':')) {
      err_line(err, errlen, "%s: header dict is malformed", path);
      return -1;
    }
    if (!strcmp(key, "descr")) {
      if (have_descr++) goto dup;
      if (parse_str(&c, val, sizeof val)) {
        err_line(err, errlen, "%s: descr is not a simple dtype string", path);
        return -1;
      }
      int found = -1;
      for (int t = 0; t < NPY_DTYPE_COUNT; ++t)
        if (!strcmp(val, descr_names[t])) found = t;
      if (found < 0) {
        err_line(err, errlen,
                "%s: dtype '%s' not supported (want one of <f4 <f2 <u2 <i4 <i8 |b1 |u1 <f8, "
                "little-endian)",
                path, val);
        return -1;
      }
      a->dtype = (npy_dtype)found;
    } else if (!strcmp(key, "fortran_order")) {
      if (have_order++) goto dup;
      if (parse_word(&c, "True")) {
        err_line(err, errlen, "%s: fortran_order True not supported (C order only)", path);
        return -1;
      }
      if (!parse_word(&c, "False")) {
        err_line(err, errlen, "%s: fortran_order is not True or False", path);
        return -1;
      }
    } else if (!strcmp(key, "shape")) {
      if (have_shape++) goto dup;
      if (parse_shape(&c, a, &why)) {
        err_line(err, errlen, "%s: %s", path, why);
        return -1;
      }
    } else {
      err_line(err, errlen, "%s: unknown header key '%s'", path, key);
      return -1;
    }
    if (eat(&c, '}')) break;
    if (!eat(&c, ',')) {
      err_line(err, errlen, "%s: header dict is malformed", path);
      return -1;
    }
  }
  skip_ws(&c);
  if (c.s != c.end) {
    err_line(err, errlen, "%s: trailing bytes after the header dict", path);
    return -1;
  }
  if (!have_descr || !have_order || !have_shape) {
    err_line(err, errlen, "%s: header lacks '%s'", path,
            !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    return -1;
  }
  return 0;
dup:
  err_line(err, errlen, "%s: duplicate header key", path);
  return -1;
}

/* ---- reader -------------------------------------------------------------- */
int npy_read(const char *path, npy_array *a, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  const char *why = NULL;
  FILE *f = xc_fopen_regular(path, &why); /* a FIFO must not block the open */
  if (!f) {
    err_line(err, errlen, "%s: cannot open: %s", path, why);
    return -1;
  }
  char *hdr = NULL;
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    err_line(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
    goto fail;
  }
  unsigned char pre[12];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    err_line(err, errlen, "%s: not a .npy file (bad magic)", path);
    goto fail;
  }
  unsigned major = pre[6], minor = pre[7];
  size_t hlen, pre_len;
  if (major == 1 && minor == 0) {
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    pre_len = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (fread(pre + 10, 1, 2, f) != 2) {
      err_line(err, errlen, "%s: truncated header", path);
      goto fail;
    }
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    pre_len = 12;
  } else {
    err_line(err, errlen, "%s: unsupported .npy version %u.%u", path, major, minor);
    goto fail;
  }
  if (hlen > NPY_MAX_HEADER || (uint64_t)pre_len + hlen > (uint64_t)st.st_size) {
    err_line(err, errlen, "%s: truncated header (header length %zu, file size %lld)", path, hlen,
            (long long)st.st_size);
    goto fail;
  }
  hdr = malloc(hlen + 1);
  if (!hdr || fread(hdr, 1, hlen, f) != hlen) {
    err_line(err, errlen, "%s: cannot read header", path);
    goto fail;
  }
  hdr[hlen] = '\0';
  if (memchr(hdr, '\0', hlen)) {
    err_line(err, errlen, "%s: NUL byte in header", path);
    goto fail;
  }
  if (parse_header(path, hdr, hlen, a, err, errlen)) goto fail;
  free(hdr);
  hdr = NULL;

  size_t isz = descr_sizes[a->dtype];
  int64_t count = 1;
  for (int i = 0; i < a->ndim; ++i) {
    if (a->shape[i] != 0 && count > INT64_MAX / (int64_t)isz / a->shape[i]) {
      err_line(err, errlen, "%s: shape is too large", path);
      goto fail;
    }
    count *= a->shape[i];
  }
  a->count = count;
  uint64_t want = (uint64_t)count * isz;
  uint64_t have = (uint64_t)st.st_size - pre_len - hlen;
  if (have != want) {
    char shp[128];
    npy_shape_string(a->ndim, a->shape, shp, sizeof shp);
    err_line(err, errlen, "%s: %s: shape %s %s needs %llu data bytes, file has %llu", path,
            have < want ? "truncated" : "trailing bytes", shp, descr_names[a->dtype],
            (unsigned long long)want, (unsigned long long)have);
    goto fail;
  }
  if (want > SIZE_MAX - 1) {
    err_line(err, errlen, "%s: array too large for this machine", path);
    goto fail;
  }
  a->data = malloc(want ? (size_t)want : 1);
  if (!a->data) {
    err_line(err, errlen, "%s: out of memory (%llu bytes)", path, (unsigned long long)want);
    goto fail;
  }
  if (want && fread(a->data, 1, (size_t)want, f) != (size_t)want) {
    err_line(err, errlen, "%s: read failed (file changed while reading?)", path);
    goto fail;
  }
  a->file_dev = (unsigned long long)st.st_dev, a->file_ino = (unsigned long long)st.st_ino;
  fclose(f);
  return 0;
fail:
  free(hdr);
  npy_free(a);
  fclose(f);
  return -1;
}

void npy_free(npy_array *a) {
  free(a->data);
  a->data = NULL;
  a->count = 0;
}

/* ---- writer -------------------------------------------------------------- */
int npy_write(const char *path, npy_dtype t, int ndim, const int64_t *shape, const void *data,
              char *err, size_t errlen) {
  if ((unsigned)t >= NPY_DTYPE_COUNT || ndim < 0 || ndim > NPY_MAX_DIMS) {
    err_line(err, errlen, "%s: bad array description", path);
    return -1;
  }
  char dict[512], shp[400];
  size_t n = 0;
  int64_t count = 1;
  shp[0] = '\0';
  for (int i = 0; i < ndim; ++i) {
    n += (size_t)snprintf(shp + n, sizeof shp - n, "%lld,%s", (long long)shape[i],
                          i + 1 < ndim ? " " : "");
    count *= shape[i];
  }
  /* numpy writes (n,) for 1-D and (a, b) for more: drop the trailing comma then */
  if (ndim > 1 && n > 0) shp[n - 1] = '\0';
  int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                    descr_names[t], shp);
  /* pad with spaces so the data starts on a 64-byte boundary, end with '\n' */
  size_t pre = 10, hlen = (size_t)dl + 1;
  if (pre + hlen > 65535) pre = 12;
  hlen += (64 - (pre + hlen) % 64) % 64;
  char *hdr = malloc(pre + hlen);
  if (!hdr) {
    err_line(err, errlen, "%s: out of memory", path);
    return -1;
  }
  memcpy(hdr, "\x93NUMPY", 6);
  hdr[6] = pre == 10 ? 1 : 2;
  hdr[7] = 0;
  for (size_t i = 0; i < pre - 8; ++i) hdr[8 + i] = (char)((hlen >> (8 * i)) & 0xff);
  memset(hdr + pre, ' ', hlen);
  memcpy(hdr + pre, dict, (size_t)dl);
  hdr[pre + hlen - 1] = '\n';

  size_t plen = strlen(path) + 32;
  char *tmp = malloc(plen);
  if (!tmp) {
    free(hdr);
    err_line(err, errlen, "%s: out of memory", path);
    return -1;
  }
  snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  size_t bytes = (size_t)count * descr_sizes[t];
  int ok = f && fwrite(hdr, 1, pre + hlen, f) == pre + hlen &&
           (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, path) != 0) ok = 0;
  if (!ok) {
    err_line(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    remove(tmp);
  }
  free(tmp);
  free(hdr);
  return ok ? 0 : -1;
}
