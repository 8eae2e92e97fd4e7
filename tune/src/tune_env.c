#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "tune_digest.h"
#include "tune_env.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/machine.h"
#include "xattn_common/build_info.h"

static int64_t cache_size(hwloc_topology_t t, hwloc_obj_type_t type) {
  hwloc_obj_t o = hwloc_get_obj_by_type(t, type, 0);
  return o && o->attr ? (int64_t)o->attr->cache.size : 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Does `placement` choose other cores than "compact" at this thread count? */
static int placement_differs(void *ctx, const char *placement, int threads) {
  tune_env *e = ctx;
  xb_placement a, b;
  char err[256];
  if (xb_placement_parse("compact", &a, err, sizeof err) != 0 ||
      xb_placement_parse(placement, &b, err, sizeof err) != 0)
    return 0;
  int pa[1024], pb[1024];
  if (threads > 1024 || xb_placement_select(e->topo, &a, threads, pa, err, sizeof err) != 0 ||
      xb_placement_select(e->topo, &b, threads, pb, err, sizeof err) != 0)
    return 0;
  qsort(pa, (size_t)threads, sizeof(int), cmp_int);
  qsort(pb, (size_t)threads, sizeof(int), cmp_int);
  return memcmp(pa, pb, sizeof(int) * (size_t)threads) != 0;
}

static const char *schedules[] = {"static", "dynamic"};
static const char *placements[] = {"compact", "scatter"};

int tune_env_open(tune_env *e, char *err, size_t errn) {
  memset(e, 0, sizeof *e);
  e->topo = xb_topology_open(NULL, err, errn);
  if (!e->topo) return -1;
  const char *model = xb_cpu_model();
  const char *summary = xb_topology_summary(e->topo);
  int cores = xb_topology_cores(e->topo);
  int bad = xb_machine_name(model, cores, summary, e->id.machine, sizeof e->id.machine, err, errn) != 0;
  if (!bad && xattn_cpu_class_get(&e->cpu) != XATTN_OK) {
    snprintf(err, errn, "%s", xattn_last_error());
    bad = 1;
  }
  if (bad) {
    xb_topology_close(e->topo);
    e->topo = NULL;
    return -1;
  }
  snprintf(e->id.cpu_model, sizeof e->id.cpu_model, "%s", model);
  snprintf(e->id.topology, sizeof e->id.topology, "%s", summary);
  snprintf(e->id.compiler, sizeof e->id.compiler, "%s", xc_build_compiler());
  snprintf(e->id.cflags, sizeof e->id.cflags, "%s", xc_build_cflags());
  snprintf(e->id.kernel_digest, sizeof e->id.kernel_digest, "%s", TUNE_KERNEL_DIGEST);
  snprintf(e->id.timing, sizeof e->id.timing, "warm"); /* xattn-tune --flush-caches: "flushed" */
  snprintf(e->commit, sizeof e->commit, "%s%s", xc_build_commit(), xc_build_dirty() == 1 ? "-dirty" : "");
  xb_commit_dir_name(xc_build_commit(), xc_build_dirty(), e->commit_dir, sizeof e->commit_dir);

  hwloc_topology_t h = (hwloc_topology_t)xb_topology_hwloc(e->topo);
  e->machine.cores = cores;
  e->machine.l1d_bytes = cache_size(h, HWLOC_OBJ_L1CACHE);
  e->machine.l2_bytes = cache_size(h, HWLOC_OBJ_L2CACHE);
  e->machine.l3_bytes = cache_size(h, HWLOC_OBJ_L3CACHE);
  e->machine.placement_differs = placement_differs;
  e->machine.ctx = e;

  tune_axes *a = &e->axes;
  for (int i = 0; i < xattn_variant_count() && a->n_variants < TUNE_MAX_AXIS; i++)
    a->variants[a->n_variants++] = xattn_variant_name(i);
  for (int i = 0; i < xattn_layout_count() && a->n_layouts < TUNE_MAX_AXIS; i++)
    a->layouts[a->n_layouts++] = xattn_layout_name(i);
  /* few-rows layouts (decode, lanes): key-range splits and prefetch distances in tokens:
     0 = the kernels' auto rule, -1 = no software prefetch; each with the level it fills
     (0: the default, L2; 1: L1), the CPU's call (bench/README.md "prefetch into L1"):
     the auto distance into L1 is the one pair that adds */
  static const int split_values[] = {0, 1, 2, 4, 8}, prefetch_values[] = {0, -1, 64, 0}, level_values[] = {0, 0, 0, 1};
  _Static_assert(sizeof prefetch_values == sizeof level_values, "one level per prefetch value");
  a->n_splits = (int)(sizeof split_values / sizeof *split_values);
  memcpy(a->splits, split_values, sizeof split_values);
  a->n_prefetch = (int)(sizeof prefetch_values / sizeof *prefetch_values);
  memcpy(a->prefetch, prefetch_values, sizeof prefetch_values);
  memcpy(a->prefetch_level, level_values, sizeof level_values);
  a->n_schedules = 2;
  a->schedules[0] = schedules[0];
  a->schedules[1] = schedules[1];
  a->n_placements = 2;
  a->placements[0] = placements[0];
  a->placements[1] = placements[1];
  xb_placement compact;
  xb_placement_parse("compact", &compact, err, errn);
  a->n_threads = xb_sweep_threads(e->topo, &compact, a->threads, TUNE_MAX_AXIS);
  if (a->n_threads < 1) {
    a->threads[0] = 1;
    a->n_threads = 1;
  }
  return 0;
}

void tune_env_close(tune_env *e) {
  if (e->topo) xb_topology_close(e->topo);
  e->topo = NULL;
}

void tune_env_print(const tune_env *e, FILE *f) {
  fprintf(f, "machine:        %s\n", e->id.machine);
  fprintf(f, "cpu model:      %s\n", e->id.cpu_model);
  fprintf(f, "topology:       %s\n", e->id.topology);
  fprintf(f, "caches:         L1d %lld KiB, L2 %lld KiB, L3 %lld KiB\n",
          (long long)e->machine.l1d_bytes >> 10, (long long)e->machine.l2_bytes >> 10,
          (long long)e->machine.l3_bytes >> 10);
  fprintf(f, "compiler:       %s\n", e->id.compiler);
  fprintf(f, "flags:          %s\n", e->id.cflags);
  fprintf(f, "commit:         %s\n", e->commit);
  fprintf(f, "timing:         %s (run / compare --flush-caches: flushed)\n", e->id.timing);
  fprintf(f, "kernel digest:  %s (%d files + config header)\n", e->id.kernel_digest,
          TUNE_KERNEL_DIGEST_FILES);
  fprintf(f, "config header:  %s\n", xattn_config_header_path());
  fprintf(f, "best isa:       %s\n", xattn_best_isa());
  fprintf(f, "cpu class:      %s\n", e->cpu.name);
  fprintf(f, "variants:       %d, layouts: %d, thread counts:", e->axes.n_variants,
          e->axes.n_layouts);
  for (int i = 0; i < e->axes.n_threads; i++) fprintf(f, " %d", e->axes.threads[i]);
  fputc('\n', f);
}
