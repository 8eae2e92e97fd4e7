"""The figures of the report. Each builder takes the Dataset (already limited to
one machine, except the compare figure) and returns a Figure, or a Skip whose
reason becomes the one-line note in the report: a figure without data is never
drawn.

A Figure is gnuplot data blocks + a script body + the table shown under it.
"""
import json
import math
import os
import re

from ..perf import history, stats, steps
from ..results import parse_name

from . import dataset, tune_cache
from .gnuplot import quote

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf"]
PEER_IMPLS = ("xattn", "blas", "torch", "ort", "ipex", "reference")
MAX_HEATMAPS = 8
MAX_LINES = 10
MAX_BARS = 24


class Figure:
    def __init__(self, fid, title, blocks, body, header, rows, notes=(), size=(900, 560)):
        self.id, self.title, self.blocks, self.body = fid, title, blocks, body
        self.header, self.rows, self.notes, self.size = header, rows, list(notes), size


class Skip:
    def __init__(self, fid, title, reason):
        self.id, self.title, self.reason = fid, title, reason


def _fmt(v, digits=4):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return "%.*g" % (digits, v)
    return str(v)


def _lmargin(labels):
    """Left margin (in characters of the default font) for y tic labels drawn in
    font size 8: wide enough for the longest, within reason."""
    longest = max((len(str(l)) for l in labels), default=10)
    return max(10, min(80, int(longest * 0.8) + 3))


def _rot_lmargin(first_label):
    """Left margin for x tic labels rotated by 30 degrees: the first one reaches
    left of the plot by about cos(30) of its length."""
    return max(10, min(60, int(len(str(first_label)) * 0.75) + 2))


def _label_of(point, keys):
    return "/".join("%s:%s" % (k, point.f[k]) for k in keys if k in point.f)


def _log_tics(lo, hi):
    """gnuplot tic list at 1, 2, 5 x 10^k within [lo, hi] (a log axis spanning
    less than two decades otherwise shows one labelled tic or none)."""
    tics = []
    k = math.floor(math.log10(lo))
    while 10 ** k <= hi:
        for m in (1, 2, 5):
            v = m * 10 ** k
            if lo <= v <= hi:
                tics.append("'%g' %g" % (v, v))
        k += 1
    return "(%s)" % ", ".join(tics) if tics else ""


def _best(points):
    """The highest-gflops point (for a workload measured with several variants)."""
    pts = [p for p in points if p.gflops]
    return max(pts, key=lambda p: p.gflops) if pts else None


def _max_threads(points):
    return max((p.threads for p in points), default=0)


# ---- roofline -------------------------------------------------------------------

def _bytes_of(p):
    """Compulsory bytes of one call, from the row's counters: xattn-bench's
    'bytes_must_read' (K/V rows visible to at least one query, q and o: the
    real arithmetic intensity), else 'bytes' if a bench ever reports the full
    traffic, else xattn-bench's 'input_bytes' (q, k/v,
    cache, token table, masks read once; the output write is not in it, so the
    intensity is a slight over-estimate), else bytes_per_second times the time.
    The workload's shape is not in the row: nothing else can give it without
    re-implementing the suite parser."""
    if p.c.get("bytes_must_read"):
        return p.c["bytes_must_read"], "counter bytes_must_read: visible K/V rows once, q and o"
    if p.c.get("bytes"):
        return p.c["bytes"], "counter bytes"
    if p.c.get("input_bytes"):
        return p.c["input_bytes"], "counter input_bytes: inputs read once, output write not counted"
    if p.c.get("bytes_per_second"):
        return p.c["bytes_per_second"] * p.time_s, "counter bytes_per_second"
    return None, None


