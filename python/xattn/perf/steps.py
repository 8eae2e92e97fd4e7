"""Change points in a benchmark's history: the commits where its median moved
beyond the noise (`xattn history steps`, and the marks on the trend plot).

Input: one benchmark's points in commit order, each with the samples (every
repetition) measured at that commit. Method:

1. Binary segmentation on the per-commit medians of log(value): in a segment,
   the candidate split is the one that removes the most squared deviation
   (n_l n_r / n * (mean_l - mean_r)^2); an accepted split is searched again on
   both sides.
2. A split is accepted only when all three hold:
   - it stands out from the commit-to-commit noise: z = |mean_l - mean_r| /
     (sigma sqrt(1/n_l + 1/n_r)) exceeds the two-sided normal quantile of
     alpha / (candidate positions) (Bonferroni over where the split could be).
     sigma is the robust spread of the per-commit medians, 1.4826 * MAD of
     successive differences / sqrt(2): a step moves one difference only, so it
     hardly inflates sigma, while a machine whose load changes between commits
     does, and then only larger steps count;
   - the two segments' samples differ by the two-sided Mann-Whitney U test
     (stats.utest_pvalue, the test `xattn compare` uses), p < alpha;
   - the step, median of the right segment's medians over the left's, is larger
     than min_step (a fraction; noise cannot fake a step this large).
A step is reported at the first commit of the right segment, with its size (the
relative change of the counter: for a rate like gflops negative is slower), the
U p-value and z as its confidence.
"""
import math
from statistics import NormalDist

from . import stats

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_STEP = 0.05
MIN_COMMITS = 3  # with fewer, there is no noise estimate to judge a step by


def _log_medians(points):
    return [math.log(p["median"]) for p in points]


def noise_sigma(logm):
    """Robust standard deviation of per-commit log medians from successive
    differences (0 with fewer than two differences)."""
    diffs = sorted(abs(b - a) for a, b in zip(logm, logm[1:]))
    if len(diffs) < 2:
        return 0.0
    return 1.4826 * stats.median(diffs) / math.sqrt(2.0)


def best_split(x):
    """(k, gain) of the split x[:k] | x[k:] (1 <= k < len(x)) with the largest
    between-segment sum of squares; (None, 0) for fewer than two values."""
    n = len(x)
    if n < 2:
        return None, 0.0
    total = sum(x)
    best, best_k, left = -1.0, None, 0.0
    for k in range(1, n):
        left += x[k - 1]
        ml, mr = left / k, (total - left) / (n - k)
        gain = k * (n - k) / n * (ml - mr) ** 2
        if gain > best:
            best, best_k = gain, k
    return best_k, best


def _pooled(points):
    out = []
    for p in points:
        out.extend(p["samples"])
    return out


def _judge(points, logm, lo, k, hi, sigma, alpha, min_step):
    """The candidate step at k inside [lo, hi): a dict with its figures and
    whether it is accepted."""
    left, right = logm[lo:k], logm[k:hi]
    nl, nr = len(left), len(right)
    diff = sum(right) / nr - sum(left) / nl
    se = max(sigma, 1e-12) * math.sqrt(1.0 / nl + 1.0 / nr)
    z = abs(diff) / se
    z_needed = NormalDist().inv_cdf(1.0 - alpha / (2.0 * max(1, hi - lo - 1)))
    ml = stats.median(p["median"] for p in points[lo:k])
    mr = stats.median(p["median"] for p in points[k:hi])
    size = stats.relative_change(ml, mr)
    p = stats.utest_pvalue(_pooled(points[lo:k]), _pooled(points[k:hi]))
    accepted = z > z_needed and p is not None and p < alpha and abs(size) > min_step
    return {"index": k, "commit": points[k]["commit"], "previous": points[k - 1]["commit"],
            "subject": points[k].get("subject", ""), "size": size, "before": ml, "after": mr,
            "pvalue": p, "z": z, "z_needed": z_needed, "commits_before": nl, "commits_after": nr,
            "accepted": accepted}


def find_steps(points, alpha=DEFAULT_ALPHA, min_step=DEFAULT_MIN_STEP):
    """Steps of one benchmark's series (points in commit order, each with
    'commit', 'median' > 0 and 'samples'); [] for fewer than MIN_COMMITS points.
    Returns the accepted steps in commit order."""
    points = [p for p in points if p.get("median") and p["median"] > 0 and p.get("samples")]
    if len(points) < MIN_COMMITS:
        return []
    logm = _log_medians(points)
    sigma = noise_sigma(logm)
    found, todo = [], [(0, len(points))]
    while todo:
        lo, hi = todo.pop()
        if hi - lo < 2:
            continue
        k, _ = best_split(logm[lo:hi])
        step = _judge(points, logm, lo, lo + k, hi, sigma, alpha, min_step)
        if step["accepted"]:
            step["sigma"] = sigma
            found.append(step)
            todo += [(lo, lo + k), (lo + k, hi)]
    return sorted(found, key=lambda s: s["index"])


def steps_by_commit(per_benchmark, commit_order):
    """{benchmark: [step]} -> [(commit, [(benchmark, step)])], commits in
    commit_order (a list of commits; others last)."""
    by = {}
    for name, steps in per_benchmark.items():
        for s in steps:
            by.setdefault(s["commit"], []).append((name, s))
    rank = {c: i for i, c in enumerate(commit_order)}
    return sorted(by.items(), key=lambda kv: rank.get(kv[0], len(rank)))
