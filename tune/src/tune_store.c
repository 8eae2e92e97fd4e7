#include "tune_store.h"

#include "xattn_common/files.h"
#include "xattn_common/json_strict.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct entry {
  char *cls, *cand, *phase;
  double *t;
  int n, cap;
  int verdict; /* -1 unknown, 0 wrong, 1 ok */
  char *why;
} entry;

struct tune_store {
  char *path;
  int fd;
  int lock_fd; /* flock()ed path.lock, holding our pid, for as long as the store is open */
  entry *e;
  int n, cap;
  int loaded, dropped;
  int durable;
};

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static entry *find(tune_store *s, const char *cls, const char *cand, const char *phase, int make) {
  for (int i = s->n - 1; i >= 0; i--) {
    entry *e = &s->e[i];
    if (!strcmp(e->cand, cand) && !strcmp(e->phase, phase) && !strcmp(e->cls, cls)) return e;
  }
  if (!make) return NULL;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 256;
    entry *ne = realloc(s->e, sizeof(entry) * (size_t)cap);
    if (!ne) return NULL;
    s->e = ne;
    s->cap = cap;
  }
  entry *e = &s->e[s->n++];
  memset(e, 0, sizeof *e);
  e->cls = dupstr(cls);
  e->cand = dupstr(cand);
  e->phase = dupstr(phase);
  e->verdict = -1;
  return e;
}

static int push_time(entry *e, double t) {
  if (e->n == e->cap) {
    int cap = e->cap ? 2 * e->cap : 8;
    double *nt = realloc(e->t, sizeof(double) * (size_t)cap);
    if (!nt) return -1;
    e->t = nt;
    e->cap = cap;
  }
  e->t[e->n++] = t;
  return 0;
}

static int write_line(tune_store *s, cJSON *obj) {
  char *txt = cJSON_PrintUnformatted(obj);
  if (!txt) return -1;
  size_t n = strlen(txt);
  char *line = malloc(n + 2);
  if (!line) {
    free(txt);
    return -1;
  }
  memcpy(line, txt, n);
  line[n] = '\n';
  line[n + 1] = '\0';
  free(txt);
  /* one write() per record (O_APPEND), then fsync: a kill leaves at most a
   * torn last line, which loading drops */
  size_t off = 0;
  while (off < n + 1) {
    ssize_t w = write(s->fd, line + off, n + 1 - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      free(line);
      return -1;
    }
    off += (size_t)w;
  }
  free(line);
  return s->durable ? fsync(s->fd) : 0;
}

#define ID_FIELDS 7
static const char *id_fields[ID_FIELDS] = {"machine", "cpu_model", "topology", "compiler", "cflags",
                                           "kernel_digest", "timing"};
static const char *id_value(const tune_identity *id, int i) {
  switch (i) {
  case 0: return id->machine;
  case 1: return id->cpu_model;
  case 2: return id->topology;
  case 3: return id->compiler;
  case 4: return id->cflags;
  case 5: return id->kernel_digest;
  default: return id->timing[0] ? id->timing : "warm";
  }
}

/* Replays one record; -1 with *why saying what is wrong with it otherwise. */
static int apply_record(tune_store *s, cJSON *o, const char **why) {
  const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(o, "t"));
  const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(o, "class"));
  const char *cand = cJSON_GetStringValue(cJSON_GetObjectItem(o, "cand"));
  *why = "not a record (needs string fields t, class and cand)";
  if (!t || !cls || !cand) return -1;
  if (!strcmp(t, "m")) {
    const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(o, "phase"));
    cJSON *rep = cJSON_GetObjectItem(o, "rep"), *sec = cJSON_GetObjectItem(o, "sec");
    *why = "measurement without a string phase, a number rep or a number sec";
    if (!ph || !cJSON_IsNumber(rep) || !cJSON_IsNumber(sec)) return -1;
    const double r = rep->valuedouble, t_s = sec->valuedouble;
    *why = "rep is not a whole number in [0, 1e6]";
    if (!(r >= 0 && r <= 1e6) || r != floor(r)) return -1;
    *why = "sec is not a positive finite time";
    if (!(t_s > 0) || !isfinite(t_s)) return -1;
    entry *e = find(s, cls, cand, ph, 1);
    *why = "out of memory";
    if (!e) return -1;
    *why = (int)r < e->n ? "repetition recorded twice" : "repetition out of order (a gap before it)";
    if ((int)r != e->n) return -1;
    return push_time(e, t_s);
  }
  if (!strcmp(t, "v")) {
    cJSON *ok = cJSON_GetObjectItem(o, "ok");
    const char *w = cJSON_GetStringValue(cJSON_GetObjectItem(o, "why"));
    *why = "verdict without a boolean ok";
    if (!cJSON_IsBool(ok)) return -1;
    entry *e = find(s, cls, cand, "verify", 1);
    *why = "out of memory";
    if (!e) return -1;
    e->verdict = cJSON_IsTrue(ok);
    free(e->why);
    e->why = dupstr(w ? w : "");
    return 0;
  }
  *why = "unknown record type t";
  return -1;
}

