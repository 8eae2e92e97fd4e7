/* libFuzzer target: keeping a killed xattn-bench run's complete benchmarks
 * and listing a results file's rows for --resume (bench/src/salvage.c). Each
 * input is read for its rows (never a crash; a name never empty), then
 * written as the temp file of a dead run and salvaged: it must be kept or
 * passed over, never crash; a failure says one line; a kept file is a whole
 * document (the reporter's opening, the closing brackets) under a -killed
 * name, and the temp file is left to the caller. XATTN_FUZZ_SEEDS=DIR writes
 * a seed (a run's file, whole) into DIR at start-up. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xattn_bench/salvage.h"

static char dir[256], tmp[320];

static const char seed[] =
    "{\n  \"context\": {\n    \"date\": \"2026-01-01T00:00:00+00:00\",\n    \"caches\": [\n      {\n"
    "        \"level\": 1\n      }\n    ],\n    \"xattn_suite\": \"smoke\",\n    \"xattn_label\": \"smoke\",\n"
    "    \"xattn_resume_key\": \"0123456789abcdef\"\n  },\n"
    "  \"benchmarks\": [\n"
    "    {\n      \"name\": \"a/real_time\",\n      \"run_name\": \"a/real_time\",\n      \"run_type\": \"iteration\",\n"
    "      \"real_time\": 1.0e+00,\n      \"pct_peak\": NaN\n    },\n"
    "    {\n      \"name\": \"a/real_time_median\",\n      \"run_name\": \"a/real_time\",\n      \"run_type\": \"aggregate\",\n"
    "      \"aggregate_name\": \"median\",\n      \"real_time\": 1.0e+00\n    },\n"
    "    {\n      \"name\": \"a/real_time_min\",\n      \"run_name\": \"a/real_time\",\n      \"run_type\": \"aggregate\",\n"
    "      \"aggregate_name\": \"min\",\n      \"real_time\": 1.0e+00\n    },\n"
    "    {\n      \"name\": \"b/real_time\",\n      \"run_name\": \"b/real_time\",\n      \"run_type\": \"iteration\",\n"
    "      \"real_time\": 2.0e+00\n    }\n  ]\n}\n";

static void remove_dir(void) {
  unlink(tmp);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  atexit(remove_dir);
  snprintf(dir, sizeof dir, "/tmp/xattn-fuzz-salvage-%ld", (long)getpid());
  mkdir(dir, 0700);
  snprintf(tmp, sizeof tmp, "%s/.tmp-20260101T000000Z-1.json", dir);
  const char *seeds = getenv("XATTN_FUZZ_SEEDS");
  if (seeds && *seeds) {
    char p[512];
    snprintf(p, sizeof p, "%s/seed-run.json", seeds);
    FILE *f = fopen(p, "wb");
    if (f) {
      fputs(seed, f);
      fclose(f);
    }
  }
  return 0;
}

/* The files the last input left in dir: a kept file whole, under a -killed
 * name, exactly when something was kept; all but the temp file removed. */
static void check_and_clear(int kept) {
  DIR *d = opendir(dir);
  if (!d) abort();
  int published = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue; /* ., .., the temp file */
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (!strstr(e->d_name, "-killed")) abort();
    FILE *f = fopen(p, "rb");
    if (!f) abort();
    static char text[1 << 17];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    static const char open[] = "{\n  \"context\": {\n    \"xattn_killed_run\": \"", close[] = "\n  ]\n}\n";
    if (strncmp(text, open, sizeof open - 1) != 0) abort();
    if (n < sizeof close - 1 || strcmp(text + n - (sizeof close - 1), close) != 0) abort();
    unlink(p);
    published++;
  }
  closedir(d);
  if (published != (kept > 0)) abort();
}

static void one_row(const char *name, void *count) {
  if (!name[0]) abort();
  ++*(int *)count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 16)) return 0;
  FILE *f = fopen(tmp, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  int rows = 0;
  if (xb_measured_rows(tmp, "0123456789abcdef", one_row, &rows) != rows) abort();
  char out[1024], err[1024] = "";
  const int kept = xb_salvage_killed(tmp, dir, "20260101T000000Z", 1, out, sizeof out, err, sizeof err);
  if (kept < 0 && (!err[0] || strchr(err, '\n'))) abort(); /* one line */
  check_and_clear(kept);
  if (access(tmp, F_OK) != 0) abort(); /* the temp file is the caller's */
  return 0;
}