def roofline(ds, mem_bw=None, mem_bw_source="--mem-bw"):
    fid, title = "roofline", "Roofline: achieved GFLOP/s at each workload's arithmetic intensity"
    peak32, peak32_src = dataset.peak_gflops(ds, "f32")
    peak16, peak16_src = dataset.peak_gflops(ds, "bf16")
    if not peak32 and not peak16:
        return Skip(fid, title, "no compute peak: no impl:peak rows and no xattn_peak_*_gflops in the context")
    bw, bw_src = (mem_bw, mem_bw_source) if mem_bw else dataset.memory_bandwidth(ds)
    # xattn-bench's own stream roof (measured at its start-up, every thread):
    # drawn as its own line when the memory roof above came from elsewhere
    stream = max([v for v in (dataset._float(f.context.get("xattn_stream_roof_gbps")) for f in ds.files) if v] or [0])
    if not bw and stream:
        bw, bw_src = stream, "context xattn_stream_roof_gbps"
    cand = [p for p in ds.select(impl=PEER_IMPLS) if p.gflops and p.c.get("flops") and _bytes_of(p)[0]]
    if not cand:
        return Skip(fid, title, "no workload row has a byte count (counter bytes, input_bytes or bytes_per_second), so no "
                                "arithmetic intensity can be placed")
    th = _max_threads(cand)
    best = {}
    for p in cand:
        if p.threads == th:
            best.setdefault((p.get("impl"), p.get("dtype"), p.get("suite"), p.get("wl")), []).append(p)
    pts, rows, sources = [], [], set()
    for key, group in sorted(best.items()):
        p = _best(group)
        b, src = _bytes_of(p)
        sources.add(src)
        pts.append((p, p.c["flops"] / b))
    notes = ["%d thread(s); per workload and implementation the best rate among the inputs "
             "(variants, layouts, commits)" % th]
    blocks, plots = {}, []
    ais = [ai for _, ai in pts]
    xmin, xmax = min(ais) / 3, max(ais) * 3
    roofs = [(v, s, d) for v, s, d in ((peak32, peak32_src, "f32"), (peak16, peak16_src, "bf16")) if v]
    if bw:
        notes.append("memory roof: %.1f GB/s (%s)" % (bw, bw_src))
        xmin = min(xmin, min(v for v, _, _ in roofs) / bw / 3)
        xmax = max(xmax, max(v for v, _, _ in roofs) / bw * 3)
    else:
        notes.append("no memory bandwidth in the results (context key like xattn_mem_bw_gbs, or --mem-bw / "
                     "--measure-bw): compute roofs only")
    # the gather roof: each row's own (its token table, its slot layout, measured
    # beside it); one line at the median, the range in the notes
    gathers = sorted(p.c["gather_roof_gbps"] for p, _ in pts if p.c.get("gather_roof_gbps"))
    gather = gathers[len(gathers) // 2] if gathers else None
    if gather:
        notes.append("gather roof: median %.1f GB/s over the rows (%.1f-%.1f; each row's own is in the table)"
                     % (gather, gathers[0], gathers[-1]))
        xmin = min(xmin, min(v for v, _, _ in roofs) / gather / 3)
    for v, s, d in roofs:
        notes.append("%s compute roof: %.1f GFLOP/s (%s)" % (d, v, s))
    notes.append("arithmetic intensity = FLOPs (docs/contract.md 5) / compulsory bytes (%s)" % ", ".join(sorted(sources)))
    body = ["set logscale xy", "set grid", "set key outside right top",
            "set xlabel 'arithmetic intensity (FLOP per byte)'", "set ylabel 'GFLOP/s'",
            "set xrange [%g:%g]" % (xmin, xmax)]
    gmax = max([v for v, _, _ in roofs] + [p.gflops for p, _ in pts])
    gmin = min(p.gflops for p, _ in pts)
    body.append("set yrange [%g:%g]" % (gmin / 5, gmax * 2))
    body.append("set title %s" % quote(
        "%d thread(s); " % th + ("memory roof %.1f GB/s (%s)" % (bw, bw_src) if bw else
                                 "compute roofs only: no memory bandwidth in the inputs")))
    body.append("set xtics %s" % _log_tics(xmin, xmax))
    body.append("set ytics %s" % _log_tics(gmin / 5, gmax * 2))
    for i, (v, s, d) in enumerate(roofs):
        if bw:
            plots.append("(x*%g < %g ? x*%g : %g) with lines lw 2 dt %d lc rgb '#333333' title %s"
                         % (bw, v, bw, v, 1 + i, quote("%s roof" % d)))
        else:
            plots.append("%g with lines lw 2 dt %d lc rgb '#333333' title %s" % (v, 1 + i, quote("%s peak" % d)))
    if stream and bw_src != "context xattn_stream_roof_gbps":
        notes.append("stream roof: %.1f GB/s (xattn-bench, context xattn_stream_roof_gbps)" % stream)
        top = max(v for v, _, _ in roofs)
        plots.append("(x*%g < %g ? x*%g : 1/0) with lines lw 2 dt 4 lc rgb '#3333aa' title %s"
                     % (stream, top, stream, quote("stream roof %.1f GB/s" % stream)))
    if gather:
        top = max(v for v, _, _ in roofs)
        plots.append("(x*%g < %g ? x*%g : 1/0) with lines lw 2 dt 3 lc rgb '#aa3333' title %s"
                     % (gather, top, gather, quote("gather roof %.1f GB/s" % gather)))
    groups = {}
    for p, ai in pts:
        groups.setdefault((p.get("impl"), p.get("dtype")), []).append((p, ai))
    for i, (key, items) in enumerate(sorted(groups.items())):
        name = "pts%d" % i
        blocks[name] = [(ai, p.gflops) for p, ai in items]
        plots.append("$%s using 1:2 with points pt %d ps 1.4 lc rgb '%s' title %s"
                     % (name, 5 + 2 * (i % 4), COLORS[i % len(COLORS)], quote("%s %s" % key)))
        for p, ai in items:
            rows.append([p.get("suite"), p.get("wl"), p.get("dtype"), p.get("impl"), p.get("variant"),
                         p.get("threads"), _fmt(ai), _fmt(p.gflops),
                         _fmt(100 * p.gflops / (peak16 if p.get("dtype") in ("bf16", "f16") and peak16 else peak32 or peak16)),
                         _fmt(p.c["gbps"]) if p.c.get("gbps") else "-",
                         _fmt(p.c["pct_mem_roof"]) if p.c.get("pct_mem_roof") else "-"])
    body.append("plot " + ", \\\n     ".join(plots))
    return Figure(fid, title, blocks, "\n".join(body),
                  ["suite", "workload", "dtype", "impl", "variant", "threads", "FLOP/byte", "GFLOP/s", "% of roof peak",
                   "GB/s", "% of gather roof"],
                  rows, notes)


# ---- BLOCK_M x BLOCK_N heatmaps ---------------------------------------------------

_VARIANT = re.compile(r"^(\d+)x(\d+)$")


def _results_grids(ds):
    """Heatmap grids from results files: a workload class (a name without its
    variant) measured with at least two BMxBN variants in one results file
    (runs of different files may differ in more than the variant: a tuned
    header, another commit). Cells are GFLOP/s."""
    groups = {}
    for p in ds.select(impl="xattn"):
        if p.gflops and _VARIANT.match(p.get("variant")):
            groups.setdefault((p.file.path, p.key_without("variant")), []).append(p)
    grids = []
    for key, pts in groups.items():
        cells = {}
        for p in pts:  # several files may hold the same cell: median of medians
            bm, bn = map(int, _VARIANT.match(p.get("variant")).groups())
            cells.setdefault((bm, bn), []).append(p.gflops)
        if len(cells) < 2:
            continue
        cells = {k: stats.median(v) for k, v in cells.items()}
        f0 = pts[0].f
        wl = "%s %s %s threads:%s" % (f0.get("suite", ""), f0.get("wl", ""), f0.get("dtype", ""), f0.get("threads", ""))
        best = max(cells, key=cells.get)
        grids.append({"label": wl, "cells": cells, "unit": "GFLOP/s", "fmt": "%.1f", "source": "results",
                      "notes": ["class: %s (from %s)" % (key[1], key[0]),
                                "best: %dx%d at %.1f GFLOP/s; worst/best = %.2f"
                                % (best[0], best[1], cells[best], min(cells.values()) / cells[best])],
                      "rows": [[bm, bn, _fmt(g), "best" if (bm, bn) == best else ""] for (bm, bn), g in sorted(cells.items())],
                      "header": ["BLOCK_M", "BLOCK_N", "GFLOP/s", ""]})
    return grids


def _tune_cache_grids(ds):
    """Heatmap grids from the tuner's measurement caches: per workload class,
    every BMxBN variant's fastest candidate (over layouts, schedules, thread
    counts and placements, each the median of its repetitions), as speed
    relative to the fastest tile. What a fresh sweep has: its benchmark runs
    measure only the variant each header chose. Candidates without a tile (the
    few-rows decode and lanes layouts) are in the notes, not in the grid."""
    classes = {}
    for cache in sorted(ds.tune_caches, key=lambda c: os.path.getmtime(c.path) if os.path.exists(c.path) else 0):
        for cls in cache.times:
            classes[cls] = cache  # the newest cache of a class wins
    grids = []
    for cls, cache in classes.items():
        med = tune_cache.class_medians(cache, cls)
        tiles, untiled = {}, {}
        for cand, t in med.items():
            f = tune_cache.candidate_fields(cand)
            if not f:
                continue
            m = _VARIANT.match(f["variant"])
            if f["layout"] in ("decode", "lanes") or not m:
                if t < untiled.get(f["layout"], (float("inf"),))[0]:
                    untiled[f["layout"]] = (t, cand)
                continue
            key = tuple(map(int, m.groups()))
            if t < tiles.get(key, (float("inf"),))[0]:
                tiles[key] = (t, cand)
        if len(tiles) < 2:
            continue
        fastest = min(t for t, _ in tiles.values())
        cells = {k: fastest / t for k, (t, _) in tiles.items()}
        best = max(cells, key=cells.get)
        overall = min(list(tiles.values()) + list(untiled.values()))
        notes = ["class %s: %d candidate(s) timed (tuner cache %s)" % (cls, len(med), cache.path),
                 "cell: the variant's fastest candidate (any layout, schedule, threads, placement), speed relative "
                 "to the fastest tile %dx%d (%s, %.3g ms)" % (best[0], best[1], tiles[best][1], 1e3 * tiles[best][0])]
        for layout, (t, cand) in sorted(untiled.items()):
            notes.append("layout %s has no tile: its fastest candidate %s at %.3g ms, %.2fx the fastest tile"
                         % (layout, cand, 1e3 * t, tiles[best][0] / t))
        notes.append("fastest candidate of the class: %s (%.3g ms)" % (overall[1], 1e3 * overall[0]))
        rows = [[bm, bn, _fmt(cells[(bm, bn)]), _fmt(1e3 * tiles[(bm, bn)][0]), tiles[(bm, bn)][1],
                 "best" if (bm, bn) == best else ""] for (bm, bn) in sorted(cells)]
        grids.append({"label": "tuner " + cls.split("#")[0], "cells": cells, "unit": "speed / fastest tile",
                      "fmt": "%.2f", "source": "tuner", "notes": notes, "rows": rows,
                      "header": ["BLOCK_M", "BLOCK_N", "speed / fastest", "ms", "candidate", ""]})
    return grids


def heatmaps(ds):
    """One heatmap per workload class measured with at least two BMxBN
    variants: from results files (GFLOP/s), and from the tuner's caches
    (every candidate of a class, relative speed)."""
    fid, title = "heatmap", "BLOCK_M x BLOCK_N"
    grids = sorted(_results_grids(ds), key=lambda g: (-len(g["cells"]), g["label"]))
    grids += sorted(_tune_cache_grids(ds), key=lambda g: (-len(g["cells"]), g["label"]))
    if not grids:
        return [Skip(fid, "BLOCK_M x BLOCK_N heatmaps", "no workload measured with two or more BMxBN variants "
                                                        "(run xattn-bench --variants ... or the tuner, whose cache "
                                                        "results/<machine>/tune-cache*.jsonl holds every candidate)")]
    out = []
    for gi, g in enumerate(grids[:MAX_HEATMAPS]):
        cells = g["cells"]
        bms = sorted({k[0] for k in cells})
        bns = sorted({k[1] for k in cells})
        data = [(bns.index(bn), bms.index(bm), v) for (bm, bn), v in sorted(cells.items())]
        body = "\n".join([
            "set title %s" % quote("%s by BLOCK_M x BLOCK_N: %s" % (g["unit"], g["label"])),
            "set xlabel 'BLOCK_N'", "set ylabel 'BLOCK_M'",
            "set xrange [-0.5:%g]" % (len(bns) - 0.5), "set yrange [-0.5:%g]" % (len(bms) - 0.5),
            "set xtics (%s)" % ", ".join("'%d' %d" % (bn, i) for i, bn in enumerate(bns)),
            "set ytics (%s)" % ", ".join("'%d' %d" % (bm, i) for i, bm in enumerate(bms)),
            "set cblabel %s" % quote(g["unit"]), "set palette defined (0 '#fff5eb', 1 '#fd8d3c', 2 '#7f2704')",
            "set style fill solid 1.0 border lc rgb 'white'", "unset key",
            "plot $cells using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \\\n"
            "     $cells using 1:2:(sprintf('%s', $3)) with labels font ',11'" % g["fmt"],
        ])
        out.append(Figure("%s-%d" % (fid, gi), "BLOCK_M x BLOCK_N heatmap: " + g["label"], {"cells": data}, body,
                          g["header"], g["rows"], g["notes"], size=(700, 520)))
    if len(grids) > MAX_HEATMAPS:
        out.append(Skip(fid + "-more", "more heatmaps", "%d further workload classes with variant sweeps not drawn "
                                                        "(only the %d with most variants, results files first)"
                        % (len(grids) - MAX_HEATMAPS, MAX_HEATMAPS)))
    return out


# ---- causal vs bidirectional vs prefix-mix ----------------------------------------

SUITE_MODES = {"causal-prefill": "causal", "bidirectional": "bidirectional", "prefix-mix": "prefix-mix",
               "spec-verify": "tree"}
MODE_ORDER = ("causal", "prefix-mix", "bidirectional", "tree", "cross")
FEW_ROWS = 4  # max E_b of the memory-bound few-rows classes (extend buckets 0 and 1, docs/formats.md §4)


def _workload_classes(rf):
    """{workload: {"mode", "max_prefix", "max_extend"}} from the results context
    (xattn-bench's xattn_workload_classes), or {} for results without it."""
    raw = rf.context.get("xattn_workload_classes")
    try:
        v = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def mode_of(p, classes_by_file):
    """(category, why-left-out): the row's attention mode, with causal rows on
    cached prefixes as "prefix-mix", from the context's workload classes, else
    from its suite's name; few-row (memory-bound) rows are left out."""
    cls = classes_by_file.setdefault(p.file.path, _workload_classes(p.file)).get(p.get("wl"))
    if isinstance(cls, dict) and isinstance(cls.get("mode"), str):
        if (cls.get("max_extend") or 0) <= FEW_ROWS:
            return None, "few-rows"
        mode = cls["mode"]
        return ("prefix-mix" if mode == "causal" and (cls.get("max_prefix") or 0) > 0 else mode), None
    return SUITE_MODES.get(p.get("suite")), None


def modes(ds):
    fid, title = "modes", "Per-FLOP rate by attention mode (causal vs prefix-mix vs bidirectional vs tree)"
    cats, few, by_file = {}, 0, {}
    for p in ds.select(impl="xattn"):
        if not p.gflops:
            continue
        mode, why = mode_of(p, by_file)
        few += why == "few-rows"
        if mode:
            cats.setdefault(p, mode)
    if not cats:
        return Skip(fid, title, "no xattn rows with a known mode: the results context has no xattn_workload_classes "
                                "and no rows are from the suites %s" % ", ".join(sorted(SUITE_MODES)))
    th = _max_threads(cats)
    per_wl = {}
    for p, mode in cats.items():
        if p.threads == th:
            per_wl.setdefault((mode, p.get("suite"), p.get("wl"), p.get("dtype")), []).append(p)
    several = any(len(v) > 1 for v in per_wl.values())
    best = {k: _best(v).gflops for k, v in per_wl.items()}
    present = {k[0] for k in best}
    order = [m for m in MODE_ORDER if m in present] + sorted(present - set(MODE_ORDER))
    if len(order) < 2:
        return Skip(fid, title, "only the mode %s is in the results; nothing to compare it with" % order[0])
    dtypes = sorted({k[3] for k in best})
    data, rows = [], []
    for m in order:
        line = [m]
        for d in dtypes:
            vals = [v for k, v in best.items() if k[0] == m and k[3] == d]
            line.append(stats.median(vals) if vals else "-")
            if vals:
                wls = sorted({"%s/%s" % (k[1], k[2]) for k in best if k[0] == m and k[3] == d})
                rows.append([m, d, len(vals), _fmt(min(vals)), _fmt(stats.median(vals)), _fmt(max(vals)), " ".join(wls)])
        data.append(line)
    plots = ["$modes using %d:xtic(1) title %s lc rgb '%s'" % (i + 2, quote(d), COLORS[i % len(COLORS)])
             for i, d in enumerate(dtypes)]
    body = "\n".join([
        "set style data histogram", "set style histogram clustered gap 1",
        "set style fill solid 0.85 border -1", "set datafile missing '-'", "set grid ytics",
        "set ylabel 'GFLOP/s (median over the mode''s workloads)'", "set yrange [0:*]",
        "set key top right",
        "set title %s" % quote("xattn, %d thread(s); FLOPs count visible pairs only (docs/contract.md 5)" % th),
        "plot " + ", ".join(plots)])
    notes = ["%d thread(s), the largest count in the results; prefix-mix = causal rows on cached prefixes" % th]
    if few:
        notes.append("%d few-row row(s) (max E <= %d: decode steps, memory-bound) left out: their rate is bytes, "
                     "not FLOPs; the roofline places them against the stream and gather roofs" % (few, FEW_ROWS))
    if several:
        notes.append("workloads measured with several variants/layouts: the best of them is used")
    return Figure(fid, title, {"modes": data}, body,
                  ["mode", "dtype", "workloads", "min GFLOP/s", "median", "max", "workloads"], rows, notes)


# ---- thread scaling ------------------------------------------------------------------

def _fields(key):
    """The key:value fields of a row name (without parse_name's '_extra')."""
    f = parse_name(key)
    f.pop("_extra", None)
    return f


def _labels(keys):
    """Short legend/tick texts for name-like keys: the workload, then only the
    fields that differ among the keys (dtype, impl, variant, threads, ...);
    peak rows read "peak <dtype> <isa>"."""
    fs = {k: _fields(k) for k in keys}
    work = [k for k in keys if fs[k].get("impl") != "peak"]
    varying = [f for f in ("dtype", "impl", "variant", "layout", "isa", "threads", "place")
               if len({fs[k].get(f) for k in work}) > 1]
    if len({fs[k].get("wl") for k in work}) < len({(fs[k].get("suite"), fs[k].get("wl")) for k in work}):
        varying.insert(0, "suite")
    out = {}
    for k in keys:
        f = fs[k]
        if f.get("impl") == "peak":
            out[k] = "peak %s %s" % (f.get("dtype", ""), f.get("isa", ""))
            continue
        parts = [f.get("wl", "?")]
        for v in varying:
            val = f.get(v, "-")
            if val != "-":
                parts.append(("%s thr" % val) if v == "threads" else val)
        out[k] = " ".join(parts)
    return out


def scaling(ds):
    fid, title = "scaling", "Thread scaling (speedup over the fewest threads measured)"
    groups = {}
    for p in ds.points:
        if p.gflops and p.threads > 0:
            # a peak probe is the same in every suite's file: one line per dtype and ISA
            drop = ("threads", "place", "suite") if p.get("impl") == "peak" else ("threads", "place")
            groups.setdefault(p.key_without(*drop), {}).setdefault(p.threads, []).append(p.gflops)
    groups = {k: {t: stats.median(v) for t, v in g.items()} for k, g in groups.items() if len(g) >= 2}
    if not groups:
        return Skip(fid, title, "no benchmark measured at two or more thread counts")
    keys = sorted(groups, key=lambda k: ("impl:peak" not in k or "dtype:f32" not in k, "impl:xattn" not in k, k))
    names = keys[:MAX_LINES]
    label = _labels(names)
    blocks, plots, rows = {}, [], []
    threads = sorted({t for g in groups.values() for t in g})
    blocks["ideal"] = [(t, t / threads[0]) for t in threads]
    plots.append("$ideal using 1:2 with lines dt 2 lw 1 lc rgb '#888888' title 'ideal (linear)'")
    for i, k in enumerate(names):
        g = groups[k]
        t0 = min(g)
        blocks["s%d" % i] = [(t, g[t] / g[t0]) for t in sorted(g)]
        plots.append("$s%d using 1:2 with linespoints lw 2 pt 7 lc rgb '%s' title %s"
                     % (i, COLORS[i % len(COLORS)], quote(label[k])))
    for k in keys:
        g = groups[k]
        t0 = min(g)
        for t in sorted(g):
            rows.append([k, t, _fmt(g[t]), _fmt(g[t] / g[t0]), _fmt(g[t] / g[t0] / (t / t0))])
    body = "\n".join([
        "set grid", "set xlabel 'threads'", "set ylabel 'speedup (GFLOP/s / GFLOP/s at %d thread(s))'" % threads[0],
        "set yrange [0:*]",
        "set xtics (%s)" % ", ".join("'%d' %d" % (t, t) for t in threads),
        "set xrange [%g:%g]" % (threads[0] - 0.3, threads[-1] + 0.3),
        "set key outside right top", "plot " + ", \\\n     ".join(plots)])
    notes = ["%d benchmark(s) measured at %s threads; the table gives GFLOP/s, speedup and parallel efficiency"
             % (len(keys), "/".join(map(str, threads)))]
    if len(keys) > MAX_LINES:
        notes.append("%d lines drawn of %d (the fp32 peak and xattn first); the table has all" % (MAX_LINES, len(keys)))
    return Figure(fid, title, blocks, body, ["benchmark", "threads", "GFLOP/s", "speedup", "efficiency"],
                  rows, notes, size=(950, 560))


# ---- tuned vs default ------------------------------------------------------------------

def tuned_vs_default(ds):
    fid, title = "tuned", "Tuned config header vs the default one"
    by_kind = {"tuned": {}, "default": {}}
    for p in ds.select(impl="xattn"):
        kind = dataset.config_kind(p.file)
        if kind and p.gflops:
            by_kind[kind].setdefault(p.key_without("variant", "layout"), []).append(p)
    if not by_kind["tuned"] or not by_kind["default"]:
        missing = [k for k in ("default", "tuned") if not by_kind[k]]
        return Skip(fid, title, "no %s-header runs in the results (told apart by the context's "
                                "xattn_config_provenance, else the file label)" % " or ".join(missing))
    common = sorted(set(by_kind["tuned"]) & set(by_kind["default"]))
    if not common:
        return Skip(fid, title, "tuned and default runs share no workload")
    short = _labels(common)
    data, rows = [], []
    for k in common[:MAX_BARS]:
        d = stats.median([p.gflops for p in by_kind["default"][k]])
        t = stats.median([p.gflops for p in by_kind["tuned"][k]])
        data.append([short[k], d, t])
    for k in common:
        d = stats.median([p.gflops for p in by_kind["default"][k]])
        t = stats.median([p.gflops for p in by_kind["tuned"][k]])
        dv = "/".join(sorted({"%s,%s" % (p.get("variant"), p.get("layout")) for p in by_kind["default"][k]}))
        tv = "/".join(sorted({"%s,%s" % (p.get("variant"), p.get("layout")) for p in by_kind["tuned"][k]}))
        rows.append([k, dv, _fmt(d), tv, _fmt(t), _fmt(t / d)])
    sp = stats.geomean([t / d for _, d, t in data])
    body = "\n".join([
        "set style data histogram", "set style histogram clustered gap 1", "set style fill solid 0.85 border -1",
        "set grid ytics", "set ylabel 'GFLOP/s'", "set yrange [0:*]", "set xtics rotate by 30 right",
        "set title %s" % quote("geomean speedup tuned/default: %.3f" % sp), "set key top right",
        "set bmargin 10", "set lmargin %d" % _rot_lmargin(data[0][0]),
        "plot $tv using 2:xtic(1) title 'default header' lc rgb '%s', '' using 3 title 'tuned header' lc rgb '%s'"
        % (COLORS[7], COLORS[2])])
    notes = ["geomean speedup tuned/default over %d workload(s): %.3f" % (len(common), sp)]
    return Figure(fid, title, {"tv": data}, body,
                  ["workload", "default variant,layout", "default GFLOP/s", "tuned variant,layout", "tuned GFLOP/s", "speedup"],
                  rows, notes, size=(1000, 620))


def tune_report(ds):
    """Speedup per workload class from xattn-tune compare --json (tuned header vs
    the baseline header in one interleaved run, with its bootstrap CI)."""
    fid, title = "tune-report", "Tuned vs default per workload class (xattn-tune compare)"
    reports = [r for r in ds.tune_reports if r.get("classes")]
    if not reports:
        return Skip(fid, title, "no xattn-tune compare report (results/<machine>/<commit>/*_tuned-vs-default.json, "
                                "written by tune/release.sh) among the inputs")
    rep = reports[-1]
    classes = rep["classes"][:MAX_BARS * 2]
    data, rows = [], []
    for i, c in enumerate(classes):
        sp = c.get("speedup")
        measured = sp is not None and not c.get("identical")
        val = sp if measured else 1.0
        lo, hi = (c.get("ci_lo", val), c.get("ci_hi", val)) if measured else (1.0, 1.0)
        label = c.get("class", "?").split("#")[0]  # the hash after '#' is in the table
        data.append([len(classes) - 1 - i, val, lo, hi, 0 if measured and lo > 1 else (1 if measured and hi < 1 else 2),
                     label + ("" if measured else " (kept)")])
        rows.append([c.get("class", "?"), c.get("default", ""), c.get("tuned", ""),
                     _fmt(1e3 * c["default_median_s"]) if "default_median_s" in c else "-",
                     _fmt(1e3 * c["tuned_median_s"]) if "tuned_median_s" in c else "-",
                     ("%s [%s, %s]" % (_fmt(sp), _fmt(c.get("ci_lo")), _fmt(c.get("ci_hi")))) if measured else "-",
                     c.get("note", "")])
    vals = [d[2] for d in data] + [d[3] for d in data] + [1.0]
    lo_x, hi_x = min(vals), max(vals)
    pad = max(0.05, (hi_x - lo_x) * 0.15)
    n = len(data)
    body = "\n".join([
        "set title %s" % quote("geomean speedup %.3fx over tuned classes, %.3fx over all (green: CI above 1, red: below)"
                               % (rep.get("geomean_tuned_classes", float("nan")), rep.get("geomean_all_classes", float("nan")))),
        "set xlabel 'speedup tuned / default (median default time / median tuned time)'", "set grid xtics",
        "set xrange [%g:%g]" % (lo_x - pad, hi_x + pad), "set yrange [-0.7:%g]" % (n - 0.3),
        "set ytics () font ',8'", "unset key", "set style fill solid 0.85 border -1",
        "set arrow from 1,-0.7 to 1,%g nohead lc rgb 'black'" % (n - 0.3),
        "set palette maxcolors 3", "set palette defined (0 '#2ca02c', 1 '#d62728', 2 '#999999')",
        "set cbrange [-0.5:2.5]", "unset colorbox", "set lmargin %d" % _lmargin(d[5] for d in data),
        "plot $tr using ((1+$2)/2):1:(abs($2-1)/2):(0.35):5:ytic(6) with boxxyerror fc palette, \\\n"
        "     $tr using 2:1:3:4 with xerrorbars lc rgb 'black' pt 7 ps 0.5"])
    notes = ["%s: tuned header %s vs baseline %s" % (rep.get("path", "report"), rep.get("tuned_header"),
                                                     rep.get("baseline_header"))]
    if len(reports) > 1:
        notes.append("%d tuner reports in the inputs; the last one is drawn" % len(reports))
    return Figure(fid, title, {"tr": data}, body,
                  ["class", "default config", "tuned config", "default ms", "tuned ms", "speedup [95% CI]", "note"],
                  rows, notes, size=(1000, max(360, 80 + 26 * n)))


# ---- commit comparison ------------------------------------------------------------------

def commit_comparison(ds):
    fid, title = "compare", "Commit comparison (xattn compare)"
    if not ds.compares:
        return [Skip(fid, title, "no xattn compare output among the inputs (xattn compare stores one under results/)")]
    out = []
    cmps = sorted(ds.compares, key=lambda c: c.get("created", ""))[-3:]
    for ci, cmp in enumerate(cmps):
        rows_in = cmp["rows"][:MAX_BARS * 2]
        short = _labels([r["name"] for r in rows_in])
        data, rows = [], []
        for i, r in enumerate(rows_in):
            pct = 100.0 * r["time_change"]
            cls = {"regression": 0, "improvement": 1}.get(r["verdict"], 2)
            mark = "*" if r.get("significant") else ""
            data.append([len(rows_in) - 1 - i, pct, cls, mark, short[r["name"]]])
        for r in cmp["rows"]:
            g = r["counters"].get("gflops", {})
            rows.append([r["name"], _fmt(r["base_time_s"] * 1e3), _fmt(r["head_time_s"] * 1e3),
                         "%+.1f%%" % (100 * r["time_change"]),
                         "%+.1f%%" % (100 * g["change"]) if g else "-", _fmt(r["pvalue"]), r["verdict"]])
        lim = max([abs(d[1]) for d in data] + [cmp["threshold_pct"] * 1.5])
        b, h = cmp["base"], cmp["head"]
        n = len(data)
        body = "\n".join([
            "set title %s" % quote("head %s vs base %s: * p < %g; red slower, green faster by > %g%%"
                                   % (h["commit"], b["commit"], cmp["alpha"], cmp["threshold_pct"])),
            "set xlabel 'median real time change, % (negative = faster)'", "set grid xtics",
            "set xrange [%g:%g]" % (-lim * 1.25, lim * 1.25), "set yrange [-0.7:%g]" % (n - 0.3),
            "set ytics () font ',8'", "unset key", "set style fill solid 0.85 border -1",
            "set arrow from %g,-0.7 to %g,%g nohead dt 2 lc rgb '#888888'" % (cmp["threshold_pct"], cmp["threshold_pct"], n - 0.3),
            "set arrow from %g,-0.7 to %g,%g nohead dt 2 lc rgb '#888888'" % (-cmp["threshold_pct"], -cmp["threshold_pct"], n - 0.3),
            "set palette maxcolors 3", "set palette defined (0 '#d62728', 1 '#2ca02c', 2 '#999999')",
            "set cbrange [-0.5:2.5]", "unset colorbox", "set lmargin %d" % _lmargin(d[4] for d in data),
            "plot $cmp using ($2/2):1:(abs($2)/2):(0.35):3:ytic(5) with boxxyerror fc palette, \\\n"
            "     $cmp using ($2 + ($2 >= 0 ? 1 : -1)*%g):1:4 with labels font ',12'" % (lim * 0.06)])
        s = cmp["summary"]
        renamed = {}
        for r in cmp["rows"]:
            if r.get("resolved_change"):
                renamed[r["resolved_change"]] = renamed.get(r["resolved_change"], 0) + 1
        notes = ["%d row(s) paired across a changed auto resolution: %s" % (n, ch) for ch, n in sorted(renamed.items())]
        notes += ["%s: %d regression(s), %d improvement(s), %d unchanged, %d untested; geomean time head/base %.4f"
                 % (cmp.get("stored_at", "compare"), s["regression"], s["improvement"], s["unchanged"],
                    s["untested"], cmp["geomean"]["time_ratio"])]
        out.append(Figure("%s-%d" % (fid, ci), "%s: %s vs %s" % (title, h["commit"], b["commit"]), {"cmp": data},
                          body, ["benchmark", "base ms", "head ms", "time", "gflops", "p", "verdict"], rows, notes,
                          size=(1000, max(360, 60 + 26 * n))))
    return out


# ---- trend over commits -----------------------------------------------------------------

def trend(ds, repo=None):
    fid, title = "trend", "Trend over commits (median GFLOP/s, relative to the oldest commit)"
    runs = [history.Run(f) for f in ds.files]
    if len({r.commit for r in runs}) < 2:
        return Skip(fid, title, "results of only one commit")
    series = history.trend(runs, ".", repo=repo, merge_resolved=True, keep_samples=True)
    series = {k: v for k, v in series.items() if len(v) >= 2 and v[0]["median"]}
    if not series:
        return Skip(fid, title, "no benchmark measured at two or more commits")
    commits = []
    for pts in series.values():
        for p in pts:
            if p["commit"] not in commits:
                commits.append(p["commit"])
    # the commit order of history.trend is git-log order; merge the per-series lists in it
    order = history.order_commits(commits, {c: [r for r in runs if r.commit == c] for c in commits}, repo)
    index = {c: i for i, (c, _, _) in enumerate(order)}
    keys = sorted(series, key=lambda k: ("impl:xattn" not in k, -len(series[k]), k))
    short = _labels(keys[:MAX_LINES])
    blocks, plots = {}, []
    # The geomean follows only the series measured at the oldest commit, so that
    # workloads joining later never move it.
    first = order[0][0]
    anchored = [k for k in keys if series[k][0]["commit"] == first]
    per_commit = {}
    for k in anchored:
        base = series[k][0]["median"]
        for p in series[k]:
            per_commit.setdefault(p["commit"], []).append(p["median"] / base)
    blocks["geo"] = [(index[c], stats.geomean(v)) for c, v in sorted(per_commit.items(), key=lambda kv: index[kv[0]])]
    for i, k in enumerate(keys[:MAX_LINES]):
        base = series[k][0]["median"]
        blocks["t%d" % i] = [(index[p["commit"]], p["median"] / base) for p in series[k]]
        plots.append("$t%d using 1:2 with linespoints lw 1 pt 7 lc rgb '%s' title %s"
                     % (i, COLORS[i % len(COLORS)], quote(short[k])))
    plots.append("$geo using 1:2 with linespoints lw 4 pt 5 lc rgb 'black' title %s"
                 % quote("geomean (%d from %s)" % (len(anchored), first[:8])))
    rows = [[k, p["commit"], _fmt(p["median"]), _fmt(p["median"] / series[k][0]["median"]), p["n"]]
            for k in keys for p in series[k]]
    marks, step_notes = _step_marks(series, index)
    body = "\n".join([
        "set grid", "set ylabel 'GFLOP/s / oldest commit''s'", "set xlabel 'commit (git log order)'",
        "set xtics (%s) rotate by 30 right" % ", ".join("%s %d" % (quote(c if len(c) <= 18 else c[:12]), i)
                                                        for c, i in index.items()),
        "set xrange [-0.3:%g]" % (len(index) - 0.7), "set key outside right top"] + marks + [
        "plot " + ", \\\n     ".join(plots)])
    notes = ["a workload is followed across commits that changed its auto-resolved isa/variant/layout; "
             "where a commit has several such rows (a variant sweep) the best is taken"] + step_notes + [
             "%d benchmark(s) over %d commit(s); subjects: %s" % (len(keys), len(index),
             "; ".join("%s %s" % (c[:8], s[:40]) for c, _, s in order if s))]
    return Figure(fid, title, blocks, body, ["benchmark", "commit", "median GFLOP/s", "relative", "samples"],
                  rows, notes, size=(950, 640))


def _step_marks(series, index):
    """gnuplot commands drawing a dashed red line before each commit where
    `xattn history steps` finds a step (steps.find_steps, default settings) in
    any series, labelled with the median step size; and the notes listing them."""
    per = {k: steps.find_steps(pts) for k, pts in series.items()}
    found = steps.steps_by_commit(per, list(index))
    marks, notes = [], []
    for commit, hits in found:
        x = index[commit] - 0.5
        size = stats.median(s["size"] for _, s in hits)
        marks.append("set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lw 2 lc rgb '#d62728' front" % (x, x))
        marks.append("set label %s at %g, graph 0.97 right offset -0.5,0 tc rgb '#d62728' front"
                     % (quote("step %+.1f%%" % (100 * size)), x))
        notes.append("step at %s (dashed red line; xattn history steps): %d of %d benchmark(s), median %+.1f%%, "
                     "largest U-test p %.2g" % (commit, len(hits), len(series), 100 * size,
                                                max(s["pvalue"] for _, s in hits)))
    if not found:
        notes.append("no steps (xattn history steps: change points beyond the commit-to-commit noise, "
                     "U test, >= %g%%)" % (100 * steps.DEFAULT_MIN_STEP))
    return marks, notes


# ---- peers side by side ----------------------------------------------------------------

def peers(ds):
    fid, title = "peers", "xattn and its peers side by side"
    groups = {}
    for p in ds.select(impl=PEER_IMPLS):
        if p.gflops:
            groups.setdefault(p.key_without("impl", "variant", "layout", "isa"), {}).setdefault(p.get("impl"), []).append(p)
    groups = {k: g for k, g in groups.items() if len(g) >= 2 and "xattn" in g}
    if not groups:
        return Skip(fid, title, "no workload measured by xattn and by a peer (impl:torch, impl:ort, impl:ipex, impl:blas)")
    impls = [i for i in PEER_IMPLS if any(i in g for g in groups.values())]
    keys = sorted(groups)
    # the picture shows the largest thread count (the table has every count)
    th = max(int(_fields(k).get("threads", "0") or 0) for k in keys)
    drawn = [k for k in keys if int(_fields(k).get("threads", "0") or 0) == th][:MAX_BARS]
    short = _labels(drawn)
    data, rows = [], []
    for k in keys:
        g = groups[k]
        best = {i: _best(g[i]).gflops for i in impls if i in g}
        if k in short:
            data.append([short[k]] + [best.get(i, "-") for i in impls])
        rows.append([k] + [_fmt(best.get(i)) for i in impls] +
                    [_fmt(best["xattn"] / max(v for i, v in best.items() if i != "xattn"))])
    plots = ["$peers using %d%s title %s lc rgb '%s'" % (j + 2, ":xtic(1)" if j == 0 else "", quote(i), COLORS[j % len(COLORS)])
             for j, i in enumerate(impls)]
    body = "\n".join([
        "set style data histogram", "set style histogram clustered gap 1", "set style fill solid 0.85 border -1",
        "set datafile missing '-'", "set grid ytics", "set ylabel 'GFLOP/s (docs/contract.md 5 FLOPs)'", "set yrange [0:*]",
        "set xtics rotate by 30 right", "set bmargin 10", "set lmargin %d" % _rot_lmargin(data[0][0]),
        "set key top right", "set title %s" % quote("%d thread(s)" % th),
        "plot " + ", ".join(plots)])
    notes = ["best variant per workload for xattn; %d thread(s) drawn (%d bars), the table has every thread count"
             % (th, len(drawn))]
    return Figure(fid, title, {"peers": data}, body,
                  ["workload"] + ["%s GFLOP/s" % i for i in impls] + ["xattn / best peer"], rows, notes,
                  size=(1000, 620))