static int write_identity(tune_store *s, const tune_identity *id) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "t", "id");
  cJSON_AddStringToObject(o, "format", "xattn-tune-cache-1");
  for (int i = 0; i < ID_FIELDS; i++) cJSON_AddStringToObject(o, id_fields[i], id_value(id, i));
  int rc = write_line(s, o);
  cJSON_Delete(o);
  return rc;
}

/* Reads the whole file, checks the identity line and replays the records.
 * Repair is limited to what a killed writer leaves: a torn LAST line (no
 * newline) is cut off so that the next append starts on a fresh line. Any
 * other bad line (garbled JSON, a NUL byte, an invalid or duplicate record)
 * refuses the cache by line number and leaves the file as it is: cutting there
 * would delete every record after it. */
static int load(tune_store *s, const tune_identity *id, char *err, size_t errn) {
  const char *whyopen = NULL;
  FILE *f = xc_fopen_regular(s->path, &whyopen);
  if (!f) {
    if (errno == ENOENT) return 0;
    snprintf(err, errn, "cache %s: cannot open it: %s", s->path, whyopen);
    return -1;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    fclose(f);
    snprintf(err, errn, "cache %s: cannot stat it", s->path);
    return -1;
  }
  const size_t size = (size_t)st.st_size;
  char *buf = malloc(size + 1);
  if (!buf || fread(buf, 1, size, f) != size) {
    fclose(f);
    free(buf);
    snprintf(err, errn, "cache %s: cannot read it", s->path);
    return -1;
  }
  fclose(f);
  buf[size] = '\0';
  size_t good_end = 0; /* bytes up to and including the last complete line */
  int line_no = 0, rc = 0;
  char *p = buf, *const end = buf + size;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) {
      s->dropped++; /* torn last line: what a kill inside write() leaves */
      break;
    }
    line_no++;
    char why[256];
    const char *rwhy = NULL;
    cJSON *o = xc_json_parse_strict(p, (size_t)(nl - p), why, sizeof why);
    if (line_no == 1) {
      const char *t = o ? cJSON_GetStringValue(cJSON_GetObjectItem(o, "t")) : NULL;
      if (!t || strcmp(t, "id") != 0) {
        snprintf(err, errn, "cache %s: first line is not an xattn-tune identity record (use --fresh)",
                 s->path);
        rc = -1;
      }
      for (int i = 0; rc == 0 && i < ID_FIELDS; i++) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, id_fields[i]));
        if (!v && i == 6 && cJSON_GetObjectItem(o, id_fields[i]) == NULL) v = "warm"; /* older caches: no flushing */
        if (!v || strcmp(v, id_value(id, i)) != 0) {
          char shown[160];
          snprintf(err, errn,
                   "cache %s was recorded with a different %s ('%s', this run: '%s'); refusing "
                   "to reuse it (use --fresh or another --cache)",
                   s->path, id_fields[i], xc_printable(shown, sizeof shown, v ? v : "?"), id_value(id, i));
          rc = -1;
        }
      }
    } else if (!o || apply_record(s, o, &rwhy) != 0) {
      snprintf(err, errn,
               "cache %s line %d: %s; the cache is left as it is (fix or delete that line, or start over "
               "with --fresh)",
               s->path, line_no, o ? rwhy : why);
      rc = -1;
    } else {
      s->loaded++;
    }
    cJSON_Delete(o);
    if (rc != 0) break;
    good_end = (size_t)(nl - buf) + 1;
    p = nl + 1;
  }
  free(buf);
  if (rc != 0) return rc;
  if (line_no == 0) return 0; /* empty, or only a torn identity line: open starts it afresh */
  if (good_end < size && truncate(s->path, (off_t)good_end) != 0) {
    snprintf(err, errn, "cache %s: cannot cut its torn last line: %s", s->path, strerror(errno));
    return -1;
  }
  return 1;
}

/* Takes path.lock (flock, exclusive, not waiting) and writes our pid into it:
 * two tuners on one cache would record every measurement twice, and one's
 * start could cut the other's records. The lock goes with the process, so a
 * killed tuner never leaves a stale one. */
static int take_lock(tune_store *s, char *err, size_t errn) {
  char lpath[4200];
  snprintf(lpath, sizeof lpath, "%s.lock", s->path);
  s->lock_fd = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (s->lock_fd < 0) {
    snprintf(err, errn, "cache %s: cannot open its lock file %s: %s", s->path, lpath, strerror(errno));
    return -1;
  }
  if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = "";
    const ssize_t n = pread(s->lock_fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? n : 0] = '\0';
    pid[strcspn(pid, "\n")] = '\0';
    snprintf(err, errn, "cache %s is in use by another xattn-tune (pid %s, lock %s); wait for it or use another --cache",
             s->path, pid[0] ? pid : "?", lpath);
    return -1;
  }
  char line[32];
  const int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
  if (ftruncate(s->lock_fd, 0) != 0 || pwrite(s->lock_fd, line, (size_t)n, 0) != n) {
    snprintf(err, errn, "cache %s: cannot write its lock file %s: %s", s->path, lpath, strerror(errno));
    return -1;
  }
  return 0;
}

