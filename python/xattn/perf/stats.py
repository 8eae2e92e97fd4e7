"""Statistics for comparing two sets of repetitions.

The U test is scipy's two-sided Mann-Whitney U, called exactly as Google
Benchmark's compare.py (gbench.report.calc_utest) calls it, so a p-value printed
here is the one compare.py would print; many pairs are tested in one vectorised
call per group (utest_pvalues), which gives the same numbers.
"""
import math

# Fewer samples than this a side and the two-sided U test cannot reach p < 0.05
# at all (3 vs 3: smallest p is 0.1), so the tools warn about it.
MIN_SAMPLES_FOR_SIGNIFICANCE = 4


def utest_source():
    return "scipy.stats.mannwhitneyu (two-sided, as gbench.report.calc_utest)"


def utest_pvalues(pairs):
    """[two-sided Mann-Whitney U p-value of a vs b for (a, b) in pairs]; None
    where either side has fewer than 2 samples (no test possible).

    scipy's method 'auto' picks the exact or the asymptotic test from the two
    sizes and whether the samples hold ties; pairs that agree on those three
    are tested in one vectorised call (axis=1), which yields the p-values of one
    call per pair at a small fraction of the cost (a per-pair call costs
    milliseconds: minutes for the 20k benchmarks of a 100k-row file)."""
    out = [None] * len(pairs)
    groups = {}
    for i, (a, b) in enumerate(pairs):
        a = [float(x) for x in a]
        b = [float(x) for x in b]
        if len(a) < 2 or len(b) < 2:
            continue
        if all(math.isfinite(v) for v in a + b):
            key = (len(a), len(b), len(set(a + b)) < len(a) + len(b))
        else:
            key = ("non-finite", i)  # alone: it must not change the method of the others
        groups.setdefault(key, []).append((i, a, b))
    if not groups:
        return out
    import numpy as np
    from scipy.stats import mannwhitneyu
    for members in groups.values():
        xs = np.array([a for _, a, _ in members])
        ys = np.array([b for _, _, b in members])
        with np.errstate(all="ignore"):
            ps = mannwhitneyu(xs, ys, alternative="two-sided", axis=1).pvalue
        for (i, _, _), p in zip(members, np.atleast_1d(ps)):
            out[i] = float(p)
    return out


def utest_pvalue(a, b):
    """utest_pvalues for one pair."""
    return utest_pvalues([(a, b)])[0]


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
