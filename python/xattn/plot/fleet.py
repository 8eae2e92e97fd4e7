"""The fleet page of `xattn plot`: the same workloads across machines.

Drawn when the inputs hold results of two or more machines (a fleet's results
tree, docs/fleet-runbook.md). Every figure keeps each machine's numbers apart
and labels them by machine; nothing is averaged across machines. Per machine,
the newest commit's files are used.

  fleet-rates    GFLOP/s of each workload on each machine, with % of that
                 machine's compute peak and memory roof (table)
  fleet-speedup  tuned-vs-default geomean per machine (xattn-tune compare reports)
  fleet-configs  the configuration each machine chose per workload class
                 (table, and a heatmap colored by that class's speedup)
"""
from ..perf import stats

from . import dataset
from .figures import COLORS, MAX_BARS, Figure, Skip, _bytes_of, _fmt, _lmargin, _rot_lmargin
from .gnuplot import quote


def _newest_commit_subsets(ds):
    """{machine: Dataset of its newest commit's files}."""
    out = {}
    for m in ds.machines():
        files = [f for f in ds.files if f.machine == m]
        newest = max(files, key=lambda f: f.timestamp or "").commit
        sub = dataset.Dataset()
        for f in files:
            if f.commit == newest:
                sub.add_file(f)
        out[m] = sub
    return out


def _rate_rows(sub):
    """{(suite, wl, dtype): best xattn Point at the machine's most threads},
    from tuned-header runs when the machine has any (what a release ships)."""
    pts = [p for p in sub.select(impl="xattn") if p.gflops]
    tuned = [p for p in pts if dataset.config_kind(p.file) == "tuned"]
    pts = tuned or pts
    if not pts:
        return {}, False
    th = max(p.threads for p in pts)
    best = {}
    for p in pts:
        if p.threads != th:
            continue
        k = (p.get("suite"), p.get("wl"), p.get("dtype"))
        if k not in best or p.gflops > best[k].gflops:
            best[k] = p
    return best, bool(tuned)


def _pct_mem_roof(p, bw, peak):
    """% of the machine's memory roof: the row's own pct_mem_roof (xattn-bench:
    bytes that must be read vs the gather roof measured on that machine), else
    GFLOP/s over min(peak, bandwidth x arithmetic intensity); None if neither."""
    if p.c.get("pct_mem_roof") is not None:
        return p.c["pct_mem_roof"]
    b, _ = _bytes_of(p)
    if not (bw and b and p.c.get("flops")):
        return None
    roof = bw * p.c["flops"] / b
    return 100 * p.gflops / (min(roof, peak) if peak else roof)


def rates(ds):
    fid, title = "fleet-rates", "Fleet: the same workloads on every machine"
    subs = _newest_commit_subsets(ds)
    per = {m: _rate_rows(s) for m, s in subs.items()}
    machines = [m for m in subs if per[m][0]]
    common = set.intersection(*[set(per[m][0]) for m in machines]) if len(machines) >= 2 else set()
    if not common:
        return Skip(fid, title, "no workload (suite, workload, dtype) has xattn rows on two or more machines")
    keys = sorted(common)[:MAX_BARS]
    rows, data, notes = [], [], []
    for m in machines:
        sub = subs[m]
        p32, _ = dataset.peak_gflops(sub, "f32")
        p16, _ = dataset.peak_gflops(sub, "bf16")
        bw, bw_src = dataset.memory_bandwidth(sub)
        best, tuned = per[m]
        notes.append("%s (CPU class %s): commit %s, %s-header runs, %s threads; peak f32 %s / bf16 %s GFLOP/s; memory %s"
                     % (m, sub.files[0].context.get("xattn_cpu_class", "not recorded"), sub.files[0].commit,
                        "tuned" if tuned else "any", max(p.threads for p in best.values()),
                        _fmt(p32), _fmt(p16), "%.1f GB/s (%s)" % (bw, bw_src) if bw else "bandwidth not in the results"))
        for k in sorted(common):
            p = best[k]
            peak = p16 if k[2] in ("bf16", "f16") and p16 else p32 or p16
            rows.append(["%s/%s/%s" % k, m, p.get("variant"), p.get("isa"), _fmt(p.gflops),
                         _fmt(100 * p.gflops / peak) if peak else "-", _fmt(_pct_mem_roof(p, bw, peak))])
    for k in keys:
        data.append(["%s/%s" % (k[1], k[2])] + [per[m][0][k].gflops for m in machines])
    plots = ["$fr using 2:xtic(1) title %s lc rgb '%s'" % (quote(machines[0]), COLORS[0])]
    plots += ["'' using %d title %s lc rgb '%s'" % (i + 2, quote(m), COLORS[i % len(COLORS)])
              for i, m in enumerate(machines) if i > 0]
    body = "\n".join([
        "set style data histogram", "set style histogram clustered gap 1", "set style fill solid 0.85 border -1",
        "set grid ytics", "set ylabel 'GFLOP/s'", "set yrange [0:*]", "set xtics rotate by 30 right",
        "set key top left", "set bmargin 9", "set lmargin %d" % _rot_lmargin(data[0][0]),
        "set title %s" % quote("%d machines, %d common workloads; each machine's newest commit" % (len(machines), len(common))),
        "plot " + ", \\\n     ".join(plots)])
    notes.append("% of peak: against that machine's own measured compute peak for the dtype; % of memory roof: "
                 "the row's pct_mem_roof (bytes that must be read vs that machine's gather roof), else GFLOP/s over "
                 "min(peak, bandwidth x arithmetic intensity) of that machine")
    return Figure(fid, title, {"fr": data}, body,
                  ["workload", "machine", "variant", "isa", "GFLOP/s", "% of peak", "% of memory roof"],
                  rows, notes, size=(1000, 620))


