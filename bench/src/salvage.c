/* The complete benchmarks of a killed run's temp file, kept as a result of
 * their own, and the rows a results file measured, for --resume
 * (bench/include/xattn_bench/salvage.h). */
#define _GNU_SOURCE /* memmem */
#include "xattn_bench/salvage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xattn_bench/machine.h"
#include "xattn_common/files.h"

/* Google Benchmark's JSON reporter writes the context from the document's
 * first line, then each entry of "benchmarks" at four spaces of indent, from
 * a line "    {" to a line "    }" (the context's deeper objects sit further
 * in), one key per line, entries separated by ",\n". Read as text: its
 * numbers may be NaN, which no strict JSON parser takes (the Python tools
 * read them). */
static const char doc_open[] = "{\n  \"context\": {", list_open[] = "\n  \"benchmarks\": [";

/* The string value of `pattern` (a line's start through its opening quote)
 * inside [from, end), "" when absent. */
static void string_value(const char *from, const char *end, const char *pattern, char *out, size_t outlen) {
  out[0] = 0;
  const char *p = memmem(from, (size_t)(end - from), pattern, strlen(pattern));
  if (!p) return;
  p += strlen(pattern);
  size_t n = 0;
  while (p + n < end && p[n] != '"' && p[n] != '\n' && n + 1 < outlen) n++;
  memcpy(out, p, n);
  out[n] = 0;
}

typedef struct entry {
  const char *at, *end; /* "    {" through "    }" */
  char run[512], type[32], aggregate[32];
  int failed; /* error_occurred: the row measured nothing (SkipWithError) */
} entry;

/* The next closed entry from *p on, *p moved past it: 0 at the end, where
 * the kill cut an entry, or at an entry that is not the reporter's (no
 * run_name or run_type: nothing from there on is trusted). */
static int next_entry(const char **p, entry *e) {
  const char *a = strstr(*p, "\n    {"), *q = a ? strstr(a, "\n    }") : NULL;
  if (!q) return 0;
  e->at = a + 1;
  e->end = q + 6;
  string_value(e->at, e->end, "\n      \"run_name\": \"", e->run, sizeof e->run);
  string_value(e->at, e->end, "\n      \"run_type\": \"", e->type, sizeof e->type);
  string_value(e->at, e->end, "\n      \"aggregate_name\": \"", e->aggregate, sizeof e->aggregate);
  static const char failed[] = "\n      \"error_occurred\": true";
  e->failed = memmem(e->at, (size_t)(e->end - e->at), failed, sizeof failed - 1) != NULL;
  if (!e->run[0] || !e->type[0]) return 0;
  *p = e->end;
  return 1;
}

/* The complete benchmarks of the entries after `list`: the span of text
 * [*from, *to) holding them (entries and their separators), and how many. A
 * benchmark's rows end with its last aggregate, "min" (bench_run's
 * ComputeStatistics, after Google Benchmark's own), where the run computed
 * aggregates (more than one repetition); without them every row is a
 * benchmark of its own. So only the last benchmark can be cut short, and it
 * is dropped unless its last row is a "min". */
static int complete_span(const char *list, const char **from, const char **to) {
  const char *p = list;
  entry e;
  char last_run[512] = "", last_aggregate[32] = "";
  const char *end_before_last = NULL; /* where the benchmark before the last one ends */
  int benchmarks = 0, aggregates = 0;
  *from = *to = NULL;
  while (next_entry(&p, &e)) {
    if (!*from) *from = e.at;
    if (strcmp(e.run, last_run) != 0) { /* a benchmark starts */
      end_before_last = *to;
      benchmarks++;
      snprintf(last_run, sizeof last_run, "%s", e.run);
    }
    aggregates |= strcmp(e.type, "aggregate") == 0;
    snprintf(last_aggregate, sizeof last_aggregate, "%s", e.aggregate);
    *to = e.end;
  }
  if (benchmarks > 0 && aggregates && strcmp(last_aggregate, "min") != 0) {
    *to = end_before_last;
    benchmarks--;
  }
  return benchmarks;
}

/* text to a new file in dir (fsync'ed), published under stamp and label. */
static int publish_text(const char *text, size_t len, const char *dir, const char *stamp, const char *label,
                        char *out, size_t outlen, char *err, size_t errlen) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/.salvage-XXXXXX", dir);
  const int fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(err, errlen, "results: cannot create a file in %s for a killed run's benchmarks", dir);
    return -1;
  }
  const mode_t mask = umask(0); /* the mode results get (mkstemp gives 0600) */
  umask(mask);
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

