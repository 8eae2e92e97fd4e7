"""Per-benchmark comparison of two results files, and its text rendering.

A benchmark is a REGRESSION when its repetitions differ significantly (two-sided
Mann-Whitney U on real time, p < alpha) AND its median time grew by more than
the threshold; an IMPROVEMENT is the mirror image; everything else is unchanged.
Rate counters (gflops, tokens_per_s, pct_peak, speedup_vs_blas) are compared with
the same test over their per-repetition values.

Runs merged from interleaved rounds (`xattn_round` on every iteration row, as
runner.merge_rounds writes them) also give each benchmark its paired round
ratios: per round, head's median time over base's median time in that round,
and their median and range. A round's two sides ran back to back, so a load
that moves the whole machine between rounds cancels in the ratio, where it
widens the pooled samples the U test sees. Rounds are paired only between the
two sides of one interleaved run (the same `xattn_interleave_run` in both
contexts): two files measured at different times have no such pairs.

A control (`xattn compare --control`: base's executable run a second time in
every round of the same interleaved run) gives each benchmark an A/A noise
floor measured beside the change: its paired round ratios control / base,
whose code is identical. With a control, a change is a regression or an
improvement only when, besides the U test and the threshold, the median of
its paired round ratios lies outside the range of the control's: on a shared
machine two builds of the same code ran 0.71-1.39 apart per round
(bench/README.md "Ice Lake"), more than any threshold, and a change inside
such a spread is not told apart from it. Such rows stay "unchanged" and say what
the U test alone would have called them (`without_control`).
"""
from . import stats
from ..results import (COMPARE_SCHEMA, RATE_COUNTERS, ResultsError, parse_name,
                      row_counters, row_seconds, utc_stamp)


# Name fields xattn-bench fills in with what the build resolved ("auto"): a
# commit that changes the default ISA, variant or layout renames the rows of the
# same workload. Such rows are still paired, and the change is shown.
RESOLVED_FIELDS = ("variant", "layout", "isa")


def unresolved_key(name):
    return "/".join(seg for seg in name.split("/") if seg.split(":", 1)[0] not in RESOLVED_FIELDS)


def pair_benchmarks(base, head):
    """[(base name, head name)]: equal names first; then, among the names left,
    those equal but for the resolved fields, where that pairing is unambiguous."""
    head_names = set(head.names())
    pairs = [(n, n) for n in base.names() if n in head_names]
    paired = {n for n, _ in pairs}
    rest_b = [n for n in base.names() if n not in paired]
    rest_h = [n for n in head.names() if n not in paired]
    kb, kh = {}, {}
    for n in rest_b:
        kb.setdefault(unresolved_key(n), []).append(n)
    for n in rest_h:
        kh.setdefault(unresolved_key(n), []).append(n)
    for key, names in kb.items():
        if len(names) == 1 and len(kh.get(key, [])) == 1:
            pairs.append((names[0], kh[key][0]))
    return pairs


def check_comparable(base, head, allow_mixed_machines=False):
    """Raise ResultsError (one line) when base and head must not be compared;
    else return the benchmark pairs."""
    if not allow_mixed_machines and base.machine != head.machine:
        raise ResultsError("results come from different machines: %s (%s) vs %s (%s); "
                           "pass --allow-mixed-machines to compare anyway"
                           % (base.machine, base.path, head.machine, head.path))
    pairs = pair_benchmarks(base, head)
    if not pairs:
        raise ResultsError("no benchmark names in common between %s (%d benchmarks) and %s (%d)"
                           % (base.path, len(base.names()), head.path, len(head.names())))
    return pairs


def resolved_change(base_name, head_name):
    """'isa:avx512bf16->amx' for the fields that differ, '' when the names are equal."""
    fb, fh = parse_name(base_name), parse_name(head_name)
    return ", ".join("%s:%s->%s" % (k, fb.get(k, "?"), fh.get(k, "?"))
                     for k in RESOLVED_FIELDS if fb.get(k) != fh.get(k))


def _side_info(rf, n_samples):
    load = rf.context.get("load_avg")
    return {"path": rf.path, "label": rf.label, "machine": rf.machine, "commit": rf.commit,
            "samples_per_benchmark": n_samples,
            "load_avg": load[0] if isinstance(load, list) and load else None,
            "num_cpus": rf.context.get("num_cpus")}


