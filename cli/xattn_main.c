/* The `xattn` command.
 *
 *   xattn run CASE_DIR [-o OUT] [--variant BMxBN] [--layout NAME] [--isa NAME]
 *             [--threads N] [--schedule auto|static|dynamic] [--kv-splits N]
 *             [--reference | --reference-f64]
 *   xattn info [--json]
 *   xattn X ...   runs the external command xattn-X (git style), looked up next
 *                 to this binary, then in $XATTN_LIBEXEC (':'-separated), then PATH.
 *
 * Usage errors print one line and exit 2; a refused case or a failed run prints
 * one line naming the file or field and exits 1.
 */
#define _DEFAULT_SOURCE /* readlink, setenv, d_type */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "xattn_common/build_info.h"
#include "xattn_common/clock.h"
#include "xattn_common/files.h"
#include "case_io.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"

#define EXIT_USAGE 2

/* The commit this binary was built from, as results name it: 12 hex digits,
 * "-dirty" when the tree had uncommitted changes, or "nogit". */
static const char *build_commit(void) {
  static char s[64];
  snprintf(s, sizeof s, "%s%s", xc_build_commit(), xc_build_dirty() == 1 ? "-dirty" : "");
  return s;
}

static const char usage_text[] =
    "usage: xattn <command> [args]\n"
    "\n"
    "  run CASE_DIR [-o OUT] [--variant BMxBN] [--layout NAME] [--isa NAME] [--threads N]\n"
    "               [--schedule auto|static|dynamic] [--kv-splits N]\n"
    "               [--reference | --reference-f64]\n"
    "        compute o for a case folder (docs/formats.md §1) and write o.npy into it or OUT;\n"
    "        --reference uses the fp64 reference (stored in the q dtype), --reference-f64\n"
    "        stores the reference as float64\n"
    "  info [--json]   ISAs, variants, layouts, dtypes and the config header of this build\n"
    "  help            this text\n"
    "  <name> ...      runs the external command xattn-<name> (next to this binary, in\n"
    "                  $XATTN_LIBEXEC, or on PATH)\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "xattn: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see 'xattn help')\n");
  return EXIT_USAGE;
}

/* Strict positive integer option value. */
static int parse_count(const char *s, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < 1 || v > 4096) return -1;
  *out = (int)v;
  return 0;
}

/* ---- run ---------------------------------------------------------------- */
static void store_reference(const double *ref, void *o, xattn_dtype t, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float x = (float)ref[i];
    if (t == XATTN_F32)
      ((float *)o)[i] = x;
    else if (t == XATTN_BF16)
      ((uint16_t *)o)[i] = xattn_f32_to_bf16(x);
    else
      ((uint16_t *)o)[i] = xattn_f32_to_f16(x);
  }
}

