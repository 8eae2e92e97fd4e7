#include "xattn_common/files.h"
#include "tune_header.h"
#include "xattn/xattn_introspect.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *read_all(const char *path) {
  FILE *f = xc_fopen_regular(path, NULL); /* a FIFO must not block the open */
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  if (b) b[n] = '\0';
  fclose(f);
  return b;
}

static const char *skip_space(const char *p) {
  for (;;) {
    while (*p && (isspace((unsigned char)*p) || *p == '\\')) p++;
    if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      if (!e) return p + strlen(p);
      p = e + 2;
    } else {
      return p;
    }
  }
}

static const char *parse_str(const char *p, char *out, size_t n) {
  p = skip_space(p);
  if (*p != '"') return NULL;
  p++;
  size_t k = 0;
  while (*p && *p != '"') {
    if (*p == '\\' && p[1]) p++;
    if (k + 1 < n) out[k++] = *p;
    p++;
  }
  out[k] = '\0';
  if (*p != '"') return NULL;
  return p + 1;
}

static const char *parse_int(const char *p, int *v) {
  p = skip_space(p);
  char *end;
  long x = strtol(p, &end, 10);
  if (end == p) return NULL;
  *v = (int)x;
  return end;
}

static const char *expect(const char *p, char c) {
  p = skip_space(p);
  return *p == c ? p + 1 : NULL;
}

/* X("isa", "dtype", d, dv, "mode", eb, pb, "variant", "layout", "schedule", threads
 *   [, kv_splits, prefetch[, lanes_rows[, lanes_rows_fp8[, prefetch_level]]]]) */
static const char *parse_row(const char *p, tune_row *r) {
  memset(r, 0, sizeof *r);
  if (!(p = expect(p, '('))) return NULL;
  if (!(p = parse_str(p, r->isa, sizeof r->isa)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_str(p, r->dtype, sizeof r->dtype)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &r->d)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &r->dv)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_str(p, r->mode, sizeof r->mode)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &r->extend_bucket)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &r->prefix_bucket)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_str(p, r->variant, sizeof r->variant)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_str(p, r->layout, sizeof r->layout)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_str(p, r->schedule, sizeof r->schedule)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &r->threads))) return NULL;
  const char *more = expect(p, ',');
  if (more) {
    if (!(p = parse_int(more, &r->kv_splits)) || !(p = expect(p, ','))) return NULL;
    if (!(p = parse_int(p, &r->prefetch))) return NULL;
    const char *lanes = expect(p, ',');
    if (lanes && !(p = parse_int(lanes, &r->lanes_rows))) return NULL;
    const char *fp8 = lanes ? expect(p, ',') : NULL;
    if (fp8 && !(p = parse_int(fp8, &r->lanes_rows_fp8))) return NULL;
    const char *level = fp8 ? expect(p, ',') : NULL;
    if (level && !(p = parse_int(level, &r->prefetch_level))) return NULL;
  }
  if (!(p = expect(p, ')'))) return NULL;
  return p;
}

/* XATTN_CONFIG_FORMAT of a header's text: 1 when absent, -1 when not a number. */
static int header_format(const char *txt) {
  const char *p = strstr(txt, "#define XATTN_CONFIG_FORMAT");
  if (!p) return 1;
  p += strlen("#define XATTN_CONFIG_FORMAT");
  if (*p != ' ' && *p != '\t') return -1;
  int v;
  return parse_int(p, &v) ? v : -1;
}

/* Appends the current-format rows of a parsed row: one row, or for a format-1
 * extend bucket every current bucket it holds (the same choice for each), so a
 * format-1 header keeps its meaning. Returns the new count (may exceed cap). */
static int add_row_in_current_format(const tune_row *r, int format, tune_row *rows, int n, int cap) {
  if (format == XATTN_CONFIG_FORMAT_CURRENT || r->extend_bucket == -1) {
    if (n < cap) rows[n] = *r;
    return n + 1;
  }
  for (int b = 0; b < XATTN_EXTEND_BUCKETS; b++) {
    if (xattn_extend_bucket_in_format(format, b) != r->extend_bucket) continue;
    if (n < cap) {
      rows[n] = *r;
      rows[n].extend_bucket = b;
    }
    n++;
  }
  return n;
}

