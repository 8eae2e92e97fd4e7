"""The tuner's measurement cache (tune/src/tune_store.c, tune/README.md step 6)
as plot input: every candidate's timed repetitions per workload class, which is
what a BLOCK_M x BLOCK_N heatmap of a fresh sweep is drawn from (the sweep's
xattn-bench runs measure only the variant each header chose).

A cache is JSON lines: the first {"t": "id", "machine": ..., "kernel_digest":
...}, then {"t": "m", "class": KEY, "cand": "VARIANT/LAYOUT/SCHEDULE/tN/PLACEMENT
[/sK][/pfP]", "phase": ..., "rep": i, "sec": s} per repetition and {"t": "v", ...}
verdicts. A torn last line (a killed tuner) is left out, as the tuner does; a
file whose first line is not an identity is not a cache."""
import json
import os
import re

from ..perf import stats

CACHE_NAME = re.compile(r"^tune-cache.*\.jsonl$")


class TuneCache:
    def __init__(self, path, identity, times, rejected):
        self.path = path
        self.identity = identity
        self.machine = identity.get("machine")
        self.times = times        # {class key: {candidate key: [seconds, ...]}}
        self.rejected = rejected  # {class key: {candidate key}} (wrong answers, never timed as best)


class CacheError(Exception):
    pass


def find_caches(paths):
    """tune-cache*.jsonl files named directly or anywhere under the folders."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                out.extend(os.path.join(root, f) for f in sorted(files) if CACHE_NAME.match(f))
        elif CACHE_NAME.match(os.path.basename(p)):
            out.append(p)
    return out


def load(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    try:
        identity = json.loads(lines[0])
    except (ValueError, IndexError):
        identity = None
    if not isinstance(identity, dict) or identity.get("t") != "id":
        raise CacheError("%s: first line is not a tuner cache identity ({\"t\": \"id\", ...})" % path)
    times, rejected = {}, {}
    for line in lines[1:]:
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # the torn last line of a killed run (or the empty one after the last newline)
        if not isinstance(rec, dict) or not isinstance(rec.get("class"), str) or not isinstance(rec.get("cand"), str):
            continue
        if rec.get("t") == "m" and isinstance(rec.get("sec"), (int, float)) and rec["sec"] > 0:
            times.setdefault(rec["class"], {}).setdefault(rec["cand"], []).append(float(rec["sec"]))
        elif rec.get("t") == "v" and rec.get("ok") is False:
            rejected.setdefault(rec["class"], set()).add(rec["cand"])
    return TuneCache(path, identity, times, rejected)


def candidate_fields(cand):
    """'64x64/gqa/static/t2/compact/s2' -> dict(variant, layout, schedule, threads, placement, extra)."""
    parts = cand.split("/")
    if len(parts) < 5 or not parts[3].startswith("t"):
        return None
    return {"variant": parts[0], "layout": parts[1], "schedule": parts[2], "threads": parts[3][1:],
            "placement": parts[4], "extra": "/".join(parts[5:])}


def class_medians(cache, cls):
    """{candidate: median seconds} over every timed repetition of the class
    (search, finalists and final phases alike: the same call each time);
    rejected candidates and the "default" pseudo-candidate are left out."""
    bad = cache.rejected.get(cls, set())
    return {c: stats.median(t) for c, t in cache.times.get(cls, {}).items() if c not in bad and c != "default" and t}