static int cmd_run(int argc, char **argv) {
  const char *dir = NULL, *out = NULL, *sched = NULL;
  int reference = 0, reference_f64 = 0;
  xattn_options opts;
  xattn_options_init(&opts);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    int has_val = i + 1 < argc;
    if (!strcmp(a, "--reference"))
      reference = 1;
    else if (!strcmp(a, "--reference-f64"))
      reference_f64 = 1;
    else if (!strcmp(a, "-o") || !strcmp(a, "--variant") || !strcmp(a, "--layout") ||
             !strcmp(a, "--isa") || !strcmp(a, "--threads") || !strcmp(a, "--schedule") ||
             !strcmp(a, "--kv-splits")) {
      if (!has_val) return usage_error("run: option %s needs a value", a);
      const char *v = argv[++i];
      if (!strcmp(a, "-o"))
        out = v;
      else if (!strcmp(a, "--variant"))
        opts.variant = v;
      else if (!strcmp(a, "--layout"))
        opts.layout = v;
      else if (!strcmp(a, "--isa"))
        opts.isa = v;
      else if (!strcmp(a, "--schedule"))
        sched = v;
      else if (!strcmp(a, "--threads") && parse_count(v, &opts.threads))
        return usage_error("run: --threads wants an integer in 1..4096, got '%s'", v);
      else if (!strcmp(a, "--kv-splits") && parse_count(v, &opts.kv_splits))
        return usage_error("run: --kv-splits wants an integer in 1..4096, got '%s'", v);
    } else if (a[0] == '-' && a[1])
      return usage_error("run: unknown option '%s'", a);
    else if (dir)
      return usage_error("run: more than one CASE_DIR ('%s')", a);
    else
      dir = a;
  }
  if (!dir) return usage_error("run: missing CASE_DIR%s", "");
  if (reference && reference_f64)
    return usage_error("run: --reference and --reference-f64 exclude each other%s", "");
  if (sched) {
    if (xattn_schedule_parse(sched, &opts.schedule))
      return usage_error("run: --schedule wants auto, static or dynamic, got '%s'", sched);
  }

  char err[1024];
  xattn_case c;
  if (xattn_case_load(dir, &c, err, sizeof err) != XATTN_OK) {
    fprintf(stderr, "xattn: %s\n", err);
    return 1;
  }
  char path_buf[PATH_MAX];
  const char *path = out;
  struct stat st;
  if (!out || (stat(out, &st) == 0 && S_ISDIR(st.st_mode))) {
    snprintf(path_buf, sizeof path_buf, "%s/o.npy", out ? out : dir);
    path = path_buf;
  }
  /* checked before computing: the output is written to a temp file and renamed over path: that would
     replace a device, a FIFO or a symlink, or the case's own input */
  const char *why = NULL;
  if (xc_output_path_ok(path, &why)) {
    fprintf(stderr, "xattn: -o %s: is %s; refusing to replace it (give a regular file or a new name)\n", path, why);
    xattn_case_free(&c);
    return 1;
  }
  if (xattn_case_reads(&c, path)) {
    fprintf(stderr, "xattn: -o %s: is an input of the case %s; refusing to overwrite it\n", path, dir);
    xattn_case_free(&c);
    return 1;
  }
  xattn_problem *p = &c.problem;
  size_t n = (size_t)p->total_tokens * (size_t)p->heads_q * (size_t)p->head_dim_v;
  size_t esz = xattn_dtype_size(p->dtype);
  double *ref = NULL;
  void *o = calloc(n ? n : 1, reference_f64 ? sizeof(double) : esz);
  int rc = 1;
  if (!o) {
    fprintf(stderr, "xattn: %s: out of memory for o (%zu elements)\n", dir, n);
    goto done;
  }
  const char *what;
  char desc[256];
  const double t0 = xc_now();
  if (reference || reference_f64) {
    ref = reference_f64 ? o : malloc((n ? n : 1) * sizeof(double));
    if (!ref) {
      fprintf(stderr, "xattn: %s: out of memory for the reference\n", dir);
      goto done;
    }
    p->o.data = o; /* the reference ignores o, but its validation wants a non-NULL one */
    if (xattn_reference(p, ref) != XATTN_OK) {
      fprintf(stderr, "xattn: %s: %s\n", dir, xattn_last_error());
      goto done;
    }
    if (!reference_f64) store_reference(ref, o, p->dtype, n);
    what = "reference";
    snprintf(desc, sizeof desc, "fp64 reference%s", reference_f64 ? ", stored as f64" : "");
  } else {
    p->o.data = o;
    const char *variant = "?", *layout = "?", *isa = "?";
    int threads = 0;
    if (xattn_resolve(p, &opts, &variant, &layout, &isa, &threads) != XATTN_OK ||
        xattn_extend_attention(p, &opts) != XATTN_OK) {
      fprintf(stderr, "xattn: %s: %s\n", dir, xattn_last_error());
      goto done;
    }
    what = "xattn";
    const char *cpu_class = "*";
    xattn_resolve_cpu_class(&cpu_class, NULL); /* cannot fail here: xattn_resolve succeeded */
    snprintf(desc, sizeof desc, "variant %s, layout %s, isa %s, threads %d%s%s", variant, layout, isa,
             threads, strcmp(cpu_class, "*") ? ", cpu class " : "",
             strcmp(cpu_class, "*") ? (cpu_class[0] ? cpu_class : "none (hand default rows)") : "");
  }
  const double t1 = xc_now();

  if (xattn_case_write_output(path, o, p->dtype, reference_f64, p->total_tokens, p->heads_q,
                              p->head_dim_v, err, sizeof err) != XATTN_OK) {
    fprintf(stderr, "xattn: %s\n", err);
    goto done;
  }
  double ms = (t1 - t0) * 1e3;
  printf("%s: wrote %s (%s; %s; %.3f ms)\n", what, path, xattn_dtype_name(p->dtype), desc, ms);
  rc = 0;
