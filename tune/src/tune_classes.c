#include "xattn_common/files.h"
#include "tune_classes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_stats.h"
#include "xattn_common/hash.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"


/* Everything about a workload that changes its timing. */
static uint64_t workload_hash(uint64_t h, const xb_workload *w, xattn_dtype dt) {
  h = xc_fnv1a64_bytes(h, w->name, strlen(w->name));
  h = xc_fnv1a64_bytes(h, &dt, sizeof dt);
  h = xc_fnv1a64_bytes(h, &w->batch, sizeof w->batch);
  h = xc_fnv1a64_bytes(h, w->prefix_lens, sizeof(int32_t) * (size_t)w->batch);
  h = xc_fnv1a64_bytes(h, w->extend_lens, sizeof(int32_t) * (size_t)w->batch);
  if (w->encoder_lens) h = xc_fnv1a64_bytes(h, w->encoder_lens, sizeof(int32_t) * (size_t)w->batch);
  int32_t f[8] = {w->heads_q, w->heads_kv, w->head_dim, w->head_dim_v, (int32_t)w->mode,
                  (int32_t)w->align, w->window_left, w->window_right};
  h = xc_fnv1a64_bytes(h, f, sizeof f);
  h = xc_fnv1a64_bytes(h, &w->logit_cap, sizeof w->logit_cap);
  h = xc_fnv1a64_bytes(h, &w->has_sinks, sizeof w->has_sinks);
  h = xc_fnv1a64_bytes(h, &w->tree_density, sizeof w->tree_density);
  return xc_fnv1a64_bytes(h, &w->seed, sizeof w->seed);
}

static uint64_t file_hash(const char *path) {
  FILE *f = xc_fopen_regular(path, NULL); /* a FIFO must not block the open */
  uint64_t h = XC_FNV1A64_OFFSET;
  if (!f) return 0;
  unsigned char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = xc_fnv1a64_bytes(h, buf, n);
  fclose(f);
  return h;
}

static int find_or_add(tune_class_set *cs, const tune_class *c, int *cap) {
  for (int i = 0; i < cs->n; i++) {
    const tune_class *o = &cs->classes[i];
    if (!strcmp(o->isa, c->isa) && !strcmp(o->dtype, c->dtype) && o->d == c->d && o->dv == c->dv &&
        !strcmp(o->mode, c->mode) && o->extend_bucket == c->extend_bucket &&
        o->prefix_bucket == c->prefix_bucket)
      return i;
  }
  if (cs->n == *cap) {
    int nc = *cap ? 2 * *cap : 16;
    tune_class *a = realloc(cs->classes, sizeof(tune_class) * (size_t)nc);
    tune_member **b = realloc(cs->members, sizeof(tune_member *) * (size_t)nc);
    int *m = realloc(cs->n_members, sizeof(int) * (size_t)nc);
    if (a) cs->classes = a;
    if (b) cs->members = b;
    if (m) cs->n_members = m;
    if (!a || !b || !m) return -1;
    *cap = nc;
  }
  cs->classes[cs->n] = *c;
  cs->members[cs->n] = NULL;
  cs->n_members[cs->n] = 0;
  return cs->n++;
}

