#include "tune_merge.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tune_header.h"

void tune_provenance_field(const char *provenance, const char *key, char *out, size_t outn) {
  out[0] = '\0';
  const size_t klen = strlen(key);
  for (const char *p = provenance; (p = strstr(p, key)) != NULL; p += klen) {
    if (p != provenance && !(p >= provenance + 2 && p[-2] == ';' && p[-1] == ' ')) continue;
    if (p[klen] != ':') continue;
    const char *v = p + klen + 1;
    while (*v == ' ') v++;
    size_t n = strcspn(v, ";");
    while (n && v[n - 1] == ' ') n--;
    snprintf(out, outn, "%.*s", (int)(n < outn ? n : outn - 1), v);
    return;
  }
}

typedef struct merge_input {
  const char *path;
  tune_row *rows;
  int n_rows;
  char provenance[2048];
  char machine[128], commit[64], speedup[128], digest[72];
  tune_header_cpu *cpu;
  int class_index; /* -1: a class already given by an earlier input */
} merge_input;

static int load_input(merge_input *in, char *err, size_t errn) {
  in->rows = calloc(TUNE_MAX_HEADER_ROWS, sizeof(tune_row));
  in->cpu = calloc(1, sizeof *in->cpu);
  if (!in->rows || !in->cpu) {
    snprintf(err, errn, "%s: out of memory", in->path);
    return -1;
  }
  in->n_rows = tune_header_parse(in->path, in->rows, TUNE_MAX_HEADER_ROWS, in->provenance,
                                 sizeof in->provenance, err, errn);
  if (in->n_rows < 0 || tune_header_parse_cpu(in->path, in->cpu, err, errn) != 0) return -1;
  if (in->cpu->n_classes > 0) {
    snprintf(err, errn, "%s: already a merged header (%d CPU classes); merge the machines' own tuned headers",
             in->path, in->cpu->n_classes);
    return -1;
  }
  if (!in->cpu->has_tuned_on) {
    snprintf(err, errn, "%s: names no CPU class it was tuned on (XATTN_CONFIG_TUNED_CPU); only headers "
                        "written by xattn-tune run can be merged", in->path);
    return -1;
  }
  tune_provenance_field(in->provenance, "machine", in->machine, sizeof in->machine);
  tune_provenance_field(in->provenance, "commit", in->commit, sizeof in->commit);
  tune_provenance_field(in->provenance, "speedup", in->speedup, sizeof in->speedup);
  tune_provenance_field(in->provenance, "kernels sha256", in->digest, sizeof in->digest);
  if (!in->digest[0]) {
    snprintf(err, errn, "%s: its provenance names no kernel digest ('kernels sha256:...')", in->path);
    return -1;
  }
  if (!in->machine[0]) snprintf(in->machine, sizeof in->machine, "unknown");
  return 0;
}

static void free_inputs(merge_input *ins, int n) {
  for (int i = 0; i < n; i++) {
    free(ins[i].rows);
    free(ins[i].cpu);
  }
  free(ins);
}

/* appends printf text to a growing buffer (truncates silently at cap) */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (w > 0) *len += (size_t)w < cap - *len ? (size_t)w : cap - *len - 1;
}

