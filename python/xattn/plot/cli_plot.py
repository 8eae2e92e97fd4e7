"""`xattn plot RESULTS... [-o DIR]`: pictures (PNG + SVG, gnuplot) and an HTML
report from results files, folders of them and `xattn compare` outputs.

Figures: roofline, BLOCK_M x BLOCK_N heatmaps, per-mode rates, thread scaling,
tuned vs default, commit comparison, trend over commits, peers; with results
of two or more machines, the fleet figures (xattn.plot.fleet). A figure whose
data is not in the inputs is listed as not drawn, with the reason.

Exit status: 0 report written; 2 no usable input; 3 gnuplot failed on a figure
(the report is still written, the failure listed in it).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from ..results import default_results_dir, utc_stamp

from . import dataset, figures, fleet, gnuplot, report_html


def parse_args(argv):
    p = argparse.ArgumentParser(prog="xattn plot", description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="*", metavar="RESULTS",
                   help="results files or folders (default: $XATTN_RESULTS_DIR or <repo>/results)")
    p.add_argument("-o", "--out", metavar="DIR", help="output folder (default plots/out/<UTC timestamp>/)")
    p.add_argument("--machine", help="machine whose results to draw (default: that of the newest results file)")
    p.add_argument("--all-commits", action="store_true",
                   help="snapshot figures from every commit's results (default: only the newest commit's; "
                        "the trend always uses all)")
    p.add_argument("--mem-bw", type=float, metavar="GBS", help="memory bandwidth for the roofline, GB/s")
    p.add_argument("--measure-bw", action="store_true",
                   help="measure the memory bandwidth here with likwid-bench (only if the results are of this machine)")
    p.add_argument("--title", default="xattn performance report")
    return p.parse_args(argv)


def _repo_top():
    try:
        return subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def measure_bandwidth(runs=3):
    """GB/s of likwid-bench's copy kernel over 256 MB on all cores, the best of
    a few runs (other processes only ever make it slower), or None."""
    best = None
    n = os.cpu_count() or 1
    for _ in range(runs):
        try:
            out = subprocess.run(["likwid-bench", "-t", "copy_avx", "-w", "S0:256MB:%d" % n],
                                 capture_output=True, text=True, timeout=120).stdout
        except (OSError, subprocess.TimeoutExpired):
            return best
        m = re.search(r"MByte/s:\s+([0-9.]+)", out)
        if m:
            best = max(best or 0.0, float(m.group(1)) / 1e3)
    return best


def _newest(files):
    """The most recent results file: by the UTC stamp of its name, else its mtime."""
    return max(files, key=lambda f: (f.timestamp or "", os.path.getmtime(f.path)))


def _pick_machine(ds, wanted, notes):
    """The machine to draw: --machine (slug or prefix), else the newest file's."""
    machines = sorted({f.machine for f in ds.files} or {c.machine for c in ds.tune_caches if c.machine})
    if not machines:
        return None
    if wanted:
        match = [m for m in machines if m == wanted] or [m for m in machines if m.startswith(wanted)]
        if not match:
            return None
        machine = match[0]
    elif ds.files:
        machine = _newest(ds.files).machine
    else:
        machine = machines[0]
    others = [m for m in machines if m != machine]
    if others:
        notes.append("results of other machines left out of the figures of one machine (plots never mix "
                     "machines; the fleet figures show each machine side by side): %s" % ", ".join(others))
    return machine


def _subset(files, keep):
    out = dataset.Dataset()
    for f in files:
        if keep(f):
            out.add_file(f)
    return out


