#include "tune_report.h"

#include <stdarg.h>
#include <string.h>

#include "tune_header.h"
#include "tune_prune.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/machine.h"

/* The rows of the header this build was compiled with (the "defaults"). */
#include TUNE_BASE_HEADER
/* threads may be followed by kv_splits, prefetch, lanes_rows, lanes_rows_fp8 and prefetch_level (optional columns) */
#define TUNE_BASE_ROW(i, t, d, dv, m, eb, pb, v, l, s, ...) {i, t, d, dv, m, eb, pb, v, l, s, __VA_ARGS__},
#pragma GCC diagnostic ignored "-Wmissing-field-initializers" /* the left-out columns are 0 = auto */
static const tune_row base_rows[] = {XATTN_CONFIG_CLASSES(TUNE_BASE_ROW)};
#undef TUNE_BASE_ROW

int tune_base_rows(const tune_row **rows) {
  *rows = base_rows;
  return (int)(sizeof base_rows / sizeof base_rows[0]);
}

void tune_default_config(const tune_class_set *cs, int ci, char *out, size_t n) {
  /* the kernels' own lookup rule (first matching row) over the same rows */
  const tune_class *c = &cs->classes[ci];
  for (size_t i = 0; i < sizeof base_rows / sizeof base_rows[0]; i++) {
    const tune_row *r = &base_rows[i];
    if (!tune_row_matches(r, c->isa, c->dtype, c->d, c->dv, c->mode, c->extend_bucket,
                          c->prefix_bucket))
      continue;
    /* the candidate keys' spelling (tune_cand_make_key): a field shows only when set */
    char extra[48] = "";
    if (r->kv_splits) snprintf(extra, sizeof extra, "/s%d", r->kv_splits);
    if (r->prefetch) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "/pf%d", r->prefetch);
    if (r->prefetch_level) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "/pfl%d", r->prefetch_level);
    /* lanes from this many rows per KV group (the defaults run it so: NULL options) */
    if (r->lanes_rows) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "/lanes>=%d", r->lanes_rows);
    if (r->lanes_rows_fp8)
      snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "/fp8lanes>=%d", r->lanes_rows_fp8);
    if (r->threads > 0) snprintf(out, n, "%s/%s/%s/t%d%s", r->variant, r->layout, r->schedule, r->threads, extra);
    else snprintf(out, n, "%s/%s/%s/tall%s", r->variant, r->layout, r->schedule, extra);
    return;
  }
  snprintf(out, n, "(no row)");
}

static void appendf(char *buf, size_t cap, size_t *k, const char *fmt, ...) {
  if (*k + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *k, cap - *k, fmt, ap);
  va_end(ap);
  if (w > 0) *k = (size_t)w < cap - *k ? *k + (size_t)w : cap - 1;
}

/* What a timed call found in the caches (tune_identity.timing), for the
 * provenance and the reports. */
const char *tune_timing_words(const char *timing) {
  return timing && !strcmp(timing, "flushed")
             ? "flushed: every timed call began with its problem's memory out of every cache level (--flush-caches)"
             : "warm: calls back to back, the problem left in the caches by the call before";
}

void tune_provenance(const tune_env *env, const tune_class_set *cs, const tune_run *run,
                     double elapsed, const char *date, char *comment, size_t cn, char *line,
                     size_t ln) {
  int adopted = 0;
  double overall = tune_overall_speedup(run->results, run->n_classes, &adopted);
  size_t k = 0;
  comment[0] = '\0';
#define ADD(...) appendf(comment, cn, &k, __VA_ARGS__)
  ADD("machine: %s\n", env->id.machine);
  ADD("cpu model: %s\n", env->id.cpu_model);
  ADD("topology: %s; caches L1d %lld KiB, L2 %lld KiB, L3 %lld KiB\n", env->id.topology,
      (long long)env->machine.l1d_bytes >> 10, (long long)env->machine.l2_bytes >> 10,
      (long long)env->machine.l3_bytes >> 10);
  ADD("compiler: %s\nflags: %s\n", env->id.compiler, env->id.cflags);
  ADD("commit: %s\ndate: %s\n", env->commit, date);
  ADD("strategy: %s, %d reps to judge, eta %d, best %d re-measured interleaved, %d+ interleaved "
      "reps vs the defaults, threshold %.0f%%; %ld timed reps in %.0fs\n",
      tune_strategy_name(run->set.strategy), run->set.reps, run->set.eta, run->set.finalists,
      run->set.final_reps,
      100 * run->set.threshold, run->budget.evals, elapsed);
  ADD("inputs: suites %s; kernel digest sha256:%s\n", cs->inputs, env->id.kernel_digest);
  ADD("timing: %s\n", tune_timing_words(env->id.timing));
  {
    char rel[4096];
    ADD("base header: %s\n", xb_repo_relative(xattn_config_header_path(), rel, sizeof rel));
  }
  ADD("speedup over the defaults: geomean %.3fx over %d classes (%d tuned, the rest kept at the "
      "defaults)\n",
      overall, run->n_classes, adopted);
  ADD("\nper class (speedup = median default / median tuned, interleaved; 95%% paired bootstrap CI):\n");
  for (int i = 0; i < run->n_classes; i++) {
    const tune_result *r = &run->results[i];
    char def[96];
    tune_default_config(cs, i, def, sizeof def);
    if (r->adopt)
      ADD("  %s: %.3fx [%.3f, %.3f] %s (default %s)\n", r->cls.key, r->speedup.ratio,
          r->speedup.lo, r->speedup.hi, r->best.key, def);
    else
      ADD("  %s: kept the defaults (%s): %s\n", r->cls.key, def, r->note);
  }
#undef ADD
  /* one line, read by tools (xattn info, plots): no suite names in it, since
   * "default" there would read as "the default header" */
  snprintf(line, ln,
           "xattn-tune %s; machine: %s; cpu: %s; compiler: %s; commit: %s; date: %s; speedup: %.3f "
           "(geomean, %d of %d classes tuned); inputs: %d suite file(s) %s; kernels sha256:%.16s",
           tune_strategy_name(run->set.strategy), env->id.machine, env->id.cpu_model,
           env->id.compiler, env->commit, date, overall, adopted, run->n_classes, cs->n_suites,
           cs->inputs_digest, env->id.kernel_digest);
}

