/* CPU classes: what distinguishes the tuned choices of two machines of one ISA
 * (see xattn.h). Detection reads CPUID and the cache entries of cpu0 in sysfs;
 * XATTN_CPU_CLASS overrides it for tests. Matching picks the class of a
 * multi-CPU config header whose rows a CPU uses. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static void cpuid_identity(xattn_cpu_class *c) {
  snprintf(c->vendor, sizeof c->vendor, "unknown");
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, cx, d;
  if (__get_cpuid(0, &a, &b, &cx, &d)) {
    char v[13];
    memcpy(v, &b, 4);
    memcpy(v + 4, &d, 4);
    memcpy(v + 8, &cx, 4);
    v[12] = '\0';
    snprintf(c->vendor, sizeof c->vendor, "%s", v);
  }
  if (__get_cpuid(1, &a, &b, &cx, &d)) {
    const int base_family = (int)((a >> 8) & 0xf), base_model = (int)((a >> 4) & 0xf);
    c->family = base_family + (base_family == 0xf ? (int)((a >> 20) & 0xff) : 0);
    c->model = base_model | (base_family == 6 || base_family == 0xf ? (int)((a >> 16) & 0xf) << 4 : 0);
  }
#endif
}

static int read_line(const char *path, char *out, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  const int ok = fgets(out, (int)n, f) != NULL;
  fclose(f);
  if (!ok) return -1;
  out[strcspn(out, "\n")] = '\0';
  return 0;
}

/* Number of CPUs in a sysfs cpu list ("0-3,8-11"). */
static int cpu_list_count(const char *s) {
  int n = 0;
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s) break;
    long b = a;
    if (*end == '-') b = strtol(end + 1, &end, 10);
    if (b >= a) n += (int)(b - a + 1);
    s = *end == ',' ? end + 1 : end;
    if (*end != ',') break;
  }
  return n;
}

/* L2 per core and cores per L3 of cpu0 (sysfs counts hardware threads, so the
 * shared counts are divided by cpu0's threads per core). */
static void sysfs_caches(xattn_cpu_class *c) {
  char path[160], buf[256];
  int threads_per_core = 1;
  if (read_line("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", buf, sizeof buf) == 0) {
    threads_per_core = cpu_list_count(buf);
    if (threads_per_core < 1) threads_per_core = 1;
  }
  for (int i = 0; i < 16; i++) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    if (read_line(path, buf, sizeof buf) != 0) break;
    const int level = atoi(buf);
    if (level != 2 && level != 3) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if (read_line(path, buf, sizeof buf) != 0 || strcmp(buf, "Instruction") == 0) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (read_line(path, buf, sizeof buf) != 0) continue;
    char *unit;
    long kib = strtol(buf, &unit, 10);
    if (*unit == 'M') kib *= 1024;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
    int cores = 1;
    if (read_line(path, buf, sizeof buf) == 0) cores = cpu_list_count(buf) / threads_per_core;
    if (cores < 1) cores = 1;
    if (level == 2) c->l2_kib = (int)(kib / cores);
    else c->cores_per_l3 = cores;
  }
}

static const char *best_runnable_isa(void) {
  for (int i = 0; i < xattn_isa_count(); i++)
    if (xattn_isa_runnable(xattn_isa_name(i))) return xattn_isa_name(i);
  return "scalar";
}

void xattn_cpu_class_set_name(xattn_cpu_class *c) {
  char v[16];
  if (strcmp(c->vendor, "GenuineIntel") == 0) snprintf(v, sizeof v, "intel");
  else if (strcmp(c->vendor, "AuthenticAMD") == 0) snprintf(v, sizeof v, "amd");
  else {
    size_t k = 0;
    for (const char *s = c->vendor; *s && k + 1 < sizeof v; s++)
      if (isalnum((unsigned char)*s)) v[k++] = (char)tolower((unsigned char)*s);
    v[k] = '\0';
  }
  snprintf(c->name, sizeof c->name, "%s-%d-%d-l2_%dk-l3_%dc-%s", v, c->family, c->model, c->l2_kib,
           c->cores_per_l3, c->isa);
}