def _reports_by_machine(ds):
    """{machine: its newest tune report (by commit order of the inputs, then path)}."""
    out = {}
    for r in ds.tune_reports:
        m = r.get("machine")
        if m and r.get("classes"):
            if m not in out or str(r.get("path", "")) > str(out[m].get("path", "")):
                out[m] = r
    return out


def _no_reports(fid, title):
    return Skip(fid, title, "tuned-vs-default reports (xattn-tune compare --json) of fewer than two machines")


def _fleet_reports(fid, title, ds):
    """(reports by machine, sorted machines), or (Skip, None) with fewer than two."""
    reps = _reports_by_machine(ds)
    return (reps, sorted(reps)) if len(reps) >= 2 else (_no_reports(fid, title), None)


def speedups(ds):
    fid, title = "fleet-speedup", "Fleet: tuned vs default header per machine"
    reps, machines = _fleet_reports(fid, title, ds)
    if machines is None:
        return reps
    data, rows = [], []
    for m in machines:
        r = reps[m]
        tuned = [c for c in r["classes"] if c.get("speedup") is not None and not c.get("identical")]
        data.append([m, r.get("geomean_tuned_classes", 1.0), r.get("geomean_all_classes", 1.0)])
        rows.append([m, r.get("commit", "-"), len(r["classes"]), len(tuned),
                     _fmt(r.get("geomean_tuned_classes")), _fmt(r.get("geomean_all_classes")), r.get("path", "")])
    body = "\n".join([
        "set style data histogram", "set style histogram clustered gap 1", "set style fill solid 0.85 border -1",
        "set grid ytics", "set ylabel 'geomean speedup tuned / default'", "set xtics rotate by 20 right",
        "set key top right", "set bmargin 8", "set lmargin %d" % _rot_lmargin(data[0][0]),
        "set yrange [%g:%g]" % (min(0.95, min(min(d[1], d[2]) for d in data) - 0.02),
                                max(max(d[1], d[2]) for d in data) + 0.05),
        "set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb 'black'",
        "plot $fs using 2:xtic(1) title 'tuned classes' lc rgb '%s', '' using 3 title 'all classes' lc rgb '%s'"
        % (COLORS[2], COLORS[0])])
    return Figure(fid, title, {"fs": data}, body,
                  ["machine", "commit", "classes", "tuned", "geomean (tuned classes)", "geomean (all)", "report"],
                  rows, ["one interleaved tuned-vs-default run per machine, on that machine (tune/release.sh step 5)"],
                  size=(900, 520))


def configs(ds):
    fid, title = "fleet-configs", "Fleet: the configuration each machine chose per workload class"
    reps, machines = _fleet_reports(fid, title, ds)
    if machines is None:
        return reps
    chosen = {}
    for m in machines:
        for c in reps[m]["classes"]:
            key = c.get("class", "?").split("#")[0]
            kept = c.get("identical") or c.get("speedup") is None
            chosen.setdefault(key, {})[m] = (c.get("tuned", "-"), 1.0 if kept else c.get("speedup", 1.0), kept)
    classes = sorted(chosen)[:MAX_BARS * 2]
    rows = [[k] + ["%s%s" % (chosen[k][m][0], " (kept)" if chosen[k][m][2] else " x%.3f" % chosen[k][m][1])
                   if m in chosen[k] else "-" for m in machines] for k in classes]
    cells = []
    for yi, k in enumerate(classes):
        for xi, m in enumerate(machines):
            if m in chosen[k]:
                cfg, sp, _ = chosen[k][m]
                cells.append((xi, len(classes) - 1 - yi, sp, cfg.split("/")[0]))
    lo = min(c[2] for c in cells)
    hi = max(max(c[2] for c in cells), lo + 0.01)
    body = "\n".join([
        "set title 'chosen variant per class and machine; color: speedup over the default header'",
        "set xrange [-0.5:%g]" % (len(machines) - 0.5), "set yrange [-0.5:%g]" % (len(classes) - 0.5),
        "set xtics (%s) rotate by 20 right" % ", ".join("%s %d" % (quote(m), i) for i, m in enumerate(machines)),
        "set ytics (%s) font ',8'" % ", ".join("%s %d" % (quote(k), len(classes) - 1 - i) for i, k in enumerate(classes)),
        "set cblabel 'speedup tuned / default'", "set cbrange [%g:%g]" % (min(lo, 1.0), hi),
        "set palette defined (0 '#f7f7f7', 1 '#a1d99b', 2 '#006d2c')",
        "set style fill solid 1.0 border lc rgb 'white'", "unset key",
        "set lmargin %d" % _lmargin(classes), "set bmargin 8",
        "plot $fc using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, \\\n"
        "     $fc using 1:2:4 with labels font ',9'"])
    notes = ["cell label: the chosen BLOCK_M x BLOCK_N variant; table: variant/layout/schedule/threads/placement "
             "and the measured speedup, or '(kept)' when the defaults stayed"]
    return Figure(fid, title, {"fc": cells}, body, ["class"] + machines, rows, notes,
                  size=(max(700, 260 + 160 * len(machines)), max(400, 120 + 24 * len(classes))))


def figures(ds):
    """The fleet page's figures, or [] when the inputs hold one machine."""
    if len(ds.machines()) < 2 and len(_reports_by_machine(ds)) < 2:
        return []
    return [rates(ds), speedups(ds), configs(ds)]
