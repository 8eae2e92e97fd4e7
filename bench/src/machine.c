/* Machine identity, build identity and the results layout of docs/formats.md §3. */
#define _GNU_SOURCE
#include "xattn_bench/machine.h"


#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xattn_common/build_info.h"
#include "xattn_common/hash.h"

static void cpuinfo_field(const char *key, char *out, size_t outlen, const char *fallback) {
  snprintf(out, outlen, "%s", fallback);
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char *line = NULL;
  size_t cap = 0;
  size_t klen = strlen(key);
  while (getline(&line, &cap, f) > 0) {
    if (strncmp(line, key, klen) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    size_t n = strlen(v);
    while (n && (v[n - 1] == '\n' || v[n - 1] == ' ')) v[--n] = 0;
    snprintf(out, outlen, "%s", v);
    break;
  }
  free(line);
  fclose(f);
}

const char *xb_cpu_model(void) {
  static char model[256];
  if (!model[0]) cpuinfo_field("model name", model, sizeof model, "unknown");
  return model;
}

const char *xb_cpu_flags(void) {
  static char flags[8192];
  static int done;
  if (!done) cpuinfo_field("flags", flags, sizeof flags, "");
  done = 1;
  return flags;
}

void xb_model_slug(const char *model, char *out, size_t outlen) {
  char tmp[512];
  size_t n = 0;
  /* drop "(R)", "(TM)", "(tm)" and everything from '@' (the frequency) */
  for (const char *s = model; *s && *s != '@' && n + 1 < sizeof tmp; s++) {
    if (*s == '(') {
      const char *e = strchr(s, ')');
      if (e && e - s <= 3) { s = e; continue; }
    }
    tmp[n++] = (char)tolower((unsigned char)*s);
  }
  tmp[n] = 0;
  size_t o = 0;
  int dash = 0;
  for (char *w = strtok(tmp, " \t-_/,()"); w; w = strtok(NULL, " \t-_/,()")) {
    if (strcmp(w, "cpu") == 0 || strcmp(w, "processor") == 0) {
      /* keep "processor" when it is all the model says besides the brand */
      if (strcmp(w, "cpu") == 0) continue;
    }
    if (o && o + 1 < outlen) out[o++] = '-';
    for (; *w && o + 1 < outlen; w++) {
      if (isalnum((unsigned char)*w)) { out[o++] = *w; dash = 0; }
      else if (!dash) { out[o++] = '-'; dash = 1; }
    }
  }
  while (o && out[o - 1] == '-') o--;
  if (!o && outlen > 7) { strcpy(out, "unknown"); return; }
  out[o] = 0;
}

int xb_machine_name(const char *model, int cores, const char *topology_summary, char *out, size_t outlen,
                    char *err, size_t errlen) {
  const char *id = getenv("XATTN_MACHINE_ID");
  if (id && *id) {
    size_t n = strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
    if (id[n] != '\0' || id[0] == '.' || n >= outlen) {
      snprintf(err, errlen, "XATTN_MACHINE_ID: '%s' is not a machine name (letters, digits, '.', '_', '-'; "
                            "not starting with '.')", id);
      return -1;
    }
    snprintf(out, outlen, "%s", id);
    return 0;
  }
  char slug[200];
  xb_model_slug(model, slug, sizeof slug);
  uint64_t h = xc_fnv1a64_str(XC_FNV1A64_BENCH_SEED, model); /* not _OFFSET: see hash.h */
  h = xc_fnv1a64_str(h, "\n");
  h = xc_fnv1a64_str(h, topology_summary);
  snprintf(out, outlen, "%s-%dc-%08x", slug, cores, (unsigned)(h >> 32));
  return 0;
}

void xb_commit_dir_name(const char *commit, int dirty, char *out, size_t outlen) {
  if (!commit || !*commit || strcmp(commit, "nogit") == 0) snprintf(out, outlen, "nogit");
  else snprintf(out, outlen, "%s%s", commit, dirty > 0 ? "-dirty" : "");
}

const char *xb_repo_relative(const char *path, char *out, size_t outlen) {
  char real[PATH_MAX], root[PATH_MAX];
  const char *p = path ? path : "";
  if (realpath(p, real) && realpath(xc_build_source_dir(), root)) {
    const size_t n = strlen(root);
    if (strncmp(real, root, n) == 0 && real[n] == '/') p = real + n + 1;
  }
  snprintf(out, outlen, "%s", p);
  return out;
}

void xb_utc_stamp(char *out, size_t outlen) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(out, outlen, "%Y%m%dT%H%M%SZ", &tm);
}

void xb_sanitize_label(const char *label, char *out, size_t outlen) {
  size_t o = 0;
  if (!label || !*label) label = "run";
  for (; *label && o + 1 < outlen && o < 64; label++)
    out[o++] = (isalnum((unsigned char)*label) || *label == '.' || *label == '-' || *label == '_') ? *label : '-';
  out[o] = 0;
}

int xb_mkdirs(const char *dir, char *err, size_t errlen) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp) {
    snprintf(err, errlen, "results: path too long");
    return -1;
  }
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
      snprintf(err, errlen, "results: cannot create %s: %s", tmp, strerror(errno));
      return -1;
    }
    *p = '/';
  }
  if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
    snprintf(err, errlen, "results: cannot create %s: %s", tmp, strerror(errno));
    return -1;
  }
  return 0;
}

int xb_results_subdir(const char *results_dir, const char *machine, const char *commit_dir, char *out, size_t outlen,
                      char *err, size_t errlen) {
  if ((size_t)snprintf(out, outlen, "%s/%s/%s", results_dir, machine, commit_dir) >= outlen) {
    snprintf(err, errlen, "results: path too long");
    return -1;
  }
  return xb_mkdirs(out, err, errlen);
}

int xb_publish_result(const char *tmp_path, const char *dir, const char *stamp, const char *label, char *out,
                      size_t outlen, char *err, size_t errlen) {
  char clean[80];
  xb_sanitize_label(label, clean, sizeof clean);
  for (int n = 1; n < 10000; n++) {
    if (n == 1) snprintf(out, outlen, "%s/%s_%s.json", dir, stamp, clean);
    else snprintf(out, outlen, "%s/%s_%s_%d.json", dir, stamp, clean, n);
    /* link() fails if the name exists: never overwrites, and is atomic. */
    if (link(tmp_path, out) == 0) {
      unlink(tmp_path);
      return 0;
    }
    if (errno != EEXIST) {
      /* file systems without hard links: rename after checking (racy but rare) */
      if (errno == EPERM || errno == ENOTSUP) {
        if (access(out, F_OK) == 0) continue;
        if (rename(tmp_path, out) == 0) return 0;
      }
      snprintf(err, errlen, "results: cannot publish %s as %s: %s", tmp_path, out, strerror(errno));
      return -1;
    }
  }
  snprintf(err, errlen, "results: too many results named %s/%s_%s*", dir, stamp, clean);
  return -1;
}