done:
  if (ref != o) free(ref);
  free(o);
  xattn_case_free(&c);
  return rc;
}

/* ---- info --------------------------------------------------------------- */
static cJSON *string_list(int count, const char *(*name)(int)) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < count; ++i) cJSON_AddItemToArray(a, cJSON_CreateString(name(i)));
  return a;
}

static const char *dtype_at(int i) { return xattn_dtype_name((xattn_dtype)i); }

static int cmd_info(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else
      return usage_error("info: unknown argument '%s'", argv[i]);
  }
  int nisa = xattn_isa_count();
  /* this CPU's class and the config header's class it uses (multi-CPU headers) */
  xattn_cpu_class cpu;
  const char *matched = NULL, *why = NULL;
  if (xattn_cpu_class_get(&cpu) != XATTN_OK || xattn_resolve_cpu_class(&matched, &why) != XATTN_OK) {
    fprintf(stderr, "xattn info: %s\n", xattn_last_error());
    return 1;
  }
  if (json) {
    cJSON *root = cJSON_CreateObject(), *runnable = cJSON_CreateArray();
    for (int i = 0; i < nisa; ++i)
      if (xattn_isa_runnable(xattn_isa_name(i)))
        cJSON_AddItemToArray(runnable, cJSON_CreateString(xattn_isa_name(i)));
    cJSON_AddItemToObject(root, "isas", runnable);
    cJSON_AddItemToObject(root, "isas_built", string_list(nisa, xattn_isa_name));
    cJSON_AddStringToObject(root, "best_isa", xattn_best_isa());
    cJSON_AddItemToObject(root, "variants", string_list(xattn_variant_count(), xattn_variant_name));
    cJSON_AddItemToObject(root, "layouts", string_list(xattn_layout_count(), xattn_layout_name));
    cJSON_AddItemToObject(root, "dtypes", string_list(3, dtype_at));
    cJSON_AddStringToObject(root, "config_header", xattn_config_header_path());
    cJSON_AddStringToObject(root, "provenance", xattn_config_provenance());
    cJSON_AddNumberToObject(root, "config_classes", xattn_config_class_count());
    cJSON_AddNumberToObject(root, "config_format", xattn_config_format());
    cJSON *cc = cJSON_AddObjectToObject(root, "cpu_class");
    cJSON_AddStringToObject(cc, "name", cpu.name);
    cJSON_AddStringToObject(cc, "isa", cpu.isa);
    cJSON_AddStringToObject(cc, "vendor", cpu.vendor);
    cJSON_AddNumberToObject(cc, "family", cpu.family);
    cJSON_AddNumberToObject(cc, "model", cpu.model);
    cJSON_AddNumberToObject(cc, "l2_kib_per_core", cpu.l2_kib);
    cJSON_AddNumberToObject(cc, "cores_per_l3", cpu.cores_per_l3);
    cJSON_AddNumberToObject(root, "config_cpu_classes", xattn_config_cpu_class_count());
    cJSON_AddStringToObject(root, "config_cpu_class", matched);
    cJSON_AddStringToObject(root, "config_cpu_class_why", why);
    cJSON_AddStringToObject(root, "commit", build_commit());
    char version[32];
    snprintf(version, sizeof version, "%d.%d", XATTN_VERSION_MAJOR, XATTN_VERSION_MINOR);
    cJSON_AddStringToObject(root, "version", version);
    char *s = cJSON_Print(root);
    if (!s) return 1;
    puts(s);
    free(s);
    cJSON_Delete(root);
    return 0;
  }
  printf("xattn %d.%d, commit %s\n", XATTN_VERSION_MAJOR, XATTN_VERSION_MINOR, build_commit());
  printf("isas:          ");
  for (int i = 0; i < nisa; ++i)
    printf("%s%s%s", i ? " " : "", xattn_isa_name(i),
           xattn_isa_runnable(xattn_isa_name(i)) ? "" : "(not runnable here)");
  printf("\nbest isa:      %s\nvariants:      ", xattn_best_isa());
  for (int i = 0; i < xattn_variant_count(); ++i) printf("%s%s", i ? " " : "", xattn_variant_name(i));
  printf("\nlayouts:       ");
  for (int i = 0; i < xattn_layout_count(); ++i) printf("%s%s", i ? " " : "", xattn_layout_name(i));
  printf("\ndtypes:        f32 bf16 f16\n");
  printf("config header: %s (format %d, %d classes)\n", xattn_config_header_path(), xattn_config_format(),
         xattn_config_class_count());
  printf("provenance:    %s\n", xattn_config_provenance());
  printf("cpu class:     %s\n", cpu.name);
  printf("config class:  %s (%s)\n", matched[0] ? matched : "none", why);
  return 0;
}

