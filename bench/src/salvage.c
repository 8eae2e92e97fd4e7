/* The complete benchmarks of a killed run's temp file, kept as a result of
 * their own (bench/include/xattn_bench/salvage.h). */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/salvage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xattn_bench/machine.h"
#include "xattn_common/files.h"

/* Google Benchmark's JSON reporter writes each entry of "benchmarks" at four
 * spaces of indent, from a line "    {" to a line "    }" (the context's
 * deeper objects sit further in), one key per line. Read as text: its
 * numbers may be NaN, which no strict JSON parser takes (the Python tools
 * read them). */
typedef struct entry {
  const char *at; /* "    {" */
  size_t len;     /* through "    }" */
  char run[512], type[32], aggregate[32];
} entry;

/* The string value of "key" inside [at, at + len), "" when absent. */
static void field(const char *at, size_t len, const char *key, char *out, size_t outlen) {
  char pat[64];
  snprintf(pat, sizeof pat, "\n      \"%s\": \"", key);
  out[0] = 0;
  const char *end = at + len, *p = strstr(at, pat);
  if (!p || p >= end) return;
  p += strlen(pat);
  size_t n = 0;
  while (p + n < end && p[n] != '"' && p[n] != '\n' && n + 1 < outlen) n++;
  memcpy(out, p, n);
  out[n] = 0;
}

/* The closed entries after `list`, at most cap; their count. */
static int read_entries(const char *list, entry *e, int cap) {
  int n = 0;
  for (const char *p = list; n < cap && (p = strstr(p, "\n    {")) != NULL;) {
    const char *q = strstr(p, "\n    }");
    if (!q) break; /* cut inside this entry */
    e[n].at = p + 1;
    e[n].len = (size_t)(q + 6 - (p + 1));
    field(e[n].at, e[n].len, "run_name", e[n].run, sizeof e[n].run);
    field(e[n].at, e[n].len, "run_type", e[n].type, sizeof e[n].type);
    field(e[n].at, e[n].len, "aggregate_name", e[n].aggregate, sizeof e[n].aggregate);
    if (!e[n].run[0] || !e[n].type[0]) break; /* not a row of the reporter's: nothing from here on is trusted */
    n++;
    p = q + 6;
  }
  return n;
}

/* Entries left once the rows of a last benchmark cut short are dropped. A
 * benchmark's rows end with its last aggregate, "min" (bench_run's
 * ComputeStatistics, after Google Benchmark's own), where the run computed
 * aggregates (more than one repetition); without them every row is a
 * benchmark of its own. *benchmarks: how many benchmarks they hold. */
static int keep_complete(const entry *e, int n, int *benchmarks) {
  int aggregates = 0;
  for (int i = 0; i < n; i++) aggregates |= strcmp(e[i].type, "aggregate") == 0;
  if (n > 0 && aggregates && strcmp(e[n - 1].aggregate, "min") != 0) {
    const entry *cut = &e[n - 1];
    while (n > 0 && strcmp(e[n - 1].run, cut->run) == 0) n--;
  }
  *benchmarks = 0;
  for (int i = 0; i < n; i++) *benchmarks += i == 0 || strcmp(e[i].run, e[i - 1].run) != 0;
  return n;
}

/* The context's string value of key (a line of its own), "" when absent. */
static void context_string(const char *text, const char *list, const char *key, char *out, size_t outlen) {
  char pat[64];
  snprintf(pat, sizeof pat, "\n    \"%s\": \"", key);
  out[0] = 0;
  const char *p = strstr(text, pat);
  if (!p || p > list) return;
  p += strlen(pat);
  size_t n = 0;
  while (p[n] && p[n] != '"' && p[n] != '\n' && n + 1 < outlen) n++;
  memcpy(out, p, n);
  out[n] = 0;
}

