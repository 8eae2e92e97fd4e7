/* See xattn_common/files.h. */
#include "xattn_common/files.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symlink";
  return "not a regular file";
}

FILE *xc_fopen_regular(const char *path, const char **why) {
  const char *dummy;
  if (!why) why = &dummy;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = strerror(errno);
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *why = strerror(errno);
    close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = kind_of(st.st_mode);
    close(fd);
    return NULL;
  }
  const int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    *why = strerror(errno);
    close(fd);
  }
  return f;
}

int xc_output_path_ok(const char *path, const char **why) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0; /* missing: created by the rename */
  if (S_ISREG(st.st_mode)) return 0;
  if (why) *why = kind_of(st.st_mode);
  return -1;
}

xc_read_status xc_read_text_file(const char *path, size_t max_bytes, char **text, size_t *nul_at, const char **why) {
  *text = NULL;
  FILE *f = xc_fopen_regular(path, why);
  if (!f) return XC_READ_OPEN;
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    fclose(f);
    return XC_READ_IO;
  }
  if ((uint64_t)st.st_size > (uint64_t)max_bytes) {
    fclose(f);
    return XC_READ_TOO_LARGE;
  }
  const size_t n = (size_t)st.st_size;
  char *s = malloc(n + 1);
  if (!s || fread(s, 1, n, f) != n) {
    free(s);
    fclose(f);
    return XC_READ_IO;
  }
  fclose(f);
  s[n] = '\0';
  const char *nul = memchr(s, 0, n);
  if (nul) {
    if (nul_at) *nul_at = (size_t)(nul - s);
    free(s);
    return XC_READ_NUL;
  }
  *text = s;
  return XC_READ_OK;
}
