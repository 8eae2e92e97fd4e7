#include "tune_space.h"
#include "tune_prune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tune_class_make_key(tune_class *c) {
  snprintf(c->key, sizeof c->key, "%s/%s/d%d/dv%d/%s/e%d/p%d#%s", c->isa, c->dtype, c->d,
           c->dv, c->mode, c->extend_bucket, c->prefix_bucket, c->workloads_digest);
}

void tune_cand_make_key(tune_cand *c) {
  int n = snprintf(c->key, sizeof c->key, "%s/%s/%s/t%d/%s", c->variant, c->layout, c->schedule,
                   c->threads, c->placement);
  /* auto (0) adds nothing: keys of older caches stay valid */
  if (c->kv_splits && n > 0 && (size_t)n < sizeof c->key)
    n += snprintf(c->key + n, sizeof c->key - (size_t)n, "/s%d", c->kv_splits);
  if (c->prefetch && n > 0 && (size_t)n < sizeof c->key)
    n += snprintf(c->key + n, sizeof c->key - (size_t)n, "/pf%d", c->prefetch);
  if (c->prefetch_level && n > 0 && (size_t)n < sizeof c->key)
    snprintf(c->key + n, sizeof c->key - (size_t)n, "/pfl%d", c->prefetch_level);
}

int tune_parse_variant(const char *v, int *bm, int *bn) {
  char *end = NULL;
  long m = strtol(v, &end, 10);
  if (end == v || *end != 'x') return -1;
  const char *s = end + 1;
  long n = strtol(s, &end, 10);
  if (end == s || *end != '\0' || m <= 0 || n <= 0) return -1;
  *bm = (int)m;
  *bn = (int)n;
  return 0;
}

int tune_layout_few_rows(const char *layout) {
  return !strcmp(layout, "decode") || !strcmp(layout, "lanes");
}

static void copy_name(char *dst, const char *src) {
  snprintf(dst, TUNE_NAME_MAX, "%s", src);
}

/* The flash layouts' one prefetch choice: whether they ask for the next
 * gathered tile's rows while a tile computes (the kernels do for 16-bit and
 * fp8 caches, never for f32 rows; bench/README.md "the next tile's rows").
 * An axis {auto, off} where gathered reads weigh: short extends (E <= 64,
 * extend buckets 0-2) on long prefixes (prefix buckets 2-3, > 1024 tokens). */
int tune_flash_prefetch_axis(const tune_class *cls, const char *layout) {
  return !tune_layout_few_rows(layout) && strcmp(cls->dtype, "f32") != 0 && cls->extend_bucket <= 2 &&
         cls->prefix_bucket >= 2;
}

int tune_space_enumerate(const tune_class *cls, const tune_axes *axes,
                         const tune_machine *m, tune_cand *out, int cap) {
  tune_prune_ctx pc = {cls, m, 1 << 30, 1 << 30,
                       axes->n_placements ? axes->placements[0] : "",
                       axes->n_schedules ? axes->schedules[0] : "",
                       axes->n_variants ? axes->variants[0] : ""};
  for (int v = 0; v < axes->n_variants; v++) {
    int bm, bn;
    if (tune_parse_variant(axes->variants[v], &bm, &bn) != 0) continue;
    if (bm < pc.min_bm) pc.min_bm = bm;
    if (bn < pc.min_bn) pc.min_bn = bn;
  }
  static const int auto_only[1] = {0}, flash_prefetch[2] = {0, -1};
  int n = 0;
  for (int v = 0; v < axes->n_variants; v++)
    for (int l = 0; l < axes->n_layouts; l++) {
      /* split count and prefetch distance are axes of the few-rows layouts
         (kvsplit keeps its auto split count: its space stays what it was);
         the flash layouts' prefetch is on or off, in the classes
         tune_flash_prefetch_axis names */
      const int splitting = tune_layout_few_rows(axes->layouts[l]), prefetching = splitting;
      const int flash_pf = tune_flash_prefetch_axis(cls, axes->layouts[l]);
      const int ns = splitting && axes->n_splits ? axes->n_splits : 1;
      const int np = flash_pf ? 2 : prefetching && axes->n_prefetch ? axes->n_prefetch : 1;
      const int *sv = splitting && axes->n_splits ? axes->splits : auto_only;
      const int *pv = flash_pf ? flash_prefetch : prefetching && axes->n_prefetch ? axes->prefetch : auto_only;
      for (int si = 0; si < ns; si++)
        for (int pi = 0; pi < np; pi++)
          for (int s = 0; s < axes->n_schedules; s++)
            for (int t = 0; t < axes->n_threads; t++)
              for (int p = 0; p < axes->n_placements; p++) {
                tune_cand c;
                memset(&c, 0, sizeof c);
                copy_name(c.variant, axes->variants[v]);
                if (tune_parse_variant(c.variant, &c.block_m, &c.block_n) != 0) continue;
                copy_name(c.layout, axes->layouts[l]);
                copy_name(c.schedule, axes->schedules[s]);
                c.threads = axes->threads[t];
                copy_name(c.placement, axes->placements[p]);
                c.kv_splits = sv[si];
                c.prefetch = pv[pi];
                c.prefetch_level = !flash_pf && prefetching && axes->n_prefetch ? axes->prefetch_level[pi] : 0;
                tune_cand_make_key(&c);
                if (tune_prune_check(&pc, &c) != NULL) continue;
                if (n < cap) out[n] = c;
                n++;
              }
    }
  return n < cap ? n : cap;
}