tune_store *tune_store_open(const char *path, const tune_identity *id, int fresh, char *err,
                            size_t errn) {
  tune_store *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->path = dupstr(path);
  s->fd = -1;
  s->lock_fd = -1;
  s->durable = 1;
  const char *why = NULL;
  if (xc_output_path_ok(path, &why)) {
    snprintf(err, errn, "cache %s: is %s, not a regular file", path, why);
    tune_store_close(s);
    return NULL;
  }
  if (take_lock(s, err, errn) != 0) {
    tune_store_close(s);
    return NULL;
  }
  struct stat st;
  if (fresh && stat(path, &st) == 0) {
    char aside[4096];
    snprintf(aside, sizeof aside, "%s.%ld.old", path, (long)time(NULL));
    if (rename(path, aside) != 0) {
      snprintf(err, errn, "cache %s: cannot move it aside: %s", path, strerror(errno));
      tune_store_close(s);
      return NULL;
    }
  }
  int had = load(s, id, err, errn);
  if (had < 0) {
    tune_store_close(s);
    return NULL;
  }
  s->fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (s->fd < 0) {
    snprintf(err, errn, "cache %s: cannot open it for appending: %s", path, strerror(errno));
    tune_store_close(s);
    return NULL;
  }
  if (had == 0) {
    if (ftruncate(s->fd, 0) != 0 || write_identity(s, id) != 0) {
      snprintf(err, errn, "cache %s: cannot write it: %s", path, strerror(errno));
      tune_store_close(s);
      return NULL;
    }
  }
  return s;
}

void tune_store_close(tune_store *s) {
  if (!s) return;
  if (s->fd >= 0) close(s->fd);
  if (s->lock_fd >= 0) close(s->lock_fd); /* releases the flock */
  for (int i = 0; i < s->n; i++) {
    free(s->e[i].cls);
    free(s->e[i].cand);
    free(s->e[i].phase);
    free(s->e[i].t);
    free(s->e[i].why);
  }
  free(s->e);
  free(s->path);
  free(s);
}

int tune_store_times(tune_store *s, const char *cls, const char *cand, const char *phase,
                     const double **times) {
  entry *e = find(s, cls, cand, phase, 0);
  if (times) *times = e ? e->t : NULL;
  return e ? e->n : 0;
}

int tune_store_add_time(tune_store *s, const char *cls, const char *cand, const char *phase,
                        int rep, double seconds) {
  entry *e = find(s, cls, cand, phase, 1);
  if (!e || rep != e->n) return -1;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "t", "m");
  cJSON_AddStringToObject(o, "class", cls);
  cJSON_AddStringToObject(o, "cand", cand);
  cJSON_AddStringToObject(o, "phase", phase);
  cJSON_AddNumberToObject(o, "rep", rep);
  /* %.17g round-trips a double exactly (cJSON's own printing may not), so a
   * resumed run sees bit-identical values and takes the same decisions */
  char num[40];
  snprintf(num, sizeof num, "%.17g", seconds);
  cJSON_AddRawToObject(o, "sec", num);
  int rc = write_line(s, o);
  cJSON_Delete(o);
  if (rc != 0) return -1;
  return push_time(e, seconds);
}

int tune_store_verdict(tune_store *s, const char *cls, const char *cand, int *ok,
                       const char **why) {
  entry *e = find(s, cls, cand, "verify", 0);
  if (!e || e->verdict < 0) return 0;
  if (ok) *ok = e->verdict;
  if (why) *why = e->why ? e->why : "";
  return 1;
}

int tune_store_add_verdict(tune_store *s, const char *cls, const char *cand, int ok,
                           const char *why) {
  entry *e = find(s, cls, cand, "verify", 1);
  if (!e) return -1;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "t", "v");
  cJSON_AddStringToObject(o, "class", cls);
  cJSON_AddStringToObject(o, "cand", cand);
  cJSON_AddBoolToObject(o, "ok", ok);
  cJSON_AddStringToObject(o, "why", why ? why : "");
  int rc = write_line(s, o);
  cJSON_Delete(o);
  if (rc != 0) return -1;
  e->verdict = ok ? 1 : 0;
  free(e->why);
  e->why = dupstr(why ? why : "");
  return 0;
}

void tune_store_set_durable(tune_store *s, int durable) { s->durable = durable; }

int tune_store_loaded(const tune_store *s) { return s->loaded; }
int tune_store_dropped(const tune_store *s) { return s->dropped; }
const char *tune_store_path(const tune_store *s) { return s->path; }