/* The whole file at path, NUL-terminated (malloc'ed), and where its
 * benchmarks list starts (*list); NULL when it is not the reporter's
 * document (why in err, when err is given and the file could not be read). */
static char *read_document(const char *path, const char **list, char *err, size_t errlen) {
  char *text = NULL;
  const char *why = NULL;
  if (xc_read_text_file(path, (size_t)1 << 30, &text, NULL, &why) != XC_READ_OK) {
    if (err) snprintf(err, errlen, "results: cannot read %s: %s", path, why ? why : "too large, unreadable or holding a NUL");
    return NULL;
  }
  *list = strncmp(text, doc_open, sizeof doc_open - 1) == 0 ? strstr(text, list_open) : NULL;
  if (!*list) {
    free(text);
    if (err) err[0] = 0;
    return NULL;
  }
  return text;
}

int xb_salvage_killed(const char *tmp_path, const char *dir, const char *stamp, long pid, char *out, size_t outlen,
                      char *err, size_t errlen) {
  const char *list, *from, *to;
  char *text = read_document(tmp_path, &list, err, errlen);
  if (!text) return err[0] ? -1 : 0;
  const int kept = complete_span(list, &from, &to);
  if (kept == 0) {
    free(text);
    return 0;
  }
  char label[200], base[160];
  string_value(text, list, "\n    \"xattn_label\": \"", base, sizeof base);
  if (!base[0]) string_value(text, list, "\n    \"xattn_suite\": \"", base, sizeof base);
  /* xb_sanitize_label keeps 64 characters of a label: "-killed" must stay */
  snprintf(label, sizeof label, "%.57s-killed", base[0] ? base : "run");
  char note[256];
  const int note_len = snprintf(note, sizeof note,
                                "\n    \"xattn_killed_run\": \"%d complete benchmark(s) of a run killed before its end "
                                "(pid %ld), kept by the next run into this folder\",",
                                kept, pid);
  /* the context with xattn_killed_run first, the kept entries, the brackets */
  static const char close[] = "\n  ]\n}\n";
  const size_t ctx0 = sizeof doc_open - 1, head = (size_t)(list - text) + sizeof list_open - 1,
               body = (size_t)(to - from), len = head + (size_t)note_len + 1 + body + sizeof close - 1;
  char *json = malloc(len);
  if (!json) {
    free(text);
    snprintf(err, errlen, "results: out of memory keeping a killed run's benchmarks");
    return -1;
  }
  size_t at = 0;
  memcpy(json + at, text, ctx0), at += ctx0;
  memcpy(json + at, note, (size_t)note_len), at += (size_t)note_len;
  memcpy(json + at, text + ctx0, head - ctx0), at += head - ctx0;
  json[at++] = '\n';
  memcpy(json + at, from, body), at += body;
  memcpy(json + at, close, sizeof close - 1);
  free(text);
  const int rc = publish_text(json, len, dir, stamp, label, out, outlen, err, errlen);
  free(json);
  return rc == 0 ? kept : -1;
}

int xb_measured_rows(const char *path, const char *key, void (*each)(const char *name, void *ctx), void *ctx) {
  const char *list;
  char *text = read_document(path, &list, NULL, 0);
  if (!text) return 0;
  char found[64];
  string_value(text, list, "\n    \"xattn_resume_key\": \"", found, sizeof found);
  int benchmarks = 0;
  if (strcmp(found, key) == 0) {
    static const char timed[] = "/real_time";
    const char *p = list;
    char last_run[512] = "";
    entry e;
    while (next_entry(&p, &e)) {
      if (strcmp(e.run, last_run) == 0) continue; /* the same benchmark's next row */
      snprintf(last_run, sizeof last_run, "%s", e.run);
      if (e.failed) continue; /* it measured nothing */
      const size_t len = strlen(e.run);
      if (len > sizeof timed - 1 && strcmp(e.run + len - (sizeof timed - 1), timed) == 0)
        e.run[len - (sizeof timed - 1)] = 0;
      each(e.run, ctx);
      benchmarks++;
    }
  }
  free(text);
  return benchmarks;
}