int tune_header_parse(const char *path, tune_row *rows, int cap, char *provenance, size_t provn,
                      char *err, size_t errn) {
  char *txt = read_all(path);
  if (!txt) {
    snprintf(err, errn, "%s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  const int format = header_format(txt);
  if (format != 1 && format != XATTN_CONFIG_FORMAT_CURRENT) {
    snprintf(err, errn, "%s: XATTN_CONFIG_FORMAT is not 1 or %d, the formats this tuner reads (docs/formats.md §4)",
             path, XATTN_CONFIG_FORMAT_CURRENT);
    free(txt);
    return -1;
  }
  if (provenance && provn) {
    provenance[0] = '\0';
    const char *pv = strstr(txt, "#define XATTN_CONFIG_PROVENANCE");
    if (pv) {
      pv += strlen("#define XATTN_CONFIG_PROVENANCE");
      if (!parse_str(pv, provenance, provn)) provenance[0] = '\0';
    }
  }
  const char *p = strstr(txt, "#define XATTN_CONFIG_CLASSES(X)");
  if (!p) {
    snprintf(err, errn, "%s: no '#define XATTN_CONFIG_CLASSES(X)'", path);
    free(txt);
    return -1;
  }
  p += strlen("#define XATTN_CONFIG_CLASSES(X)");
  /* the macro ends at the first line that does not end in a backslash */
  const char *end = p;
  for (;;) {
    const char *nl = strchr(end, '\n');
    if (!nl) {
      end += strlen(end);
      break;
    }
    const char *q = nl;
    while (q > end && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r')) q--;
    if (q == end || q[-1] != '\\') {
      end = nl;
      break;
    }
    end = nl + 1;
  }
  int n = 0;
  for (;;) {
    p = skip_space(p);
    if (p >= end || *p != 'X') break;
    tune_row r;
    const char *q = parse_row(p + 1, &r);
    if (!q) {
      int line = 1;
      for (const char *c = txt; c < p; c++) line += *c == '\n';
      snprintf(err, errn, "%s:%d: row %d is not X(\"isa\", \"dtype\", d, dv, \"mode\", eb, pb, "
                          "\"variant\", \"layout\", \"schedule\", threads[, kv_splits, prefetch[, lanes_rows[, lanes_rows_fp8[, prefetch_level]]]])", path, line, n + 1);
      free(txt);
      return -1;
    }
    const int buckets = format == 1 ? XATTN_EXTEND_BUCKETS_FORMAT1 : XATTN_EXTEND_BUCKETS;
    if (r.extend_bucket < -1 || r.extend_bucket >= buckets) {
      int line = 1;
      for (const char *c = txt; c < p; c++) line += *c == '\n';
      snprintf(err, errn, "%s:%d: row %d: extend bucket %d is not -1 or a bucket of format %d", path, line, n + 1,
               r.extend_bucket, format);
      free(txt);
      return -1;
    }
    n = add_row_in_current_format(&r, format, rows, n, cap);
    p = q;
  }
  free(txt);
  if (n == 0) {
    snprintf(err, errn, "%s: XATTN_CONFIG_CLASSES has no rows", path);
    return -1;
  }
  return n < cap ? n : cap;
}

static int str_match(const char *pat, const char *v) { return !strcmp(pat, "*") || !strcmp(pat, v); }
static int int_match(int pat, int v) { return pat == -1 || pat == v; }

int tune_row_matches(const tune_row *r, const char *isa, const char *dtype, int d, int dv,
                     const char *mode, int extend_bucket, int prefix_bucket) {
  return str_match(r->isa, isa) && str_match(r->dtype, dtype) && int_match(r->d, d) &&
         int_match(r->dv, dv) && str_match(r->mode, mode) &&
         int_match(r->extend_bucket, extend_bucket) && int_match(r->prefix_bucket, prefix_bucket);
}

static int is_catch_all(const tune_row *r) {
  return !strcmp(r->isa, "*") && !strcmp(r->dtype, "*") && r->d == -1 && r->dv == -1 &&
         !strcmp(r->mode, "*") && r->extend_bucket == -1 && r->prefix_bucket == -1;
}

/* Text that must not close the comment or the string it lands in. */
static void put_comment_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (s[0] == '*' && s[1] == '/') {
      fputs("* /", f);
      s++;
    } else {
      fputc(*s, f);
    }
  }
}

static void put_c_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if (*s == '\n') {
      fputc(' ', f);
      continue;
    }
    fputc(*s, f);
  }
  fputc('"', f);
}