def _unwritable(out):
    """Why the output folder cannot be made or written (one line), or None.
    Checked before any figure is drawn, so a bad -o costs nothing."""
    try:
        os.makedirs(out, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".xattn-plot-probe-"):
            pass
    except OSError as e:
        return "cannot write there (%s)" % (e.strerror or e)
    return None


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if not gnuplot.available():
        print("xattn plot: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox)", file=sys.stderr)
        return 2
    inputs = a.inputs or [default_results_dir()]
    for i in inputs:
        if not os.path.exists(i):
            print("xattn plot: %s: no such file or folder" % i, file=sys.stderr)
            return 2
    ds = dataset.Dataset().add_paths(inputs)
    if not ds.points and not ds.compares and not ds.tune_reports and not ds.tune_caches:
        first = "; %s%s" % (ds.notes[0], " (and %d more)" % (len(ds.notes) - 1) if len(ds.notes) > 1 else "") \
            if ds.notes else ""
        print("xattn plot: no results files or compare outputs in %s%s" % (", ".join(inputs), first), file=sys.stderr)
        return 2
    meta = []
    machine = _pick_machine(ds, a.machine, meta)
    if a.machine and not machine:
        print("xattn plot: no results of machine %r (have: %s)" % (a.machine, ", ".join(ds.machines())), file=sys.stderr)
        return 2
    # Snapshot figures describe one commit (the newest, unless --all-commits);
    # the trend figure follows every commit of the machine.
    history_ds = _subset(ds.files, lambda f: f.machine == machine)
    commit = _newest(history_ds.files).commit if history_ds.files else None
    one = history_ds if a.all_commits else _subset(history_ds.files, lambda f: f.commit == commit)
    for d in (one, history_ds):
        d.compares = ds.compares
        d.tune_reports = [r for r in ds.tune_reports if not machine or r.get("machine") in (machine, None)]
        d.tune_caches = [c for c in ds.tune_caches if not machine or c.machine in (machine, None)]
    if commit and not a.all_commits and len(one.files) < len(history_ds.files):
        meta.append("snapshot figures use commit %s only (%d of %d files; --all-commits for all); "
                    "the trend uses every commit" % (commit, len(one.files), len(history_ds.files)))
    loads = [(f.context.get("load_avg") or [0])[0] for f in one.files if isinstance(f.context.get("load_avg"), list)]
    cpus = max([int(f.context.get("num_cpus", 0) or 0) for f in one.files] + [1])
    if loads and max(loads) > 0.5 * cpus:
        meta.append("WARNING: load average up to %.1f on %d CPU(s) when these runs started (Google Benchmark's "
                    "load_avg): other processes shared the cores, rates are lower and noisier than the machine's"
                    % (max(loads), cpus))
    top = _repo_top()
    out = a.out or os.path.join(top or os.getcwd(), "plots", "out", utc_stamp())
    problem = _unwritable(out)
    if problem:
        print("xattn plot: -o %s: %s" % (out, problem), file=sys.stderr)
        return 2

    mem_bw, bw_src = a.mem_bw, "--mem-bw"
    if a.measure_bw and not mem_bw:
        mem_bw, bw_src = measure_bandwidth(), "likwid-bench copy_avx, measured now, best of 3"
        meta.append("memory bandwidth measured now with likwid-bench copy_avx (best of 3): %s"
                    % ("%.1f GB/s" % mem_bw if mem_bw else "failed"))
    meta.insert(0, "machine: %s; %d results file(s), %d benchmark rows, %d compare output(s)"
                % (machine or "-", len(one.files), len(one.points), len(one.compares)))
    builders = [
        lambda: figures.roofline(one, mem_bw, bw_src),
        lambda: figures.heatmaps(one),
        lambda: figures.modes(one),
        lambda: figures.scaling(one),
        lambda: figures.tuned_vs_default(one),
        lambda: figures.tune_report(one),
        lambda: figures.commit_comparison(one),
        lambda: figures.trend(history_ds, top),
        lambda: figures.peers(one),
        lambda: fleet.figures(ds),  # two or more machines: side by side, never mixed
    ]
    drawn, skipped, failed = [], [], 0
    for build in builders:
        result = build()
        for fig in (result if isinstance(result, list) else [result]):
            if isinstance(fig, figures.Skip):
                skipped.append(fig)
                continue
            try:
                drawn.append((fig, gnuplot.render(out, fig.id, fig.blocks, fig.body, fig.size)))
            except gnuplot.GnuplotError as e:
                failed += 1
                skipped.append(figures.Skip(fig.id, fig.title, str(e)))
    index = report_html.write(out, a.title, meta, drawn, skipped, ds.notes)
    for line in meta:
        print(line)
    for fig, files in drawn:
        print("drew %-12s %s" % (fig.id, ", ".join(os.path.join(out, f) for f in files)))
    for s in skipped:
        print("not drawn: %s: %s" % (s.title, s.reason))
    print("report: %s" % index)
    return 3 if failed else 0
