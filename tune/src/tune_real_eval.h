/* The evaluator on the real library: builds the class's workloads with
 * bench's problem builder, binds threads with bench's placement, times
 * xattn_extend_attention, and verifies candidates against xattn_reference on
 * small problems that keep the class's shape (see shrink_workload). */
#ifndef TUNE_REAL_EVAL_H
#define TUNE_REAL_EVAL_H

#include "tune_classes.h"
#include "tune_env.h"
#include "tune_eval.h"

typedef struct real_eval real_eval;

real_eval *real_eval_open(tune_env *env, const tune_class_set *cs, uint64_t seed);
void real_eval_close(real_eval *r);
tune_eval real_eval_iface(real_eval *r);
/* on: every timed call starts with its problem's memory flushed from every
 * cache level (xb_problem_flush, outside the timed interval), as a served
 * decode step finds its K/V in DRAM; off (the default): back to back. */
void real_eval_set_flush(real_eval *r, int on);
/* Options a candidate runs with (cand NULL: all left to the config header). */
void real_eval_options(const tune_cand *cand, void *xattn_options_out);

#endif