/* C("name", "isa", "vendor", family, model, l2_kib, cores_per_l3) */
static void put_cpu_class(FILE *f, const xattn_cpu_class *c) {
  fputs("C(", f);
  put_c_string(f, c->name);
  fputs(", ", f);
  put_c_string(f, c->isa);
  fputs(", ", f);
  put_c_string(f, c->vendor);
  fprintf(f, ", %d, %d, %d, %d)", c->family, c->model, c->l2_kib, c->cores_per_l3);
}

static const char *parse_cpu_class(const char *p, xattn_cpu_class *c) {
  memset(c, 0, sizeof *c);
  p = skip_space(p);
  if (*p != 'C' || !(p = expect(p + 1, '('))) return NULL;
  if (!(p = parse_str(p, c->name, sizeof c->name)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_str(p, c->isa, sizeof c->isa)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_str(p, c->vendor, sizeof c->vendor)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &c->family)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &c->model)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &c->l2_kib)) || !(p = expect(p, ','))) return NULL;
  if (!(p = parse_int(p, &c->cores_per_l3)) || !(p = expect(p, ')'))) return NULL;
  return p;
}

static void put_cpu_part_before_rows(FILE *f, const tune_header_cpu *cpu) {
  if (cpu->kernel_digest[0]) {
    fputs("/* the kernels every merged tuning ran on (sha256 prefix, tune/digest.cmake); a build\n"
          "   of other kernels refuses this header (kernels/cmake/check_config_digest.cmake) */\n"
          "#define XATTN_CONFIG_KERNEL_DIGEST ", f);
    put_c_string(f, cpu->kernel_digest);
    fputs("\n\n", f);
  }
  if (cpu->has_tuned_on) {
    fputs("/* the CPU class this header was tuned on (xattn-tune merge reads it):\n"
          "   C(name, isa, vendor, family, model, L2 KiB per core, cores per L3) */\n"
          "#define XATTN_CONFIG_TUNED_CPU(C) ", f);
    put_cpu_class(f, &cpu->tuned_on);
    fputs("\n\n", f);
  }
  if (cpu->n_classes > 0) {
    fputs("/* CPU classes, by index: C(name, isa, vendor, family, model, L2 KiB per core, cores per L3).\n"
          "   The kernels use the rows of this CPU's class (exact, else the nearest of its ISA),\n"
          "   and the rows of class -1 (the hand default) when no class has its ISA. */\n"
          "#define XATTN_CONFIG_CPU_CLASSES(C) \\\n", f);
    for (int i = 0; i < cpu->n_classes; i++) {
      fprintf(f, "  /* %d */ ", i);
      put_cpu_class(f, &cpu->classes[i]);
      fputs(i + 1 < cpu->n_classes ? " \\\n" : "\n\n", f);
    }
  }
}

static void put_row_classes(FILE *f, const tune_header_cpu *cpu, int n) {
  if (!cpu || cpu->n_classes == 0) return;
  fputs("\n/* the CPU class of each row above, in order (-1: every CPU) */\n"
        "#define XATTN_CONFIG_ROW_CPU_CLASSES { \\\n   ", f);
  for (int i = 0; i < n; i++)
    fprintf(f, " %d%s%s", cpu->row_class[i], i + 1 < n ? "," : "", (i + 1) % 16 == 0 && i + 1 < n ? " \\\n   " : "");
  fputs(" }\n", f);
}

