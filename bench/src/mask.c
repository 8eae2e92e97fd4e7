/* docs/contract.md §2, one pair at a time. Kept independent of the kernels' mask code on
 * purpose: it is what their visible-pair count and outputs are checked against. */
#include "xattn_bench/mask.h"

static int32_t prefix_of(const xattn_problem *p, int32_t b) { return p->prefix_lens[b]; }

int32_t xb_key_count(const xattn_problem *p, int32_t b) {
  if (p->mode == XATTN_MODE_CROSS) return p->encoder_lens ? p->encoder_lens[b] : 0;
  return p->prefix_lens[b] + p->extend_lens[b];
}

int xb_key_visible(const xattn_problem *p, int32_t b, int32_t i, int32_t j) {
  const int64_t P = prefix_of(p, b);
  const int64_t pos = P + i; /* absolute position of the query */
  int visible;
  switch (p->mode) {
  case XATTN_MODE_CAUSAL:
    visible = (p->align == XATTN_ALIGN_TOP_LEFT) ? (j <= i) : (j <= pos);
    break;
  case XATTN_MODE_BIDIRECTIONAL:
  case XATTN_MODE_CROSS:
    visible = 1;
    break;
  case XATTN_MODE_TREE:
    if (j < P) {
      visible = 1;
    } else {
      const int64_t side = p->tree_max_extend;
      visible = p->tree_mask[((int64_t)b * side + i) * side + (j - P)] != 0;
    }
    break;
  default:
    visible = 0;
  }
  if (visible && p->window_left >= 0 && j < pos - p->window_left) visible = 0;
  if (visible && p->window_right >= 0 && j > pos + p->window_right) visible = 0;
  return visible;
}

void xb_visible_range(const xattn_problem *p, int32_t b, int32_t i, int32_t *lo, int32_t *hi) {
  const int32_t n = xb_key_count(p, b);
  int32_t a = 0, e = n;
  while (a < e && !xb_key_visible(p, b, i, a)) a++;
  while (e > a && !xb_key_visible(p, b, i, e - 1)) e--;
  *lo = a;
  *hi = e;
}

int64_t xb_brute_visible_pairs(const xattn_problem *p) {
  int64_t v = 0;
  for (int32_t b = 0; b < p->batch; b++) {
    const int32_t n = xb_key_count(p, b);
    for (int32_t i = 0; i < p->extend_lens[b]; i++)
      for (int32_t j = 0; j < n; j++) v += xb_key_visible(p, b, i, j);
  }
  return v;
}