def round_ratios(a, b):
    """Paired round ratios of one benchmark from its base and head iteration
    rows: {"n", "median", "min", "max"} over the rounds both sides ran (head
    median time / base median time per round), or None when a row carries no
    `xattn_round` or fewer than 2 rounds are common."""
    by = []
    for rows in (a, b):
        rounds = {}
        for r in rows:
            tag = r.get("xattn_round")
            if tag is None:
                return None
            rounds.setdefault(str(tag), []).append(row_seconds(r))
        by.append(rounds)
    ratios = []
    for t in set(by[0]) & set(by[1]):
        mb = stats.median(by[0][t])
        if mb > 0:
            ratios.append(stats.median(by[1][t]) / mb)
    if len(ratios) < 2:
        return None
    return {"n": len(ratios), "median": stats.median(ratios), "min": min(ratios), "max": max(ratios)}


def _verdict(pvalue, change, alpha, threshold):
    if pvalue is None or pvalue != pvalue or change != change:  # NaN: no test was possible
        return "untested"
    if pvalue < alpha and change > threshold:
        return "regression"
    if pvalue < alpha and change < -threshold:
        return "improvement"
    return "unchanged"


def _within(rounds, control):
    """Whether the median paired round ratio lies inside the control's range."""
    return control["min"] <= rounds["median"] <= control["max"]


def compare(base, head, alpha=0.05, threshold_pct=5.0, allow_mixed_machines=False, control=None):
    """Compare two ResultFile objects; returns the JSON-ready comparison dict.
    control: a third ResultFile, base's executable again in every round of the
    same interleaved run (ResultsError otherwise), or None."""
    pairs = check_comparable(base, head, allow_mixed_machines)
    threshold = threshold_pct / 100.0
    rows = []
    n_min = None
    run = base.context.get("xattn_interleave_run")  # rounds pair only within one interleaved run
    paired_rounds = bool(run) and run == head.context.get("xattn_interleave_run")
    if control is not None and not (paired_rounds and control.context.get("xattn_interleave_run") == run):
        raise ResultsError("control %s: not a side of the interleaved run of base %s and head %s"
                           % (control.path, base.path, head.path))
    control_names = set(control.names()) if control is not None else set()
    tests = []  # (a, b, where its p-value goes): all U tests run at once below
    for base_name, name in pairs:
        a, b = base.samples(base_name), head.samples(name)
        ta, tb = [row_seconds(r) for r in a], [row_seconds(r) for r in b]
        n_min = min(n_min or len(ta), len(ta), len(tb))
        ma, mb = stats.median(ta), stats.median(tb)
        change = stats.relative_change(ma, mb)
        counters = {}
        ca = [row_counters(r) for r in a]
        cb = [row_counters(r) for r in b]
        for c in RATE_COUNTERS:
            va = [x[c] for x in ca if c in x]
            vb = [x[c] for x in cb if c in x]
            if not va or not vb:
                continue
            cma, cmb = stats.median(va), stats.median(vb)
            counters[c] = {"base": cma, "head": cmb, "change": stats.relative_change(cma, cmb)}
            tests.append((va, vb, counters[c]))
        tests.append((ta, tb, len(rows)))
        rows.append({
            "name": name, "base_name": base_name, "resolved_change": resolved_change(base_name, name),
            "fields": parse_name(name),
            "n_base": len(ta), "n_head": len(tb),
            "base_time_s": ma, "head_time_s": mb, "time_change": change,
            "counters": counters,
            "rounds": round_ratios(a, b) if paired_rounds else None,
            "control_rounds": round_ratios(a, control.samples(base_name))
            if base_name in control_names else None,
        })
    for (_, _, where), p in zip(tests, stats.utest_pvalues([(a, b) for a, b, _ in tests])):
        if isinstance(where, dict):
            where["pvalue"] = p
        else:
            r = rows[where]
            r.update({"pvalue": p, "significant": p is not None and p < alpha,
                      "verdict": _verdict(p, r["time_change"], alpha, threshold)})
            if r["control_rounds"] and r["rounds"]:
                r["within_control"] = _within(r["rounds"], r["control_rounds"])
                if r["within_control"] and r["verdict"] in ("regression", "improvement"):
                    r["without_control"] = r["verdict"]
                    r["verdict"] = "unchanged"
    ratios = [r["head_time_s"] / r["base_time_s"] for r in rows if r["base_time_s"] > 0]
    gf = [r["counters"]["gflops"]["head"] / r["counters"]["gflops"]["base"]
          for r in rows if "gflops" in r["counters"] and r["counters"]["gflops"]["base"] > 0]
    paired_base, paired_head = {b for b, _ in pairs}, {h for _, h in pairs}
    summary = {v: sum(1 for r in rows if r["verdict"] == v)
               for v in ("regression", "improvement", "unchanged", "untested")}
    summary["within_control"] = sum(1 for r in rows if r.get("without_control"))
    return {
        "schema": COMPARE_SCHEMA,
        "created": utc_stamp(),
        "alpha": alpha, "threshold_pct": threshold_pct, "utest": stats.utest_source(),
        "base": _side_info(base, n_min), "head": _side_info(head, n_min),
        "control": _side_info(control, n_min) if control is not None else None,
        "machine": head.machine if base.machine == head.machine else "mixed",
        "rows": rows,
        "only_base": [n for n in base.names() if n not in paired_base],
        "only_head": [n for n in head.names() if n not in paired_head],
        "geomean": {"time_ratio": stats.geomean(ratios), "gflops_ratio": stats.geomean(gf),
                    "n": len(ratios)},
        "summary": summary,
    }