void tune_report_run(FILE *f, const tune_env *env, const tune_class_set *cs, const tune_run *run,
                     double elapsed, const char *date, const char *header_path) {
  int adopted = 0;
  double overall = tune_overall_speedup(run->results, run->n_classes, &adopted);
  fprintf(f, "# xattn-tune report\n\n");
  fprintf(f, "- date: %s, commit %s\n- machine: %s (%s; %s)\n- compiler: %s, flags `%s`\n",
          date, env->commit, env->id.machine, env->id.cpu_model, env->id.topology,
          env->id.compiler, env->id.cflags);
  fprintf(f, "- inputs: %s; kernel digest `%.16s`\n", cs->inputs, env->id.kernel_digest);
  fprintf(f, "- timing: %s\n", tune_timing_words(env->id.timing));
  fprintf(f, "- strategy: %s (reps %d, eta %d, %d finalists, final %d+ interleaved, threshold %.0f%%), "
             "%ld timed reps, %.0f s\n",
          tune_strategy_name(run->set.strategy), run->set.reps, run->set.eta, run->set.finalists,
          run->set.final_reps,
          100 * run->set.threshold, run->budget.evals, elapsed);
  fprintf(f, "- header: `%s`\n", header_path ? header_path : "(none)");
  fprintf(f, "- **overall: geomean %.3fx over %d classes, %d tuned**\n\n", overall, run->n_classes,
          adopted);
  fprintf(f, "| class | workloads | candidates | considered | rejected | default | best | "
             "default ms | best ms | speedup [95%% CI] | decision |\n");
  fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < run->n_classes; i++) {
    const tune_result *r = &run->results[i];
    char def[96];
    tune_default_config(cs, i, def, sizeof def);
    fprintf(f, "| `%s` | %d | %d | %d | %d | %s | %s | ", r->cls.key, cs->n_members[i],
            r->n_candidates, r->n_considered, r->n_rejected, def, r->found ? r->best.key : "-");
    if (r->final_n > 0)
      fprintf(f, "%.3f | %.3f | %.3fx [%.3f, %.3f] | %s |\n", 1e3 * r->default_median,
              1e3 * r->tuned_median, r->speedup.ratio, r->speedup.lo, r->speedup.hi,
              r->adopt ? "**tuned**" : "kept defaults");
    else
      fprintf(f, "- | - | - | %s |\n", r->note);
  }
  fprintf(f, "\n## Notes per class\n\n");
  for (int i = 0; i < run->n_classes; i++) {
    const tune_result *r = &run->results[i];
    fprintf(f, "- `%s`: %s%s\n", r->cls.key, r->note,
            r->complete ? "" : " (search cut by the budget)");
    for (int j = 0; j < r->n_rejected && j < TUNE_MAX_REJECTED; j++)
      fprintf(f, "  - **REJECTED** `%s`: %s\n", r->rejected_key[j], r->rejected_why[j]);
    if (r->n_unsupported) fprintf(f, "  - %d candidate(s) cannot run here\n", r->n_unsupported);
  }
  fprintf(f, "\n## Constraints (candidates pruned, all classes)\n\n```\n");
  tune_prune_report(f, "");
  fprintf(f, "```\n%ld of %ld candidates pruned.\n", run->pruned, run->space_total);
}