/* text to a new file in dir (fsync'ed), published under stamp and label. */
static int publish_text(const char *text, const char *dir, const char *stamp, const char *label, char *out,
                        size_t outlen, char *err, size_t errlen) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/.salvage-XXXXXX", dir);
  const int fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(err, errlen, "results: cannot create a file in %s for a killed run's benchmarks", dir);
    return -1;
  }
  const mode_t mask = umask(0); /* the mode results get (mkstemp gives 0600) */
  umask(mask);
  const size_t len = strlen(text);
  const int ok = fchmod(fd, 0666 & ~mask) == 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
  close(fd);
  if (!ok) {
    unlink(tmp);
    snprintf(err, errlen, "results: cannot write %s", tmp);
    return -1;
  }
  if (xb_publish_result(tmp, dir, stamp, label, out, outlen, err, errlen) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

int xb_salvage_killed(const char *tmp_path, const char *dir, const char *stamp, long pid, char *out, size_t outlen,
                      char *err, size_t errlen) {
  char *text = NULL;
  const char *why = NULL;
  if (xc_read_text_file(tmp_path, (size_t)1 << 30, &text, NULL, &why) != XC_READ_OK) {
    snprintf(err, errlen, "results: cannot read %s: %s", tmp_path, why ? why : "too large, unreadable or holding a NUL");
    return -1;
  }
  const char *list = strstr(text, "\n  \"benchmarks\": [");
  const char *open = strstr(text, "{\n  \"context\": {");
  int kept = 0, n = 0;
  entry *e = NULL;
  if (list && open == text) {
    /* entries are at least ~200 bytes: the text bounds their count */
    const int cap = (int)(strlen(list) / 64 + 1);
    e = malloc(sizeof *e * (size_t)cap);
    if (!e) {
      free(text);
      snprintf(err, errlen, "results: out of memory reading %s", tmp_path);
      return -1;
    }
    n = keep_complete(e, read_entries(list, e, cap), &kept);
  }
  if (kept == 0) {
    free(e);
    free(text);
    return 0;
  }
  char label[200], base[160];
  context_string(text, list, "xattn_label", base, sizeof base);
  if (!base[0]) context_string(text, list, "xattn_suite", base, sizeof base);
  /* xb_sanitize_label keeps 64 characters of a label: "-killed" must stay */
  snprintf(label, sizeof label, "%.57s-killed", base[0] ? base : "run");
  /* the context with xattn_killed_run first, the kept entries, the brackets */
  const size_t head = (size_t)(list - text) + strlen("\n  \"benchmarks\": [");
  size_t body = 0;
  for (int i = 0; i < n; i++) body += e[i].len + 2;
  char *json = malloc(head + body + 512);
  if (!json) {
    free(e);
    free(text);
    snprintf(err, errlen, "results: out of memory keeping a killed run's benchmarks");
    return -1;
  }
  const size_t ctx0 = strlen("{\n  \"context\": {");
  size_t at = 0;
  memcpy(json, text, ctx0);
  at += ctx0;
  at += (size_t)sprintf(json + at,
                        "\n    \"xattn_killed_run\": \"%d complete benchmark(s) of a run killed before its end (pid %ld), "
                        "kept by the next run into this folder\",",
                        kept, pid);
  memcpy(json + at, text + ctx0, head - ctx0);
  at += head - ctx0;
  for (int i = 0; i < n; i++) {
    json[at++] = '\n';
    memcpy(json + at, e[i].at, e[i].len);
    at += e[i].len;
    if (i + 1 < n) json[at++] = ',';
  }
  memcpy(json + at, "\n  ]\n}\n", 8);
  free(e);
  free(text);
  const int rc = publish_text(json, dir, stamp, label, out, outlen, err, errlen);
  free(json);
  return rc == 0 ? kept : -1;
}

int xb_measured_rows(const char *path, const char *key, void (*each)(const char *name, void *ctx), void *ctx) {
  char *text = NULL;
  if (xc_read_text_file(path, (size_t)1 << 30, &text, NULL, NULL) != XC_READ_OK) return 0;
  const char *list = strstr(text, "\n  \"benchmarks\": [");
  char found[64];
  int n = 0, benchmarks = 0;
  if (list) context_string(text, list, "xattn_resume_key", found, sizeof found);
  if (list && found[0] && strcmp(found, key) == 0) {
    const int cap = (int)(strlen(list) / 64 + 1);
    entry *e = malloc(sizeof *e * (size_t)cap);
    if (e) {
      n = read_entries(list, e, cap);
      static const char timed[] = "/real_time";
      char name[512];
      for (int i = 0; i < n; i++) {
        if (i > 0 && strcmp(e[i].run, e[i - 1].run) == 0) continue; /* the same benchmark's next row */
        /* a row that failed (SkipWithError) measured nothing */
        const char *bad = strstr(e[i].at, "\n      \"error_occurred\": true");
        if (bad && bad < e[i].at + e[i].len) continue;
        snprintf(name, sizeof name, "%s", e[i].run);
        const size_t len = strlen(name);
        if (len > sizeof timed - 1 && strcmp(name + len - (sizeof timed - 1), timed) == 0)
          name[len - (sizeof timed - 1)] = 0;
        each(name, ctx);
        benchmarks++;
      }
      free(e);
    }
  }
  free(text);
  return benchmarks;
}
