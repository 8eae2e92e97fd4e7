/* See xattn_common/files.h. */
#include "xattn_common/files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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
