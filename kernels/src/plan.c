/* Plans (xattn.h): make once (validate the shape, resolve the options, cut
 * the work), run many times (check the data, run the kernels in the caller's
 * workspace). xattn_extend_attention is the one-call convenience on top. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "internal/plan.h"
#include "internal/validate.h"
#include "xattn/xattn_introspect.h"

void xattn_plan_destroy(xattn_plan *pl) {
  if (!pl) return;
  xattn_plan_partition_free(pl);
  free(pl->lens);
  free(pl->ext_start);
  free(pl);
}

/* The plan's own copy of the shape: scalar fields as given, length arrays
 * copied, every data pointer cleared (a run supplies them). */
static xattn_status copy_shape(xattn_plan *pl, const xattn_problem *shape) {
  const int32_t B = shape->batch;
  const size_t n = (size_t)(B > 0 ? B : 1);
  pl->lens = calloc(4 * n, sizeof(int32_t));
  pl->ext_start = malloc(n * sizeof(int64_t));
  if (!pl->lens || !pl->ext_start) return XATTN_ERR_NOMEM;
  xattn_problem *p = &pl->shape;
  *p = *shape;
  p->q = p->k_ext = p->v_ext = p->k_cache = p->v_cache = p->o = (xattn_tensor){NULL, 0, 0};
  p->req_to_token = NULL;
  p->req_index = NULL;
  p->req_start_col = NULL;
  p->k_scales = p->v_scales = NULL;
  p->sinks = NULL;
  p->tree_mask = NULL;
  int32_t *prefix = pl->lens, *extend = pl->lens + n, *encoder = pl->lens + 2 * n, *start = pl->lens + 3 * n;
  int64_t next = 0;
  for (int32_t b = 0; b < B; b++) {
    prefix[b] = shape->prefix_lens[b];
    extend[b] = shape->extend_lens[b];
    if (shape->encoder_lens) encoder[b] = shape->encoder_lens[b];
    if (shape->extend_start) start[b] = shape->extend_start[b];
    pl->ext_start[b] = shape->extend_start ? shape->extend_start[b] : next;
    next += extend[b];
  }
  p->prefix_lens = prefix;
  p->extend_lens = extend;
  p->encoder_lens = shape->encoder_lens ? encoder : NULL;
  p->extend_start = shape->extend_start ? start : NULL;
  return XATTN_OK;
}

xattn_status xattn_plan_create(const xattn_problem *shape, const xattn_options *opts, xattn_plan **plan) {
  if (!plan) return xattn_fail(XATTN_ERR_NULL, "plan: NULL (nowhere to put the plan)");
  *plan = NULL;
  xattn_status s = xattn_validate_shape(shape);
  if (s != XATTN_OK) return s;
  xattn_plan *pl = calloc(1, sizeof *pl);
  if (!pl) return xattn_fail(XATTN_ERR_NOMEM, "plan: out of memory");
  if ((s = xattn_resolve_into(shape, opts, pl)) != XATTN_OK) {
    xattn_plan_destroy(pl);
    return s;
  }
  if (copy_shape(pl, shape) != XATTN_OK || xattn_plan_partition(pl) != XATTN_OK) {
    xattn_plan_destroy(pl);
    return xattn_fail(XATTN_ERR_NOMEM, "plan: out of memory");
  }
  xattn_clear_error();
  *plan = pl;
  return XATTN_OK;
}

size_t xattn_plan_workspace_size(const xattn_plan *plan) {
  return plan ? (plan->workspace_bytes + 63) / 64 * 64 : 0;
}

void xattn_plan_describe(const xattn_plan *plan, const char **variant, const char **layout, const char **isa,
                         int *threads) {
  if (variant) *variant = plan ? xattn_variant_name(plan->variant) : NULL;
  if (layout) *layout = plan ? xattn_layout_name((int)plan->layout) : NULL;
  if (isa) *isa = plan ? plan->isa->name : NULL;
  if (threads) *threads = plan ? plan->threads : 0;
}

void xattn_plan_run_settings(const xattn_plan *plan, int *kv_splits, int *prefetch) {
  if (kv_splits) *kv_splits = plan ? plan->kv_splits : 0;
  if (prefetch) *prefetch = plan ? plan->prefetch : 0;
}

int64_t xattn_plan_kv_packed_pairs(const xattn_plan *plan, int *waves) {
  if (waves) *waves = plan ? plan->kvpack.n_waves : 0;
  if (!plan || !plan->kvpack.pair_off) return 0;
  const int64_t pairs = (int64_t)plan->shape.batch * plan->shape.heads_kv;
  int64_t n = 0;
  for (int64_t q = 0; q < pairs; q++) n += plan->kvpack.pair_off[q] >= 0;
  return n;
}

xattn_status xattn_plan_run(const xattn_plan *plan, const xattn_problem *data, void *workspace) {
  xattn_clear_error();
  if (!plan) return xattn_fail(XATTN_ERR_NULL, "plan: NULL");
  if (!data) return xattn_fail(XATTN_ERR_NULL, "problem: NULL");
  if (data->batch != plan->shape.batch)
    return xattn_fail(XATTN_ERR_SHAPE, "batch: %d, but the plan was made for %d", data->batch, plan->shape.batch);
  if (data->total_tokens != plan->shape.total_tokens)
    return xattn_fail(XATTN_ERR_SHAPE, "total_tokens: %lld, but the plan was made for %lld",
                      (long long)data->total_tokens, (long long)plan->shape.total_tokens);
  /* the caller's data with the plan's shape: what the plan fixed is never
   * read from data (and needs no validation again) */
  xattn_problem p = *data;
  const xattn_problem *f = &plan->shape;
  p.prefix_lens = f->prefix_lens;
  p.extend_lens = f->extend_lens;
  p.extend_start = f->extend_start;
  p.encoder_lens = f->encoder_lens;
  p.heads_q = f->heads_q;
  p.heads_kv = f->heads_kv;
  p.head_dim = f->head_dim;
  p.head_dim_v = f->head_dim_v;
  p.dtype = f->dtype;
  p.cache_dtype = f->cache_dtype;
  p.scale = f->scale;
  p.logit_cap = f->logit_cap;
  p.mode = f->mode;
  p.align = f->align;
  p.window_left = f->window_left;
  p.window_right = f->window_right;
  xattn_status s = xattn_validate_data(&p, 1);
  if (s != XATTN_OK) return s;
  if (plan->workspace_bytes > 0) {
    if (!workspace)
      return xattn_fail(XATTN_ERR_NULL, "workspace: NULL (the plan needs %zu bytes)", xattn_plan_workspace_size(plan));
    if ((uintptr_t)workspace % 64)
      return xattn_fail(XATTN_ERR_STRIDE, "workspace: %p is not 64-byte aligned", workspace);
  }
  xattn_plan_execute(plan, &p, workspace);
  return XATTN_OK;
}

xattn_status xattn_extend_attention(const xattn_problem *p, const xattn_options *opts) {
  xattn_plan *plan = NULL;
  xattn_status s = xattn_plan_create(p, opts, &plan);
  if (s != XATTN_OK) return s;
  const size_t bytes = xattn_plan_workspace_size(plan);
  void *workspace = bytes ? aligned_alloc(64, bytes) : NULL;
  if (bytes && !workspace) {
    xattn_plan_destroy(plan);
    return xattn_fail(XATTN_ERR_NOMEM, "workspace: out of memory (%zu bytes)", bytes);
  }
  s = xattn_plan_run(plan, p, workspace);
  free(workspace);
  xattn_plan_destroy(plan);
  return s;
}