# ---- text ---------------------------------------------------------------------

def _common_segments(names):
    """Segments ('key:value') shared by every name, in order."""
    split = [n.split("/") for n in names]
    if not split:
        return []
    return [s for s in split[0] if all(s in other for other in split[1:])]


def short_names(names):
    """(common prefix text, {name: name without the shared segments})."""
    common = _common_segments(names) if len(names) > 1 else []
    short = {}
    for n in names:
        rest = [s for s in n.split("/") if s not in common]
        short[n] = "/".join(rest) or n
    return "/".join(common), short


def _pct(x):
    return "%+.1f%%" % (100.0 * x)


def _fmt_time(s):
    for unit, mult in (("s", 1.0), ("ms", 1e3), ("us", 1e6), ("ns", 1e9)):
        if s * mult >= 1.0 or unit == "ns":
            return "%.3g%s" % (s * mult, unit)
    return "%g" % s


def _fmt_p(p):
    if p is None:
        return "-"
    if p != p:  # NaN is not "< 1e-4"
        return "nan"
    return "%.4f" % p if p >= 1e-4 else "<1e-4"


def fmt_rounds(rr):
    """'1.032 (0.95-1.10)': the median of the paired round ratios and their range."""
    if not rr:
        return "-"
    return "%.3f (%.2f-%.2f)" % (rr["median"], rr["min"], rr["max"])


def format_text(cmp):
    """The table `xattn compare` prints."""
    lines = []
    b, h = cmp["base"], cmp["head"]
    lines.append("base: %s (%s)   head: %s (%s)   machine: %s"
                 % (b["commit"], b["label"], h["commit"], h["label"], cmp["machine"]))
    lines.append("test: two-sided Mann-Whitney U on real time (%s), alpha %.3g; "
                 "regression = significant and slower by more than %.3g%%"
                 % (cmp["utest"], cmp["alpha"], cmp["threshold_pct"]))
    n = b["samples_per_benchmark"] or 0
    if n < stats.MIN_SAMPLES_FOR_SIGNIFICANCE:
        lines.append("WARNING: only %d repetitions a side; the U test cannot reach p < 0.05 "
                     "with fewer than %d" % (n, stats.MIN_SAMPLES_FOR_SIGNIFICANCE))
    loads = [s["load_avg"] for s in (b, h) if s.get("load_avg") is not None]
    cpus = max([int(s.get("num_cpus") or 0) for s in (b, h)] + [1])
    if loads and max(loads) > 0.5 * cpus:
        lines.append("WARNING: load average up to %.1f on %d CPU(s) at the start of the runs: other processes "
                     "shared the cores (interleaving spreads that over both sides, but adds noise)"
                     % (max(loads), cpus))
    names = [r["name"] for r in cmp["rows"]]
    common, short = short_names(names)
    if common:
        lines.append("common to all rows: " + common)
    with_control = cmp.get("control") is not None
    if with_control:
        lines.append("control: base's executable again in every round (A/A); a change counts only when "
                     "its median round ratio h/b lies outside the control's range c/b")
    header = ["benchmark", "base", "head", "time", "rounds h/b"] + (["A/A c/b"] if with_control else []) + \
        ["gflops", "gflops", "tok/s", "%peak", "p", "verdict"]
    table = [header]
    renamed = {}
    for r in cmp["rows"]:
        c = r["counters"]
        gf = c.get("gflops")
        if r.get("resolved_change"):
            renamed.setdefault(r["resolved_change"], 0)
            renamed[r["resolved_change"]] += 1
        table.append([
            short[r["name"]] + (" ~" if r.get("resolved_change") else ""), _fmt_time(r["base_time_s"]), _fmt_time(r["head_time_s"]),
            _pct(r["time_change"]),
            fmt_rounds(r["rounds"])] + ([fmt_rounds(r.get("control_rounds"))] if with_control else []) + [
            ("%.1f->%.1f" % (gf["base"], gf["head"])) if gf else "-",
            _pct(gf["change"]) if gf else "-",
            _pct(c["tokens_per_s"]["change"]) if "tokens_per_s" in c else "-",
            _pct(c["pct_peak"]["change"]) if "pct_peak" in c else "-",
            _fmt_p(r["pvalue"]),
            r["verdict"].upper() if r["verdict"] in ("regression", "improvement")
            else "unchanged (A/A)" if r.get("without_control") else r["verdict"],
        ])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [row[j].rjust(widths[j]) for j in range(1, len(row))]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    g = cmp["geomean"]
    s = cmp["summary"]
    lines.append("geomean over %d benchmarks: time head/base %.4f (%s), gflops head/base %.4f (%s)"
                 % (g["n"], g["time_ratio"], _pct(g["time_ratio"] - 1), g["gflops_ratio"],
                    _pct(g["gflops_ratio"] - 1) if g["gflops_ratio"] == g["gflops_ratio"] else "n/a"))
    lines.append("summary: %d regression(s), %d improvement(s), %d unchanged, %d untested"
                 % (s["regression"], s["improvement"], s["unchanged"], s["untested"]))
    if s.get("within_control"):
        lines.append("(A/A) %d change(s) the U test alone would flag lie within the control's round ratios: "
                     "counted unchanged" % s["within_control"])
    for change, count in sorted(renamed.items()):
        lines.append("~ %d benchmark(s) paired across a changed resolution (names shown are head's): %s"
                     % (count, change))
    for key, what in (("only_base", "only in base"), ("only_head", "only in head")):
        if cmp[key]:
            lines.append("%s (not compared): %d benchmark(s), e.g. %s" % (what, len(cmp[key]), cmp[key][0]))
    return "\n".join(lines)


