/* Validation entry shared by the public API and the reference. */
#ifndef XATTN_INTERNAL_VALIDATE_H
#define XATTN_INTERNAL_VALIDATE_H
#include "xattn/xattn.h"

/* xattn_validate without the output checks (o, its strides) when
 * check_output is 0: the reference and xattn_visible_pairs do not write o. */
xattn_status xattn_validate_inputs(const xattn_problem *p, int check_output);

/* The two halves of it: what a plan fixes (enums, sizes, lengths, row
 * ranges; no pointer but the length arrays is read), and the rest (tensors,
 * strides, token table entries, req_index, sinks, tree mask), which a plan
 * checks on every run. validate_data expects a valid shape and allocates
 * nothing. */
xattn_status xattn_validate_shape(const xattn_problem *p);
xattn_status xattn_validate_data(const xattn_problem *p, int check_output);

#endif
