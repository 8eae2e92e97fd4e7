/* Loading a case folder (docs/formats.md §1) into an xattn_problem, and writing o.npy.
 *
 * The loader checks what only the files can tell (each file exists, has the
 * dtype and the shape case.json implies, case.json is well-formed) and then
 * hands the assembled problem to xattn_validate(), which owns every semantic
 * rule (index ranges, P_b + E_b <= max_ctx, H_Q % H_KV, windows, ...). Either
 * way a refusal is one line in err naming the file or field and the reason.
 * Shared by the xattn command, the tests and anyone who wants to run a case.
 */
#ifndef XATTN_CLI_CASE_IO_H
#define XATTN_CLI_CASE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "npy.h"
#include "xattn/xattn.h"

typedef struct xattn_case {
  xattn_problem problem; /* every pointer in it points into the storage below; o is NULL */
  int64_t max_extend;    /* max E_b */
  int has_sinks;
  /* storage */
  int32_t *prefix_lens, *extend_lens, *encoder_lens;
  int64_t *req_index, *req_start_col;
  npy_array q, k_ext, v_ext, k_cache, v_cache, req_to_token, req_index_file, sinks, tree_mask, k_scales, v_scales;
  unsigned long long json_dev, json_ino; /* case.json */
} xattn_case;

/* Loads dir/case.json and dir/<tensor>.npy. Returns XATTN_OK, or an error
 * status with one line in err (the case is then empty; xattn_case_free is
 * still safe to call). */
xattn_status xattn_case_load(const char *dir, xattn_case *c, char *err, size_t errlen);
void xattn_case_free(xattn_case *c);

/* Whether path names a file the loader read (case.json or a tensor), through
 * whatever name or hard link: `xattn run -o` must never replace its input. */
int xattn_case_reads(const xattn_case *c, const char *path);

/* Writes any valid problem as a case folder (creating dir if needed): rows
 * packed in request order, tensors made dense, the token table, req_index,
 * sinks and tree mask copied. Loading it back gives the same answer. Used to
 * hand a failing test problem to `xattn run` and to other tools. */
xattn_status xattn_case_save(const char *dir, const xattn_problem *p, char *err, size_t errlen);

/* The npy dtype that holds tensors of dtype t (bf16 -> <u2 bit patterns). */
npy_dtype xattn_case_npy_dtype(xattn_dtype t);

/* Writes a dense [T, H_Q, DV] output of dtype t (or f64 when as_f64) to path. */
xattn_status xattn_case_write_output(const char *path, const void *o, xattn_dtype t, int as_f64,
                                     int64_t tokens, int heads_q, int head_dim_v, char *err,
                                     size_t errlen);

#endif
