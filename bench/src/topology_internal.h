/* Private layout of xb_topology, shared by topology.c, placement.c, bind.c. */
#ifndef XATTN_BENCH_TOPOLOGY_INTERNAL_H
#define XATTN_BENCH_TOPOLOGY_INTERNAL_H

#include <hwloc.h>

struct xb_topology {
  hwloc_topology_t topo;
  int synthetic;
  int packages, numa, l3, cores, pus;
  char summary[160];
};

#endif