int tune_classes_load(tune_class_set *cs, const char *const *suites, int n_suites, const char *only,
                      char *err, size_t errn) {
  memset(cs, 0, sizeof *cs);
  int cap = 0;
  size_t k = 0;
  uint64_t all = XC_FNV1A64_OFFSET;
  for (int s = 0; s < n_suites; s++) {
    if (cs->n_suites == TUNE_MAX_SUITES) {
      snprintf(err, errn, "--suite: at most %d suites", TUNE_MAX_SUITES);
      return -1;
    }
    xb_suite *su = xb_suite_load(suites[s], err, errn);
    if (!su) return -1;
    cs->suites[cs->n_suites++] = su;
    const char *base = strrchr(su->path, '/');
    uint64_t fh = file_hash(su->path);
    all = xc_fnv1a64_bytes(all, &fh, sizeof fh);
    int w = snprintf(cs->inputs + k, sizeof cs->inputs - k, "%s%s fnv1a64:%016llx", k ? ", " : "",
                     base ? base + 1 : su->path, (unsigned long long)fh);
    if (w > 0 && (size_t)w < sizeof cs->inputs - k) k += (size_t)w;
    for (int i = 0; i < su->count; i++) {
      const xb_workload *wl = &su->workloads[i];
      int64_t max_e = 0, max_p = 0;
      for (int b = 0; b < wl->batch; b++) {
        if (wl->extend_lens[b] > max_e) max_e = wl->extend_lens[b];
        if (wl->prefix_lens[b] > max_p) max_p = wl->prefix_lens[b];
      }
      for (int t = 0; t < wl->ndtypes; t++) {
        tune_class c;
        memset(&c, 0, sizeof c);
        /* keyed like the kernels' config lookup: the ISA that runs this dtype */
        snprintf(c.isa, sizeof c.isa, "%s", xattn_running_isa(NULL, wl->dtypes[t]));
        snprintf(c.dtype, sizeof c.dtype, "%s", xattn_dtype_name(wl->dtypes[t]));
        c.d = wl->head_dim;
        c.dv = wl->head_dim_v;
        snprintf(c.mode, sizeof c.mode, "%s", xattn_mode_name(wl->mode));
        c.extend_bucket = xattn_extend_bucket(max_e);
        c.prefix_bucket = xattn_prefix_bucket(max_p);
        int ci = find_or_add(cs, &c, &cap);
        if (ci < 0) {
          snprintf(err, errn, "out of memory");
          return -1;
        }
        tune_class *cl = &cs->classes[ci];
        if (max_e > cl->max_extend) cl->max_extend = max_e;
        if (max_p > cl->max_prefix) cl->max_prefix = max_p;
        int64_t keys = xb_workload_max_context(wl);
        if (keys > cl->max_keys) cl->max_keys = keys;
        if (cl->heads_q == 0) {
          cl->heads_q = wl->heads_q;
          cl->heads_kv = wl->heads_kv;
        }
        tune_member *m = realloc(cs->members[ci], sizeof(tune_member) * (size_t)(cs->n_members[ci] + 1));
        if (!m) {
          snprintf(err, errn, "out of memory");
          return -1;
        }
        cs->members[ci] = m;
        m[cs->n_members[ci]++] = (tune_member){wl, wl->dtypes[t], su->name};
        cl->n_workloads = cs->n_members[ci];
      }
    }
  }
  snprintf(cs->inputs_digest, sizeof cs->inputs_digest, "fnv1a64:%016llx", (unsigned long long)all);
  /* keys: the class plus a digest of its workloads (a different suite makes a
   * different class, so cached timings are never mixed up) */
  int kept = 0;
  for (int i = 0; i < cs->n; i++) {
    uint64_t h = XC_FNV1A64_OFFSET;
    for (int j = 0; j < cs->n_members[i]; j++)
      h = workload_hash(h, cs->members[i][j].w, cs->members[i][j].dtype);
    snprintf(cs->classes[i].workloads_digest, sizeof cs->classes[i].workloads_digest, "%016llx",
             (unsigned long long)h);
    tune_class_make_key(&cs->classes[i]);
    if (only && !strstr(cs->classes[i].key, only)) {
      free(cs->members[i]);
      continue;
    }
    cs->classes[kept] = cs->classes[i];
    cs->members[kept] = cs->members[i];
    cs->n_members[kept] = cs->n_members[i];
    kept++;
  }
  cs->n = kept;
  if (kept == 0) {
    snprintf(err, errn, "--only: no class matches '%s'", only ? only : "");
    return -1;
  }
  return 0;
}

void tune_classes_free(tune_class_set *cs) {
  for (int i = 0; i < cs->n; i++) free(cs->members[i]);
  free(cs->members);
  free(cs->n_members);
  free(cs->classes);
  for (int s = 0; s < cs->n_suites; s++) xb_suite_free(cs->suites[s]);
  memset(cs, 0, sizeof *cs);
}