int tune_merge(const tune_merge_opts *o, FILE *log, char *err, size_t errn) {
  if (o->n_inputs < 1) {
    snprintf(err, errn, "merge: no tuned headers given");
    return -1;
  }
  merge_input *ins = calloc((size_t)o->n_inputs, sizeof *ins);
  tune_header_cpu *out = calloc(1, sizeof *out);
  tune_row *rows = calloc(TUNE_MAX_HEADER_ROWS, sizeof(tune_row));
  tune_row *base = calloc(TUNE_MAX_HEADER_ROWS, sizeof(tune_row));
  const size_t cap = 65536;
  char *comment = malloc(cap), *prov = malloc(cap);
  int rc = -1, n = 0;
  if (!ins || !out || !rows || !base || !comment || !prov) {
    snprintf(err, errn, "merge: out of memory");
    goto done;
  }
  for (int i = 0; i < o->n_inputs; i++) {
    ins[i].path = o->inputs[i];
    if (load_input(&ins[i], err, errn) != 0) goto done;
    if (strcmp(ins[i].digest, ins[0].digest) != 0) {
      snprintf(err, errn, "%s: tuned on kernels sha256:%s, but %s on sha256:%s; tune every machine at one commit",
               ins[i].path, ins[i].digest, ins[0].path, ins[0].digest);
      goto done;
    }
  }
  char base_prov[2048];
  const int nbase = tune_header_parse(o->base, base, TUNE_MAX_HEADER_ROWS, base_prov, sizeof base_prov, err, errn);
  if (nbase < 0) goto done;

  snprintf(out->kernel_digest, sizeof out->kernel_digest, "%s", ins[0].digest);
  size_t cl = 0, pl = 0;
  put(comment, cap, &cl, "merged by xattn-tune merge from %d tuned header(s), %s\n", o->n_inputs, o->date);
  put(comment, cap, &cl, "kernel digest (every input): sha256:%s\n\n", ins[0].digest);
  put(prov, cap, &pl, "xattn-tune merge; date: %s; machines:", o->date);
  for (int i = 0; i < o->n_inputs; i++) {
    merge_input *in = &ins[i];
    in->class_index = -1;
    for (int c = 0; c < i; c++)
      if (ins[c].class_index >= 0 && strcmp(ins[c].cpu->tuned_on.name, in->cpu->tuned_on.name) == 0) {
        /* one set of rows per class: the first input given keeps it */
        put(comment, cap, &cl, "%s (%s): CPU class %s is already given by %s; left out\n", in->machine, in->path,
            in->cpu->tuned_on.name, o->inputs[c]);
        put(prov, cap, &pl, " %s (class %s as %s, left out; commit %s);", in->machine, in->cpu->tuned_on.name,
            ins[c].machine, in->commit);
        if (log) fprintf(log, "[merge] %s: class %s already given by %s; left out\n", in->path,
                         in->cpu->tuned_on.name, o->inputs[c]);
        goto next;
      }
    if (out->n_classes == TUNE_MAX_CPU_CLASSES) {
      snprintf(err, errn, "merge: more than %d CPU classes", TUNE_MAX_CPU_CLASSES);
      goto done;
    }
    if (n + in->n_rows + nbase > TUNE_MAX_HEADER_ROWS) {
      snprintf(err, errn, "merge: more than %d rows in all", TUNE_MAX_HEADER_ROWS);
      goto done;
    }
    in->class_index = out->n_classes;
    out->classes[out->n_classes++] = in->cpu->tuned_on;
    /* a class keeps its machine's table whole (its own catch-all row included),
       so it behaves exactly as that machine's tuned header */
    for (int r = 0; r < in->n_rows; r++) {
      rows[n] = in->rows[r];
      if (r == 0)
        snprintf(rows[n].comment, sizeof rows[n].comment, "CPU class %d %s: machine %s, commit %s, speedup %s",
                 in->class_index, in->cpu->tuned_on.name, in->machine, in->commit, in->speedup);
      out->row_class[n++] = in->class_index;
    }
    put(comment, cap, &cl, "class %d %s: machine %s, commit %s, speedup %s\n  from %s\n  provenance: %s\n",
        in->class_index, in->cpu->tuned_on.name, in->machine, in->commit, in->speedup, in->path, in->provenance);
    put(prov, cap, &pl, " %s (class %s, commit %s, speedup %s);", in->machine, in->cpu->tuned_on.name,
        in->commit, in->speedup);
    if (log) fprintf(log, "[merge] class %d %s: %d rows from %s (%s)\n", in->class_index, in->cpu->tuned_on.name,
                     in->n_rows, in->machine, in->path);
  next:;
  }
  for (int r = 0; r < nbase; r++) {
    rows[n] = base[r];
    if (r == 0)
      snprintf(rows[n].comment, sizeof rows[n].comment,
               "every CPU: the hand default rows (%s), for CPUs of no listed class's ISA", o->base);
    out->row_class[n++] = -1;
  }
  put(comment, cap, &cl, "\nhand default rows for CPUs of no listed class's ISA: %s\n", o->base);
  put(prov, cap, &pl, " kernels sha256:%s", ins[0].digest);
  rc = tune_header_write_cpu(o->out, comment, prov, rows, n, out, err, errn);
done:
  if (ins) free_inputs(ins, o->n_inputs);
  free(out);
  free(rows);
  free(base);
  free(comment);
  free(prov);
  return rc;
}
