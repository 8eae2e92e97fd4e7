/* Bad input: every validation rule, one field broken at a time.
 *
 * For each row of the table a valid problem is built, one field is broken,
 * and then xattn_validate, xattn_extend_attention and xattn_reference must all
 * return one of the expected statuses, xattn_last_error() must be one line
 * naming the field, xattn_visible_pairs must return -1, and the output buffer
 * must be untouched. A few rows are valid on purpose (e.g. garbage in token
 * table entries the call does not use) and must succeed with the right answer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/tproblem.h"

/* BASE_PAGED: causal, blocks of 4 tokens, head-major, table start columns 1..4 */
/* BASE_FP8: causal, e4m3fn cache with per-token-per-head scales */
enum base { BASE_CAUSAL, BASE_TREE, BASE_CROSS, BASE_PAGED, BASE_FP8 };

typedef enum kind {
  NULL_PROBLEM, NULL_PREFIX, NULL_EXTEND, NULL_REQ_INDEX, NULL_Q, NULL_K_EXT, NULL_V_EXT, NULL_O,
  NULL_TABLE, NULL_K_CACHE, NULL_V_CACHE,
  NEG_BATCH, NEG_PREFIX, NEG_EXTEND, NEG_ENCODER, HEADS_NOT_MULTIPLE, ZERO_HEADS_Q, ZERO_HEADS_KV,
  ZERO_D, NEG_D, ZERO_DV, HUGE_D, NEG_TOTAL_TOKENS, SHORT_TOTAL_TOKENS, NEG_SLOTS, NEG_MAX_CTX,
  Q_TOKEN_STRIDE_SMALL, Q_HEAD_STRIDE_SMALL, K_CACHE_NEG_HEAD_STRIDE, O_OVERLAP, V_EXT_ZERO_STRIDE,
  K_EXT_NEG_TOKEN_STRIDE, V_CACHE_OVERLAP,
  REQ_INDEX_HIGH, REQ_INDEX_NEG, SLOT_HIGH, SLOT_NEG, SLOT_HIGH_I64, UNUSED_SLOT_GARBAGE,
  UNUSED_ROW_GARBAGE, CTX_OVERFLOW, ENCODER_OVERFLOW,
  WINDOW_LEFT, WINDOW_RIGHT, BAD_MODE, BAD_ALIGN, BAD_DTYPE, BAD_INDEX_TYPE, TOP_LEFT_BIDIR,
  TOP_LEFT_TREE, TREE_NO_MASK, TREE_SMALL_MAX_EXTEND, CROSS_NO_ENCODER, START_OVERLAP,
  START_OUT_OF_RANGE, START_NEGATIVE, SCALE_NAN, CAP_NEG, CAP_INF, SINK_NAN,
  OPT_VARIANT, OPT_LAYOUT, OPT_ISA, OPT_PREFETCH_LEVEL,
  PAGE_NEG, BAD_CACHE_LAYOUT, BLOCK_HIGH, BLOCK_NEG, BLOCK_STRIDE_OVERLAP, BLOCK_STRIDE_NEG,
  START_COL_NEG, START_COL_PAST_CTX, PAGED_IN_BLOCK_OVERLAP, UNUSED_BLOCK_GARBAGE,
  FP8_AS_DTYPE, CACHE_DTYPE_MISMATCH, K_SCALE_NAN, V_SCALE_INF, K_SCALES_NAN_READ, V_SCALES_NAN_UNREAD,
} kind;

typedef struct bad_case {
  kind k;
  const char *name;
  enum base base;
  xattn_status want[2]; /* accepted statuses (XATTN_OK: the call must succeed) */
  const char *field;    /* must appear in xattn_last_error() */
} bad_case;