/* "vendor:family:model:l2_kib:cores_per_l3[:isa]" */
static int parse_override(const char *s, xattn_cpu_class *c) {
  char vendor[16], isa[16] = "";
  int fam, model, l2, cpl3, used = 0;
  const int n = sscanf(s, "%15[^:]:%d:%d:%d:%d%n:%15[a-z0-9]%n", vendor, &fam, &model, &l2, &cpl3, &used,
                       isa, &used);
  if (n < 5 || s[used] != '\0' || fam < 0 || model < 0 || l2 < 0 || cpl3 < 0) return -1;
  snprintf(c->vendor, sizeof c->vendor, "%s", vendor);
  c->family = fam;
  c->model = model;
  c->l2_kib = l2;
  c->cores_per_l3 = cpl3;
  if (isa[0]) snprintf(c->isa, sizeof c->isa, "%s", isa);
  return 0;
}

xattn_status xattn_cpu_class_get(xattn_cpu_class *out) {
  if (!out) return xattn_fail(XATTN_ERR_NULL, "xattn_cpu_class_get: out is NULL");
  memset(out, 0, sizeof *out);
  snprintf(out->isa, sizeof out->isa, "%s", best_runnable_isa());
  const char *env = getenv("XATTN_CPU_CLASS");
  if (env && *env) {
    if (parse_override(env, out) != 0)
      return xattn_fail(XATTN_ERR_UNSUPPORTED,
                        "XATTN_CPU_CLASS: '%s' is not vendor:family:model:l2_kib:cores_per_l3[:isa] "
                        "(e.g. GenuineIntel:6:143:2048:56)", env);
  } else {
    cpuid_identity(out);
    sysfs_caches(out);
  }
  xattn_cpu_class_set_name(out);
  return XATTN_OK;
}

/* log2 distance of two sizes; an unknown (0) side counts as one step */
static double size_distance(int a, int b) {
  if (a == b) return 0;
  if (a <= 0 || b <= 0) return 1;
  return fabs(log2((double)a / (double)b));
}

int xattn_cpu_class_nearest(const xattn_cpu_class *self, const xattn_cpu_class *classes, int n,
                            char *why, size_t whyn) {
  int best = -1;
  double best_d = 0;
  for (int i = 0; i < n; i++) {
    const xattn_cpu_class *c = &classes[i];
    if (strcmp(c->isa, self->isa) != 0) continue;
    /* the microarchitecture decides before the caches do */
    const double d = 1e6 * (strcmp(c->vendor, self->vendor) != 0) + 1e4 * (c->family != self->family) +
                     1e2 * (c->model != self->model) + size_distance(c->l2_kib, self->l2_kib) +
                     size_distance(c->cores_per_l3, self->cores_per_l3);
    if (best < 0 || d < best_d) {
      best = i;
      best_d = d;
    }
  }
  if (!why || !whyn) return best;
  if (best < 0) {
    snprintf(why, whyn, "none of the %d CPU classes has ISA %s: the hand default rows serve", n, self->isa);
    return best;
  }
  const xattn_cpu_class *c = &classes[best];
  if (best_d == 0) {
    snprintf(why, whyn, "exact: %s is this CPU's class (%s family %d model %d, L2 %d KiB/core, %d cores/L3)",
             c->name, c->vendor, c->family, c->model, c->l2_kib, c->cores_per_l3);
    return best;
  }
  char diff[256] = "";
  size_t k = 0;
#define DIFF(...) k += (size_t)snprintf(diff + k, k < sizeof diff ? sizeof diff - k : 0, __VA_ARGS__)
  if (strcmp(c->vendor, self->vendor)) DIFF("%svendor %s vs %s", k ? ", " : "", self->vendor, c->vendor);
  if (c->family != self->family) DIFF("%sfamily %d vs %d", k ? ", " : "", self->family, c->family);
  if (c->model != self->model) DIFF("%smodel %d vs %d", k ? ", " : "", self->model, c->model);
  if (c->l2_kib != self->l2_kib) DIFF("%sL2 %d vs %d KiB/core", k ? ", " : "", self->l2_kib, c->l2_kib);
  if (c->cores_per_l3 != self->cores_per_l3)
    DIFF("%s%d vs %d cores/L3", k ? ", " : "", self->cores_per_l3, c->cores_per_l3);
#undef DIFF
  snprintf(why, whyn, "nearest: %s, the closest of the %s classes to this CPU %s (%s)", c->name, self->isa,
           self->name, diff);
  return best;
}
