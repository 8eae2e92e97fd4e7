"""The rows the plots draw from: one Point per (results file, benchmark name),
holding the medians over that benchmark's repetitions.

Loading is xattnperf.results' job (validation, name parsing); this module only
summarises and classifies: which file is a tuned-header run, what the peaks
and the memory bandwidth are.
"""
import re

from ..perf import stats
from . import tune_cache
from ..results import (ResultsError, classify_file, iter_json_files, load_compare, load_results,
                               load_tune_report, parse_name, row_counters, row_seconds, why_not_results)


class Point:
    """Medians of one benchmark in one results file."""

    def __init__(self, rf, name, samples):
        self.file = rf
        self.name = name
        self.f = parse_name(name)
        self.n = len(samples)
        self.time_s = stats.median([row_seconds(r) for r in samples])
        counters = [row_counters(r) for r in samples]
        keys = set().union(*counters) if counters else set()
        self.c = {k: stats.median([x[k] for x in counters if k in x]) for k in keys}

    def get(self, key, default="-"):
        return self.f.get(key, default)

    @property
    def gflops(self):
        return self.c.get("gflops")

    @property
    def threads(self):
        try:
            return int(self.f.get("threads", "0"))
        except ValueError:
            return 0

    def key_without(self, *drop):
        """The name without some key:value segments (to pair rows that differ only there)."""
        return "/".join("%s:%s" % (k, v) for k, v in self.f.items() if k not in drop and k != "_extra")


def config_kind(rf):
    """'tuned', 'default' or None: which config header a run was built with,
    from the provenance string the header carries (docs/formats.md §4), else the label."""
    prov = str(rf.context.get("xattn_config_provenance", "")).strip().lower()
    if prov.startswith("xattn-tune"):  # tune/src/tune_report.c writes this line
        return "tuned"
    if prov.startswith("hand-written default") or "not tuned" in prov:
        return "default"
    label = rf.label.lower()
    if "tuned" in label:
        return "tuned"
    if "default" in label:
        return "default"
    return None


class Dataset:
    def __init__(self):
        self.files = []
        self.points = []
        self.compares = []
        self.tune_reports = []
        self.tune_caches = []  # tune_cache.TuneCache: every candidate's times per class
        self.notes = []  # one line per input that was skipped

    def add_paths(self, paths):
        for path in iter_json_files(paths):
            kind = classify_file(path)
            try:
                if kind == "results":
                    self.add_file(load_results(path))
                elif kind == "compare":
                    self.compares.append(load_compare(path))
                elif kind == "info":
                    continue
                elif kind == "tune-report":
                    report = load_tune_report(path)
                    report["path"] = path
                    self.tune_reports.append(report)
                else:
                    self.notes.append("%s: skipped, not a results file, compare output or tuner report (%s)"
                                      % (path, why_not_results(path)))
            except ResultsError as e:
                self.notes.append("skipped: %s" % e)
        for path in tune_cache.find_caches(paths):
            try:
                self.tune_caches.append(tune_cache.load(path))
            except (OSError, tune_cache.CacheError) as e:
                self.notes.append("skipped: %s" % e)
        return self

    def add_file(self, rf):
        self.files.append(rf)
        for name in rf.names():
            samples = rf.samples(name)
            if samples:
                self.points.append(Point(rf, name, samples))

    def machines(self):
        return sorted({f.machine for f in self.files})

    def select(self, **want):
        """Points whose name fields equal every given value (a tuple means any of)."""
        out = []
        for p in self.points:
            ok = True
            for k, v in want.items():
                have = p.f.get(k)
                if isinstance(v, (tuple, list, set)):
                    ok = have in v
                else:
                    ok = have == v
                if not ok:
                    break
            if ok:
                out.append(p)
        return out


def _float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def peak_gflops(ds, dtype="f32"):
    """(GFLOP/s, where it came from): the best compute peak measured for the dtype
    in the inputs, over impl:peak rows (any ISA, e.g. AMX for bf16) and the
    context's xattn_peak_* keys. The best, because a peak probe that lost its
    core to another process measures the machine's load, not its roof."""
    cands = []
    for p in ds.select(impl="peak"):
        if p.gflops and p.get("dtype") in (dtype, "-"):
            cands.append((p.gflops, "impl:peak row, isa %s, %s thread(s)" % (p.get("isa"), p.get("threads"))))
    keys = ["xattn_peak_%s_gflops" % ("fp32" if dtype == "f32" else dtype)]
    if dtype == "bf16":
        keys.append("xattn_peak_amx_gflops")
    for f in ds.files:
        for key in keys:
            v = _float(f.context.get(key))
            if v:
                cands.append((v, "context %s" % key))
    return max(cands) if cands else (None, None)


_BW_KEYS = re.compile(r"(mem(ory)?_?b(and)?w(idth)?|stream|likwid.*(copy|load|triad)).*(gbs|gb_s|gbps|gb/s)?$", re.I)


def memory_bandwidth(ds):
    """(GB/s, where it came from) from a context key naming a measured memory
    bandwidth (e.g. xattn_mem_bw_gbs, a likwid-bench/stream number), or
    bytes_per_second of a stream-like impl:peak row; (None, None) if absent."""
    best = (None, None)
    for f in ds.files:
        for k, v in f.context.items():
            if _BW_KEYS.search(k) and _float(v):
                val = _float(v)
                if "mb" in k.lower():
                    val /= 1e3
                if not best[0] or val > best[0]:
                    best = (val, "context %s" % k)
    for p in ds.select(impl="peak"):
        if p.c.get("bytes_per_second"):
            val = p.c["bytes_per_second"] / 1e9
            if not best[0] or val > best[0]:
                best = (val, "measured (%s)" % p.get("wl"))
    return best
