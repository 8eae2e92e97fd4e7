"""stats.utest_pvalues (the batched U test compare uses) gives, pair by pair,
the p-value of scipy's mannwhitneyu called on that pair alone, as Google
Benchmark's compare.py calls it: exact and asymptotic methods, ties, unequal
sizes, too few samples, non-finite values mixed in."""
import math
import random

from scipy.stats import mannwhitneyu

from xattn.perf import stats


def one_call(a, b):
    if len(a) < 2 or len(b) < 2:
        return None
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def test_batched_equals_one_call_per_pair():
    rnd = random.Random(7)
    pairs = []
    for i in range(600):
        na, nb = rnd.choice((1, 2, 3, 5, 8, 9, 12)), rnd.choice((2, 3, 5, 8, 10))
        grid = rnd.choice((None, 4))  # a coarse grid makes ties
        a = [rnd.gauss(1.0, 0.1) if grid is None else rnd.randrange(grid) for _ in range(na)]
        b = [rnd.gauss(1.05, 0.1) if grid is None else rnd.randrange(grid) for _ in range(nb)]
        if i % 97 == 0:
            a[0] = float("nan")
        pairs.append((a, b))
    got = stats.utest_pvalues(pairs)
    assert len(got) == len(pairs)
    for (a, b), p in zip(pairs, got):
        want = one_call(a, b)
        if want is None or math.isnan(want):
            assert p is None and want is None or math.isnan(p), (a, b, p, want)
        else:
            assert p == want, (a, b, p, want)
    assert sum(p is not None and not math.isnan(p) for p in got) > 400


def test_single_pair():
    assert stats.utest_pvalue([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == one_call([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert stats.utest_pvalue([1.0], [2.0, 3.0]) is None
    assert stats.utest_pvalue([1.0, 1.0], [1.0, 1.0]) == 1.0
