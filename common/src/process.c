#include "xattn_common/process.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

int xc_pid_running(long pid) {
  if (pid <= 0) return 0;
  struct stat st;
  if (stat("/proc/self/stat", &st) != 0) return kill((pid_t)pid, 0) == 0 || errno == EPERM; /* no /proc */
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* "PID (NAME) STATE ...": the name may hold anything, ')' included, so the
   * state follows the last ')' of the line (the name is at most 16 bytes) */
  const char *close = strrchr(buf, ')');
  if (!close || close[1] != ' ') return 1; /* unparsable: leave its files alone */
  return close[2] != 'Z' && close[2] != 'X';
}