#define S(x) XATTN_ERR_##x
static const bad_case cases[] = {
    {NULL_PROBLEM, "problem NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "problem"},
    {NULL_PREFIX, "prefix_lens NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "prefix_lens"},
    {NULL_EXTEND, "extend_lens NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "extend_lens"},
    {NULL_REQ_INDEX, "req_index NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "req_index"},
    {NULL_Q, "q NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "q"},
    {NULL_K_EXT, "k_ext NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "k_ext"},
    {NULL_V_EXT, "v_ext NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "v_ext"},
    {NULL_O, "o NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "o"},
    {NULL_TABLE, "req_to_token NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "req_to_token"},
    {NULL_K_CACHE, "k_cache NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "k_cache"},
    {NULL_V_CACHE, "v_cache NULL", BASE_CAUSAL, {S(NULL), S(NULL)}, "v_cache"},
    {NEG_BATCH, "batch -1", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "batch"},
    {NEG_PREFIX, "prefix_lens[1] -1", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "prefix_lens[1]"},
    {NEG_EXTEND, "extend_lens[2] -2", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "extend_lens[2]"},
    {NEG_ENCODER, "encoder_lens[0] -1", BASE_CROSS, {S(SHAPE), S(SHAPE)}, "encoder_lens[0]"},
    {HEADS_NOT_MULTIPLE, "heads_q 4, heads_kv 3", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "heads_"},
    {ZERO_HEADS_Q, "heads_q 0", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "heads_q"},
    {ZERO_HEADS_KV, "heads_kv 0", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "heads_kv"},
    {ZERO_D, "head_dim 0", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "head_dim"},
    {NEG_D, "head_dim -16", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "head_dim"},
    {ZERO_DV, "head_dim_v 0", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "head_dim_v"},
    {HUGE_D, "head_dim 1<<30", BASE_CAUSAL, {S(SHAPE), S(STRIDE)}, "head_dim"},
    {NEG_TOTAL_TOKENS, "total_tokens -1", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "total_tokens"},
    {SHORT_TOTAL_TOKENS, "total_tokens < sum(E)", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "total_tokens"},
    {NEG_SLOTS, "cache_slots -1", BASE_CAUSAL, {S(SHAPE), S(INDEX)}, "cache_slots"},
    {NEG_MAX_CTX, "max_ctx -1", BASE_CAUSAL, {S(SHAPE), S(INDEX)}, "max_ctx"},
    {Q_TOKEN_STRIDE_SMALL, "q token stride < H*D", BASE_CAUSAL, {S(STRIDE), S(STRIDE)}, "q"},
    {Q_HEAD_STRIDE_SMALL, "q head stride < D", BASE_CAUSAL, {S(STRIDE), S(STRIDE)}, "q"},
    {K_CACHE_NEG_HEAD_STRIDE, "k_cache head stride < 0", BASE_CAUSAL, {S(STRIDE), S(STRIDE)}, "k_cache"},
    {O_OVERLAP, "o rows overlap", BASE_CAUSAL, {S(STRIDE), S(STRIDE)}, "o"},
    {V_EXT_ZERO_STRIDE, "v_ext token stride 0", BASE_CAUSAL, {S(STRIDE), S(STRIDE)}, "v_ext"},
    {K_EXT_NEG_TOKEN_STRIDE, "k_ext token stride < 0", BASE_CAUSAL, {S(STRIDE), S(STRIDE)}, "k_ext"},
    {V_CACHE_OVERLAP, "v_cache heads overlap", BASE_CAUSAL, {S(STRIDE), S(STRIDE)}, "v_cache"},
    {REQ_INDEX_HIGH, "req_index[2] = max_reqs", BASE_CAUSAL, {S(INDEX), S(INDEX)}, "req_index[2]"},
    {REQ_INDEX_NEG, "req_index[0] = -1", BASE_CAUSAL, {S(INDEX), S(INDEX)}, "req_index[0]"},
    {SLOT_HIGH, "used slot = cache_slots", BASE_CAUSAL, {S(INDEX), S(INDEX)}, "req_to_token"},
    {SLOT_NEG, "used slot = -1", BASE_CAUSAL, {S(INDEX), S(INDEX)}, "req_to_token"},
    {SLOT_HIGH_I64, "used slot 2^40 (int64 table)", BASE_CROSS, {S(INDEX), S(INDEX)}, "req_to_token"},
    {UNUSED_SLOT_GARBAGE, "garbage in unused table entries (valid)", BASE_CAUSAL, {XATTN_OK, XATTN_OK}, ""},
    {UNUSED_ROW_GARBAGE, "req_index of a P=0 request out of range (OK or index)", BASE_CAUSAL, {XATTN_OK, S(INDEX)}, "req_index"},
    {CTX_OVERFLOW, "P + E > max_ctx", BASE_CAUSAL, {S(SHAPE), S(INDEX)}, "prefix_lens[0]"},
    {ENCODER_OVERFLOW, "encoder_len > max_ctx", BASE_CROSS, {S(SHAPE), S(INDEX)}, "encoder_lens[1]"},
    {WINDOW_LEFT, "window_left -2", BASE_CAUSAL, {S(MODE), S(MODE)}, "window_left"},
    {WINDOW_RIGHT, "window_right -7", BASE_CAUSAL, {S(MODE), S(MODE)}, "window_right"},
    {BAD_MODE, "mode 9", BASE_CAUSAL, {S(MODE), S(MODE)}, "mode"},
    {BAD_ALIGN, "align 4", BASE_CAUSAL, {S(MODE), S(MODE)}, "align"},
    {BAD_DTYPE, "dtype 7", BASE_CAUSAL, {S(DTYPE), S(DTYPE)}, "dtype"},
    {BAD_INDEX_TYPE, "req_to_token_type 5", BASE_CAUSAL, {S(DTYPE), S(DTYPE)}, "req_to_token_type"},
    {TOP_LEFT_BIDIR, "top_left with bidirectional", BASE_CAUSAL, {S(MODE), S(MODE)}, "align"},
    {TOP_LEFT_TREE, "top_left with tree", BASE_TREE, {S(MODE), S(MODE)}, "align"},
    {TREE_NO_MASK, "tree without tree_mask", BASE_TREE, {S(NULL), S(MODE)}, "tree_mask"},
    {TREE_SMALL_MAX_EXTEND, "tree_max_extend < max E", BASE_TREE, {S(SHAPE), S(SHAPE)}, "tree_max_extend"},
    {CROSS_NO_ENCODER, "cross without encoder_lens", BASE_CROSS, {S(NULL), S(MODE)}, "encoder_lens"},
    {START_OVERLAP, "extend_start ranges collide", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "extend_start"},
    {START_OUT_OF_RANGE, "extend_start past total_tokens", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "extend_start[2]"},
    {START_NEGATIVE, "extend_start[0] -1", BASE_CAUSAL, {S(SHAPE), S(SHAPE)}, "extend_start[0]"},
    {SCALE_NAN, "scale NaN", BASE_CAUSAL, {S(SHAPE), S(MODE)}, "scale"},
    {CAP_NEG, "logit_cap -1", BASE_CAUSAL, {S(SHAPE), S(MODE)}, "logit_cap"},
    {CAP_INF, "logit_cap inf", BASE_CAUSAL, {S(SHAPE), S(MODE)}, "logit_cap"},
    {SINK_NAN, "sinks[1] NaN", BASE_CAUSAL, {S(SHAPE), S(MODE)}, "sinks[1]"},
    {OPT_VARIANT, "options.variant 7x9", BASE_CAUSAL, {S(UNSUPPORTED), S(UNSUPPORTED)}, "variant"},
    {OPT_LAYOUT, "options.layout diagonal", BASE_CAUSAL, {S(UNSUPPORTED), S(UNSUPPORTED)}, "layout"},
    {OPT_ISA, "options.isa z80", BASE_CAUSAL, {S(UNSUPPORTED), S(UNSUPPORTED)}, "isa"},
    {OPT_PREFETCH_LEVEL, "options.prefetch_level 3", BASE_CAUSAL, {S(UNSUPPORTED), S(UNSUPPORTED)}, "prefetch_level"},
    {PAGE_NEG, "page_size -1", BASE_PAGED, {S(SHAPE), S(SHAPE)}, "page_size"},
    {BAD_CACHE_LAYOUT, "cache_layout 7", BASE_PAGED, {S(MODE), S(MODE)}, "cache_layout"},
    {BLOCK_HIGH, "used block = cache_slots (paged)", BASE_PAGED, {S(INDEX), S(INDEX)}, "req_to_token"},
    {BLOCK_NEG, "used block = -1 (paged)", BASE_PAGED, {S(INDEX), S(INDEX)}, "req_to_token"},
    {BLOCK_STRIDE_OVERLAP, "k_cache_block_stride inside a block", BASE_PAGED, {S(STRIDE), S(STRIDE)}, "k_cache"},
    {BLOCK_STRIDE_NEG, "v_cache_block_stride -1", BASE_PAGED, {S(STRIDE), S(STRIDE)}, "v_cache_block_stride"},
    {START_COL_NEG, "req_start_col[0] -1", BASE_PAGED, {S(INDEX), S(INDEX)}, "req_start_col[0]"},
    {START_COL_PAST_CTX, "req_start_col[0] past the table row", BASE_PAGED, {S(SHAPE), S(SHAPE)}, "prefix_lens[0]"},
    {PAGED_IN_BLOCK_OVERLAP, "paged v_cache heads overlap tokens", BASE_PAGED, {S(STRIDE), S(STRIDE)}, "v_cache"},
    {UNUSED_BLOCK_GARBAGE, "garbage in table entries no key spans (paged, valid)", BASE_PAGED, {XATTN_OK, XATTN_OK}, ""},
    {FP8_AS_DTYPE, "dtype e4m3fn (cache only)", BASE_FP8, {S(DTYPE), S(DTYPE)}, "dtype"},
    {CACHE_DTYPE_MISMATCH, "cache_dtype f16 with dtype f32", BASE_FP8, {S(DTYPE), S(DTYPE)}, "cache_dtype"},
    {K_SCALE_NAN, "k_scale NaN", BASE_FP8, {S(SHAPE), S(SHAPE)}, "k_scale"},
    {V_SCALE_INF, "v_scale inf", BASE_FP8, {S(SHAPE), S(SHAPE)}, "v_scale"},
    {K_SCALES_NAN_READ, "k_scales NaN for a token read", BASE_FP8, {S(SHAPE), S(SHAPE)}, "k_scales["},
    {V_SCALES_NAN_UNREAD, "v_scales NaN where no key maps (valid)", BASE_FP8, {XATTN_OK, XATTN_OK}, ""},
};
#undef S

static int64_t set_slot(tproblem *tp, int64_t row, int64_t j, int64_t v) {
  int64_t at = row * tp->p.max_ctx + j;
  if (tp->p.req_to_token_type == XATTN_I64)
    ((int64_t *)tp->table)[at] = v;
  else
    ((int32_t *)tp->table)[at] = (int32_t)v;
  return v;
}

/* Breaks one field. Returns 1 if the case is about options only. */
static int apply(kind k, tproblem *tp, xattn_problem *p, xattn_options *o) {
  static int32_t start[3];
  switch (k) {
    case NULL_PROBLEM: break; /* handled by the caller */
    case NULL_PREFIX: p->prefix_lens = NULL; break;
    case NULL_EXTEND: p->extend_lens = NULL; break;
    case NULL_REQ_INDEX: p->req_index = NULL; break;
    case NULL_Q: p->q.data = NULL; break;
    case NULL_K_EXT: p->k_ext.data = NULL; break;
    case NULL_V_EXT: p->v_ext.data = NULL; break;
    case NULL_O: p->o.data = NULL; break;
    case NULL_TABLE: p->req_to_token = NULL; break;
    case NULL_K_CACHE: p->k_cache.data = NULL; break;
    case NULL_V_CACHE: p->v_cache.data = NULL; break;
    case NEG_BATCH: p->batch = -1; break;
    case NEG_PREFIX: tp->prefix[1] = -1; break;
    case NEG_EXTEND: tp->extend[2] = -2; break;
    case NEG_ENCODER: tp->encoder[0] = -1; break;
    case HEADS_NOT_MULTIPLE: p->heads_kv = 3; break;
    case ZERO_HEADS_Q: p->heads_q = 0; break;
    case ZERO_HEADS_KV: p->heads_kv = 0; break;
    case ZERO_D: p->head_dim = 0; break;
    case NEG_D: p->head_dim = -16; break;
    case ZERO_DV: p->head_dim_v = 0; break;
    case HUGE_D: p->head_dim = 1 << 30; break;
    case NEG_TOTAL_TOKENS: p->total_tokens = -1; break;
    case SHORT_TOTAL_TOKENS: p->total_tokens -= 1; break;
    case NEG_SLOTS: p->cache_slots = -1; break;
    case NEG_MAX_CTX: p->max_ctx = -1; break;
    case Q_TOKEN_STRIDE_SMALL: p->q.token_stride = (int64_t)p->heads_q * p->head_dim - 1; break;
    case Q_HEAD_STRIDE_SMALL: p->q.head_stride = p->head_dim - 1; break;
    case K_CACHE_NEG_HEAD_STRIDE: p->k_cache.head_stride = -p->head_dim; break;
    case O_OVERLAP: p->o.token_stride = p->o.head_stride; break;
    case V_EXT_ZERO_STRIDE: p->v_ext.token_stride = 0; break;
    case K_EXT_NEG_TOKEN_STRIDE: p->k_ext.token_stride = -p->k_ext.token_stride; break;
    case V_CACHE_OVERLAP: p->v_cache.head_stride = p->head_dim_v / 2; break;
    case REQ_INDEX_HIGH: tp->req_index[2] = p->max_reqs; break;
    case REQ_INDEX_NEG: tp->req_index[0] = -1; break;
    case SLOT_HIGH: set_slot(tp, tp->req_index[2], 5, p->cache_slots); break; /* P[2] = 6: entry 5 is read */
    case SLOT_NEG: set_slot(tp, tp->req_index[0], 0, -1); break;
    case SLOT_HIGH_I64: set_slot(tp, tp->req_index[1], 0, (int64_t)1 << 40); break;
    case UNUSED_SLOT_GARBAGE: /* entries at and past P_b, and whole unused rows */
      for (int b = 0; b < p->batch; ++b)
        for (int64_t j = tp->prefix[b]; j < p->max_ctx; ++j) set_slot(tp, tp->req_index[b], j, -123456789);
      break;
    case UNUSED_ROW_GARBAGE: tp->req_index[1] = 1 << 20; break; /* request 1 has P = 0 */
    case CTX_OVERFLOW: tp->prefix[0] = (int32_t)p->max_ctx - tp->extend[0] + 1; break;
    case ENCODER_OVERFLOW: tp->encoder[1] = (int32_t)p->max_ctx + 1; break;
    case WINDOW_LEFT: p->window_left = -2; break;
    case WINDOW_RIGHT: p->window_right = -7; break;
    case BAD_MODE: p->mode = (xattn_mode)9; break;
    case BAD_ALIGN: p->align = (xattn_align)4; break;
    case BAD_DTYPE: p->dtype = (xattn_dtype)7; break;
    case BAD_INDEX_TYPE: p->req_to_token_type = (xattn_index_type)5; break;
    case TOP_LEFT_BIDIR: p->mode = XATTN_MODE_BIDIRECTIONAL, p->align = XATTN_ALIGN_TOP_LEFT; break;
    case TOP_LEFT_TREE: p->align = XATTN_ALIGN_TOP_LEFT; break;
    case TREE_NO_MASK: p->tree_mask = NULL; break;
    case TREE_SMALL_MAX_EXTEND: p->tree_max_extend = 4; break; /* E = 5 */
    case CROSS_NO_ENCODER: p->encoder_lens = NULL; break;
    case START_OVERLAP: /* request 1 starts inside request 0 */
      start[0] = 0, start[1] = 2, start[2] = 8;
      p->extend_start = start;
      break;
    case START_OUT_OF_RANGE:
      start[0] = 0, start[1] = 3, start[2] = (int32_t)p->total_tokens - 1;
      p->extend_start = start;
      break;
    case START_NEGATIVE:
      start[0] = -1, start[1] = 3, start[2] = 8;
      p->extend_start = start;
      break;
    case SCALE_NAN: p->scale = NAN; break;
    case CAP_NEG: p->logit_cap = -1.0f; break;
    case CAP_INF: p->logit_cap = INFINITY; break;
    case SINK_NAN: tp->sinks[1] = NAN; break;
    case OPT_VARIANT: o->variant = "7x9"; return 1;
    case OPT_LAYOUT: o->layout = "diagonal"; return 1;
    case OPT_ISA: o->isa = "z80"; return 1;
    case OPT_PREFETCH_LEVEL: o->prefetch_level = 3; return 1;
    case PAGE_NEG: p->page_size = -1; break;
    case BAD_CACHE_LAYOUT: p->cache_layout = (xattn_cache_layout)7; break;
    /* paged base: request 2 (P = 6) starts at column 2: entries 0 and 1 (tokens 2..7) */
    case BLOCK_HIGH: set_slot(tp, tp->req_index[2], 1, p->cache_slots); break;
    case BLOCK_NEG: set_slot(tp, tp->req_index[2], 0, -1); break;
    case BLOCK_STRIDE_OVERLAP: p->k_cache_block_stride = p->k_cache.head_stride; break;
    case BLOCK_STRIDE_NEG: p->v_cache_block_stride = -1; break;
    case START_COL_NEG: tp->start_col[0] = -1; break;
    case START_COL_PAST_CTX: tp->start_col[0] = p->max_ctx * p->page_size; break;
    case PAGED_IN_BLOCK_OVERLAP: p->v_cache.head_stride = p->v_cache.token_stride; break;
    case FP8_AS_DTYPE: p->dtype = XATTN_E4M3FN; break;
    case CACHE_DTYPE_MISMATCH: p->cache_dtype = XATTN_F16; break;
    case K_SCALE_NAN: p->k_scale = NAN; break;
    case V_SCALE_INF: p->v_scale = INFINITY; break;
    case K_SCALES_NAN_READ: /* request 2's first key */
      tp->kv_scales[(((const int32_t *)tp->table)[tp->req_index[2] * p->max_ctx]) * p->heads_kv + 1] = NAN;
      break;
    case V_SCALES_NAN_UNREAD: break; /* tp_build already leaves NaN scales on every unused token */
    case UNUSED_BLOCK_GARBAGE: /* entries before and after the ones request b's keys span */
      for (int b = 0; b < p->batch; ++b) {
        int64_t first = tp->start_col[b] / p->page_size, last = (tp->start_col[b] + tp->prefix[b] - 1) / p->page_size;
        for (int64_t e = 0; e < p->max_ctx; ++e)
          if (tp->prefix[b] == 0 || e < first || e > last) set_slot(tp, tp->req_index[b], e, -987654321);
      }
      break;
  }
  return 0;
}

static int accepted(const bad_case *c, xattn_status s) { return s == c->want[0] || s == c->want[1]; }

static int message_ok(const bad_case *c, xattn_status s, char *why, size_t len) {
  const char *m = xattn_last_error();
  if (s == XATTN_OK) {
    if (m[0]) return snprintf(why, len, "success left last_error \"%s\"", m), 0;
    return 1;
  }
  if (!m[0]) return snprintf(why, len, "empty last_error"), 0;
  if (strchr(m, '\n')) return snprintf(why, len, "last_error has several lines"), 0;
  if (!strstr(m, c->field)) return snprintf(why, len, "last_error \"%s\" does not name %s", m, c->field), 0;
  return 1;
}

int main(int argc, char **argv) {
  /* --only NAME / --skip NAME: run or leave out the cases whose name contains NAME */
  const char *only = argc == 3 && !strcmp(argv[1], "--only") ? argv[2] : NULL;
  const char *skip = argc == 3 && !strcmp(argv[1], "--skip") ? argv[2] : NULL;
  if (argc != 1 && !only && !skip) {
    fprintf(stderr, "usage: test_bad_input [--only NAME | --skip NAME]\n");
    return 2;
  }
  /* B = 3: P = (4, 0, 6), E = (3, 5, 2); cross encoders (5, 3, 0); sinks on */
  tp_shape shape = {"bad", 3, {4, 0, 6}, {3, 5, 2}, {5, 3, 0}, 4, 2, 16, 16, 0, 0, 0, 0, 0, 0, 1, 0.5};
  int n = (int)(sizeof cases / sizeof *cases), failures = 0, checks = 0, ran = 0;
  for (int i = 0; i < n; ++i) {
    const bad_case *c = &cases[i];
    if ((only && !strstr(c->name, only)) || (skip && strstr(c->name, skip))) continue;
    tp_shape s = shape;
    if (c->k == SLOT_HIGH_I64) s.idx64 = 1;
    xattn_mode mode = c->base == BASE_TREE ? XATTN_MODE_TREE : c->base == BASE_CROSS ? XATTN_MODE_CROSS : XATTN_MODE_CAUSAL;
    ran++;
    tp_mask m = {XATTN_F32, mode, XATTN_ALIGN_BOTTOM_RIGHT, -1, -1, 0, XATTN_CACHE_TOKEN_MAJOR, 0, 0, 0};
    if (c->base == BASE_PAGED) m.page_size = 4, m.cache_layout = XATTN_CACHE_HEAD_MAJOR, m.start_cols = 1;
    if (c->base == BASE_FP8) m.kv8 = XATTN_E4M3FN;
    tproblem tp;
    if (tp_build(&tp, &s, m, 7 + (uint64_t)i)) return 1;
    /* the untouched problem is valid: the reference of the valid rows */
    if (tp_reference(&tp) != XATTN_OK) {
      printf("FAIL %s: base problem invalid: %s\n", c->name, xattn_last_error());
      return 1;
    }
    xattn_options o;
    xattn_options_init(&o);
    int opts_only = apply(c->k, &tp, &tp.p, &o);
    const xattn_problem *p = c->k == NULL_PROBLEM ? NULL : &tp.p;
    char why[512];
    int bad = 0;
    xattn_status sv = XATTN_OK, sr = XATTN_OK, se;
    /* 1. validate */
    if (!opts_only) {
      sv = xattn_validate(p);
      checks++;
      if (!accepted(c, sv) || !message_ok(c, sv, why, sizeof why)) {
        if (accepted(c, sv)) printf("FAIL %s: xattn_validate: %s\n", c->name, why);
        else printf("FAIL %s: xattn_validate returned %s (\"%s\")\n", c->name, xattn_status_string(sv), xattn_last_error());
        bad++;
      }
      /* 2. the visible-pair count refuses it too, unless only the output is
       * broken: the count and the reference never touch o */
      int o_only = c->k == NULL_O || c->k == O_OVERLAP;
      xattn_status sv_no_o = o_only ? XATTN_OK : sv;
      int64_t v = xattn_visible_pairs(p);
      checks++;
      if ((sv_no_o == XATTN_OK) != (v >= 0)) {
        printf("FAIL %s: xattn_visible_pairs returned %lld\n", c->name, (long long)v);
        bad++;
      }
      /* 3. the reference */
      double *ref = malloc(sizeof(double) * 10 * 4 * 16); /* T x H_Q x DV of the shape */
      sr = xattn_reference(p, ref);
      free(ref);
      checks++;
      if (sr != sv_no_o) {
        printf("FAIL %s: xattn_reference returned %s, validate %s\n", c->name, xattn_status_string(sr), xattn_status_string(sv));
        bad++;
      }
    }
    /* a broken problem that validation let through must not be run: it could
     * read out of bounds */
    if (!opts_only && sv == XATTN_OK && c->want[0] != XATTN_OK && c->want[1] != XATTN_OK) {
      printf("FAIL %s: accepted by validation; not running it\n", c->name);
      failures += bad;
      tp_free(&tp);
      continue;
    }
    /* 4. the kernel: status, message, o untouched on error, right answer on success */
    tp_reset_output(&tp);
    se = xattn_extend_attention(p, &o);
    checks++;
    if (!accepted(c, se) || !message_ok(c, se, why, sizeof why)) {
      if (accepted(c, se)) printf("FAIL %s: xattn_extend_attention: %s\n", c->name, why);
      else printf("FAIL %s: xattn_extend_attention returned %s (\"%s\")\n", c->name, xattn_status_string(se), xattn_last_error());
      bad++;
    }
    if (se != XATTN_OK) {
      size_t changed = 0;
      for (size_t b = 0; b < tp.o_bytes; ++b) changed += tp.o_buf[b] != TP_SENTINEL;
      checks++;
      if (changed) {
        printf("FAIL %s: rejected call wrote %zu bytes of o\n", c->name, changed);
        bad++;
      }
    } else if (c->want[0] == XATTN_OK) {
      tp_result r = tp_check(&tp);
      checks++;
      if (!tp_ok(&r)) {
        char rd[400];
        tp_describe_result(&r, rd, sizeof rd);
        printf("FAIL %s: valid call gave a wrong answer: %s\n", c->name, rd);
        bad++;
      }
    }
    if (!bad)
      printf("ok   %-55s validate %-6s kernel %-11s \"%s\"\n", c->name, opts_only ? "-" : xattn_status_string(sv),
             xattn_status_string(se), se == XATTN_OK ? "" : xattn_last_error());
    failures += bad;
    tp_free(&tp);
  }
  printf("bad_input: %d cases, %d checks, %d failures\n", ran, checks, failures);
  return failures || !ran ? 1 : 0;
}