int tune_header_parse_cpu(const char *path, tune_header_cpu *cpu, char *err, size_t errn) {
  memset(cpu, 0, sizeof *cpu);
  for (int i = 0; i < TUNE_MAX_HEADER_ROWS; i++) cpu->row_class[i] = -1;
  char *txt = read_all(path);
  if (!txt) {
    snprintf(err, errn, "%s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  int rc = 0;
  const char *p;
  if ((p = strstr(txt, "#define XATTN_CONFIG_KERNEL_DIGEST")) &&
      !parse_str(p + strlen("#define XATTN_CONFIG_KERNEL_DIGEST"), cpu->kernel_digest, sizeof cpu->kernel_digest)) {
    snprintf(err, errn, "%s: XATTN_CONFIG_KERNEL_DIGEST is not a string", path);
    rc = -1;
  }
  if (rc == 0 && (p = strstr(txt, "#define XATTN_CONFIG_TUNED_CPU(C)"))) {
    if (!parse_cpu_class(p + strlen("#define XATTN_CONFIG_TUNED_CPU(C)"), &cpu->tuned_on)) {
      snprintf(err, errn, "%s: XATTN_CONFIG_TUNED_CPU is not C(\"name\", \"isa\", \"vendor\", family, model, "
                          "l2_kib, cores_per_l3)", path);
      rc = -1;
    }
    cpu->has_tuned_on = 1;
  }
  if (rc == 0 && (p = strstr(txt, "#define XATTN_CONFIG_CPU_CLASSES(C)"))) {
    p += strlen("#define XATTN_CONFIG_CPU_CLASSES(C)");
    for (;;) {
      const char *q = skip_space(p);
      if (*q != 'C') break;
      if (cpu->n_classes == TUNE_MAX_CPU_CLASSES) {
        snprintf(err, errn, "%s: more than %d CPU classes", path, TUNE_MAX_CPU_CLASSES);
        rc = -1;
        break;
      }
      if (!(p = parse_cpu_class(q, &cpu->classes[cpu->n_classes]))) {
        snprintf(err, errn, "%s: CPU class %d is not C(\"name\", \"isa\", \"vendor\", family, model, l2_kib, "
                            "cores_per_l3)", path, cpu->n_classes);
        rc = -1;
        break;
      }
      cpu->n_classes++;
    }
  }
  if (rc == 0 && (p = strstr(txt, "#define XATTN_CONFIG_ROW_CPU_CLASSES"))) {
    p = expect(p + strlen("#define XATTN_CONFIG_ROW_CPU_CLASSES"), '{');
    for (int i = 0; p; i++) {
      const char *q = skip_space(p);
      if (*q == '}') break;
      int v;
      if (i >= TUNE_MAX_HEADER_ROWS || !(q = parse_int(q, &v)) || v < -1 || v >= cpu->n_classes) {
        p = NULL;
        break;
      }
      cpu->row_class[i] = v;
      q = skip_space(q);
      p = *q == ',' ? q + 1 : q;
    }
    if (!p) {
      snprintf(err, errn, "%s: XATTN_CONFIG_ROW_CPU_CLASSES is not { class index or -1, ... } over the %d classes",
               path, cpu->n_classes);
      rc = -1;
    }
  }
  free(txt);
  return rc;
}

int tune_header_write(const char *path, const char *comment, const char *provenance,
                      const tune_row *rows, int n, char *err, size_t errn) {
  return tune_header_write_cpu(path, comment, provenance, rows, n, NULL, err, errn);
}

int tune_header_write_cpu(const char *path, const char *comment, const char *provenance,
                          const tune_row *rows, int n, const tune_header_cpu *cpu, char *err,
                          size_t errn) {
  if (n < 1 || !is_catch_all(&rows[n - 1])) {
    snprintf(err, errn, "%s: the last row must match every class", path);
    return -1;
  }
  if (cpu && cpu->n_classes > 0 && n > TUNE_MAX_HEADER_ROWS) {
    snprintf(err, errn, "%s: %d rows, more than the %d a header with CPU classes holds", path, n,
             TUNE_MAX_HEADER_ROWS);
    return -1;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) {
    snprintf(err, errn, "%s: cannot create: %s", tmp, strerror(errno));
    return -1;
  }
  fputs("/* xattn config header — written by xattn-tune (docs/formats.md §4 format).\n *\n", f);
  const char *p = comment;
  while (p && *p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), p);
    fputs(len ? " * " : " *", f);
    put_comment_text(f, line);
    fputc('\n', f);
    p = nl ? nl + 1 : p + len;
  }
  fputs(" *\n * Rows: X(isa, dtype, d, dv, mode, extend_bucket, prefix_bucket,\n"
        " *          variant, layout, schedule, threads[, kv_splits, prefetch[, lanes_rows[, lanes_rows_fp8[, prefetch_level]]]]);\n"
        " *          first"
        " * match wins, the last row matches everything. Build with -DXATTN_CONFIG_HEADER=<this file>.\n */\n",
        f);
  fputs("#ifndef XATTN_CONFIG_HEADER_INCLUDED\n#define XATTN_CONFIG_HEADER_INCLUDED\n\n", f);
  fprintf(f, "/* extend buckets of this format: xattn_extend_bucket (docs/formats.md §4) */\n"
             "#define XATTN_CONFIG_FORMAT %d\n\n", XATTN_CONFIG_FORMAT_CURRENT);
  fputs("#define XATTN_CONFIG_PROVENANCE \\\n  ", f);
  put_c_string(f, provenance);
  fputs("\n\n", f);
  if (cpu) put_cpu_part_before_rows(f, cpu);
  fputs("#define XATTN_CONFIG_CLASSES(X) \\\n", f);
  for (int i = 0; i < n; i++) {
    const tune_row *r = &rows[i];
    if (r->comment[0]) {
      fputs("  /* ", f);
      put_comment_text(f, r->comment);
      fputs(" */ \\\n", f);
    }
    fputs("  X(", f);
    put_c_string(f, r->isa);
    fputs(", ", f);
    put_c_string(f, r->dtype);
    fprintf(f, ", %d, %d, ", r->d, r->dv);
    put_c_string(f, r->mode);
    fprintf(f, ", %d, %d, ", r->extend_bucket, r->prefix_bucket);
    put_c_string(f, r->variant);
    fputs(", ", f);
    put_c_string(f, r->layout);
    fputs(", ", f);
    put_c_string(f, r->schedule);
    if (r->prefetch_level)
      fprintf(f, ", %d, %d, %d, %d, %d, %d", r->threads, r->kv_splits, r->prefetch, r->lanes_rows, r->lanes_rows_fp8,
              r->prefetch_level);
    else if (r->lanes_rows_fp8)
      fprintf(f, ", %d, %d, %d, %d, %d", r->threads, r->kv_splits, r->prefetch, r->lanes_rows, r->lanes_rows_fp8);
    else if (r->lanes_rows) fprintf(f, ", %d, %d, %d, %d", r->threads, r->kv_splits, r->prefetch, r->lanes_rows);
    else if (r->kv_splits || r->prefetch) fprintf(f, ", %d, %d, %d", r->threads, r->kv_splits, r->prefetch);
    else fprintf(f, ", %d", r->threads);
    fprintf(f, ")%s\n", i + 1 < n ? " \\" : "");
  }
  put_row_classes(f, cpu, n);
  fputs("\n#endif\n", f);
  int bad = ferror(f);
  if (fflush(f) != 0 || fsync(fileno(f)) != 0) bad = 1;
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    snprintf(err, errn, "%s: cannot write: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  /* make the rename itself durable */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return 0;
}

void tune_rows_variants(const tune_row *rows, int n, char *out, size_t outn) {
  size_t k = 0;
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= !strcmp(rows[j].variant, rows[i].variant);
    if (seen) continue;
    int w = snprintf(out + k, outn - k, "%s%s", k ? ";" : "", rows[i].variant);
    if (w < 0 || (size_t)w >= outn - k) break;
    k += (size_t)w;
  }
}
