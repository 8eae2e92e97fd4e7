"""Statistics for comparing two sets of repetitions.

Uses Google Benchmark's own tools (Debian package libbenchmark-tools,
/usr/share/benchmark/gbench) when importable, so that a p-value printed here is
the one compare.py would print; falls back to scipy's Mann-Whitney U test, which
is what gbench itself calls.
"""
import math
import os
import sys

_GBENCH_DIRS = [os.environ.get("XATTN_GBENCH_DIR", ""), "/usr/share/benchmark"]


def _import_gbench_report():
    for d in _GBENCH_DIRS:
        if d and os.path.isfile(os.path.join(d, "gbench", "report.py")):
            if d not in sys.path:
                sys.path.append(d)
            try:
                from gbench import report  # noqa: E402
                return report
            except Exception:  # a broken or incompatible gbench: use scipy
                return None
    return None


_UNSET = object()
_report_module = _UNSET


def _gbench():
    """gbench.report, imported on first use (it pulls in scipy, which takes a
    noticeable fraction of a second: commands that refuse their input early
    should not pay for it)."""
    global _report_module
    if _report_module is _UNSET:
        _report_module = _import_gbench_report()
    return _report_module


def utest_source():
    return "gbench.report.calc_utest" if _gbench() else "scipy.stats.mannwhitneyu"


# Fewer samples than this a side and the two-sided U test cannot reach p < 0.05
# at all (3 vs 3: smallest p is 0.1), so the tools warn about it.
MIN_SAMPLES_FOR_SIGNIFICANCE = 4


def utest_pvalue(a, b):
    """Two-sided Mann-Whitney U p-value of samples a vs b; None when either side
    has fewer than 2 samples (no test possible)."""
    a = [float(x) for x in a]
    b = [float(x) for x in b]
    if len(a) < 2 or len(b) < 2:
        return None
    _report = _gbench()
    if _report is not None:
        # calc_utest(cpu, real) tests both; we feed the same samples twice and use one.
        _, _, pvalue = _report.calc_utest([a, b], [a, b])
        if pvalue is not None:
            return float(pvalue)
        return None
    if len(set(a) | set(b)) == 1:
        return 1.0  # all identical: no evidence of a difference
    from scipy.stats import mannwhitneyu
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def relative_change(old, new):
    """(new - old) / |old|: gbench.report.calculate_change's formula (not imported
    from there: it would load scipy just for a subtraction)."""
    if old == 0 and new == 0:
        return 0.0
    if old == 0:
        return float(new - old) / (float(old + new) / 2)
    return float(new - old) / abs(old)


def median(values):
    vals = sorted(float(v) for v in values)
    n = len(vals)
    if not n:
        return float("nan")
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])


def geomean(values):
    vals = [float(v) for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return float("nan")
    return float(math.exp(sum(math.log(v) for v in vals) / len(vals)))