/* ---- external commands -------------------------------------------------- */
/* Directory of the running binary, for finding sibling xattn-* commands. */
static int self_dir(char *buf, size_t len, char *exe, size_t exelen) {
  ssize_t n = readlink("/proc/self/exe", exe, exelen - 1);
  if (n <= 0) return -1;
  exe[n] = '\0';
  snprintf(buf, len, "%s", exe);
  char *slash = strrchr(buf, '/');
  if (!slash) return -1;
  *slash = '\0';
  return 0;
}

static int valid_command_name(const char *s) {
  if (!*s || *s == '-') return 0;
  for (; *s; ++s)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '-' || *s == '_'))
      return 0;
  return 1;
}

static void try_exec(const char *dir, const char *prog, char **argv) {
  char path[PATH_MAX];
  if (!dir || !*dir) return;
  if (snprintf(path, sizeof path, "%s/%s", dir, prog) >= (int)sizeof path) return;
  if (access(path, X_OK) == 0) {
    execv(path, argv);
    fprintf(stderr, "xattn: cannot run %s: %s\n", path, strerror(errno));
    exit(126);
  }
}

static int cmd_external(int argc, char **argv) {
  (void)argc;
  const char *name = argv[0];
  if (!valid_command_name(name)) return usage_error("'%s' is not an xattn command", name);
  char prog[256], dir[PATH_MAX], exe[PATH_MAX];
  snprintf(prog, sizeof prog, "xattn-%s", name);
  argv[0] = prog;
  /* external commands can call back into this very binary */
  if (self_dir(dir, sizeof dir, exe, sizeof exe) == 0) {
    setenv("XATTN", exe, 1);
    try_exec(dir, prog, argv);
  }
  const char *libexec = getenv("XATTN_LIBEXEC");
  if (libexec) {
    char *list = strdup(libexec);
    for (char *save = NULL, *d = list ? strtok_r(list, ":", &save) : NULL; d;
         d = strtok_r(NULL, ":", &save))
      try_exec(d, prog, argv);
    free(list);
  }
  execvp(prog, argv);
  if (errno != ENOENT) {
    fprintf(stderr, "xattn: cannot run %s: %s\n", prog, strerror(errno));
    return 126;
  }
  fprintf(stderr,
          "xattn: '%s' is not an xattn command (no %s next to xattn, in $XATTN_LIBEXEC or on "
          "PATH; see 'xattn help')\n",
          name, prog);
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage_error("missing command%s", "");
  const char *cmd = argv[1];
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    printf("xattn %d.%d (commit %s)\n", XATTN_VERSION_MAJOR, XATTN_VERSION_MINOR, build_commit());
    return 0;
  }
  if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
  if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
  return cmd_external(argc - 1, argv + 1);
}