# ---- markdown (CI summary) ---------------------------------------------------------------

MARKDOWN_MAX_ROWS = 20


def format_markdown(cmp):
    """A short markdown summary a CI system can post (GitHub's
    $GITHUB_STEP_SUMMARY, a merge-request note): the verdict, the geomean, and
    the regressions and improvements (at most MARKDOWN_MAX_ROWS rows)."""
    b, h, s, g = cmp["base"], cmp["head"], cmp["summary"], cmp["geomean"]
    verdict = ("**%d regression(s)**" % s["regression"]) if s["regression"] else "no regression"
    lines = ["### xattn performance: %s" % verdict, "",
             "head `%s` vs base `%s` on `%s`: %d benchmark(s), %d sample(s) a side; geomean time head/base "
             "**%.4f** (%s); %d regression(s), %d improvement(s), %d unchanged, %d untested."
             % (h["commit"], b["commit"], cmp["machine"], g["n"], b["samples_per_benchmark"] or 0,
                g["time_ratio"], _pct(g["time_ratio"] - 1), s["regression"], s["improvement"], s["unchanged"],
                s["untested"]), "",
             "Regression: two-sided Mann-Whitney U p < %g and slower by more than %g %%."
             % (cmp["alpha"], cmp["threshold_pct"])]
    loads = [x["load_avg"] for x in (b, h) if x.get("load_avg") is not None]
    if loads:
        lines[-1] += " Load average at the start: %s." % " / ".join("%.1f" % l for l in loads)
    if cmp.get("control") is not None:
        lines[-1] += (" With an A/A control (base run twice a round): %d change(s) within its round ratios "
                      "counted unchanged." % s.get("within_control", 0))
    shown = [r for r in cmp["rows"] if r["verdict"] in ("regression", "improvement")]
    shown.sort(key=lambda r: (r["verdict"] != "regression", -abs(r["time_change"])))
    if shown:
        lines += ["", "| benchmark | base | head | time | rounds h/b | p | verdict |", "|---|---:|---:|---:|---:|---:|---|"]
        for r in shown[:MARKDOWN_MAX_ROWS]:
            lines.append("| `%s` | %s | %s | %s | %s | %s | %s |"
                         % (r["name"], _fmt_time(r["base_time_s"]), _fmt_time(r["head_time_s"]),
                            _pct(r["time_change"]), fmt_rounds(r["rounds"]), _fmt_p(r["pvalue"]),
                            r["verdict"].upper()))
        if len(shown) > MARKDOWN_MAX_ROWS:
            lines.append("")
            lines.append("(%d more not shown)" % (len(shown) - MARKDOWN_MAX_ROWS))
    return "\n".join(lines) + "\n"
