/* hwloc topology discovery: counts and a one-line summary. */
#define _POSIX_C_SOURCE 200809L
#include "xattn_bench/topology.h"
#include "topology_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

xb_topology *xb_topology_open(const char *synthetic, char *err, size_t errlen) {
  xb_topology *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, errlen, "topology: out of memory");
    return NULL;
  }
  if (hwloc_topology_init(&t->topo) != 0) {
    snprintf(err, errlen, "topology: hwloc_topology_init failed");
    free(t);
    return NULL;
  }
  if (synthetic) {
    if (hwloc_topology_set_synthetic(t->topo, synthetic) != 0) {
      snprintf(err, errlen, "topology: invalid hwloc synthetic description \"%s\"", synthetic);
      hwloc_topology_destroy(t->topo);
      free(t);
      return NULL;
    }
    t->synthetic = 1;
  }
  if (hwloc_topology_load(t->topo) != 0) {
    snprintf(err, errlen, "topology: hwloc_topology_load failed");
    hwloc_topology_destroy(t->topo);
    free(t);
    return NULL;
  }
  t->packages = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PACKAGE);
  t->numa = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_NUMANODE);
  t->l3 = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_L3CACHE);
  t->cores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
  t->pus = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
  if (t->packages < 1) t->packages = 1;
  if (t->numa < 1) t->numa = 1;
  if (t->cores < 1) t->cores = t->pus; /* some VMs report PUs only */
  char l3size[32] = "";
  if (t->l3 >= 1) {
    hwloc_obj_t c = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_L3CACHE, 0);
    unsigned long long kb = c->attr ? c->attr->cache.size / 1024 : 0;
    if (kb >= 1024)
      snprintf(l3size, sizeof l3size, " (%lluMB)", kb / 1024);
    else if (kb)
      snprintf(l3size, sizeof l3size, " (%lluKB)", kb);
  }
  snprintf(t->summary, sizeof t->summary, "%d package%s, %d numa, %d l3%s, %d cores, %d pus",
           t->packages, t->packages == 1 ? "" : "s", t->numa, t->l3 < 1 ? 0 : t->l3, l3size,
           t->cores, t->pus);
  if (t->l3 < 1) t->l3 = 1;
  return t;
}

void xb_topology_close(xb_topology *t) {
  if (!t) return;
  hwloc_topology_destroy(t->topo);
  free(t);
}

int xb_topology_packages(const xb_topology *t) { return t->packages; }
int xb_topology_numa_nodes(const xb_topology *t) { return t->numa; }
int xb_topology_l3_groups(const xb_topology *t) { return t->l3; }
int xb_topology_cores(const xb_topology *t) { return t->cores; }
int xb_topology_pus(const xb_topology *t) { return t->pus; }
int xb_topology_is_synthetic(const xb_topology *t) { return t->synthetic; }
const char *xb_topology_summary(const xb_topology *t) { return t->summary; }
void *xb_topology_hwloc(const xb_topology *t) { return (void *)t->topo; }
