/* The compiled variant list (variants.def filtered by CMake's XATTN_VARIANTS,
 * see xattn_variant_list.h generated at configure time). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal/kernel.h"
#include "xattn_variant_list.h"

#define XATTN_NAME_ENTRY(BM, BN) #BM "x" #BN,
static const char *const variant_names[] = {XATTN_VARIANT_LIST(XATTN_NAME_ENTRY)};
#undef XATTN_NAME_ENTRY
#define XATTN_DIM_ENTRY(BM, BN) {BM, BN},
static const int variant_dims[][2] = {XATTN_VARIANT_LIST(XATTN_DIM_ENTRY)};
#undef XATTN_DIM_ENTRY
enum { VARIANT_COUNT = sizeof(variant_names) / sizeof(variant_names[0]) };

int xattn_variant_count(void) { return VARIANT_COUNT; }

const char *xattn_variant_name(int i) {
  return i >= 0 && i < VARIANT_COUNT ? variant_names[i] : NULL;
}

void xattn_variant_dims(int v, int *bm, int *bn) {
  *bm = variant_dims[v][0];
  *bn = variant_dims[v][1];
}

int xattn_variant_index(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < VARIANT_COUNT; i++)
    if (strcmp(name, variant_names[i]) == 0) return i;
  return -1;
}

/* A config row may name a variant this build left out (XATTN_VARIANTS): run the
 * compiled one closest in log2(BLOCK_M) + log2(BLOCK_N), ties to the smaller. */
int xattn_variant_nearest(const char *name) {
  int bm = 0, bn = 0;
  char tail;
  if (!name || sscanf(name, "%dx%d%c", &bm, &bn, &tail) != 2 || bm <= 0 || bn <= 0) return -1;
  int best = -1;
  double best_dist = 0.0;
  for (int i = 0; i < VARIANT_COUNT; i++) {
    const double dist = fabs(log2((double)variant_dims[i][0] / bm)) +
                        fabs(log2((double)variant_dims[i][1] / bn));
    if (best < 0 || dist < best_dist - 1e-9) {
      best = i;
      best_dist = dist;
    }
  }
  return best;
}
