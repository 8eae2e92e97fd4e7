/* Validation entry shared by the public API and the reference. */
#ifndef XATTN_INTERNAL_VALIDATE_H
#define XATTN_INTERNAL_VALIDATE_H
#include "xattn/xattn.h"

/* xattn_validate without the output checks (o, its strides) when
 * check_output is 0: the reference and xattn_visible_pairs do not write o. */
xattn_status xattn_validate_inputs(const xattn_problem *p, int check_output);

#endif
