"""`xattn plot RESULTS... [-o DIR]`: pictures (PNG + SVG, gnuplot) and an HTML
report from results files, folders of them and `xattn compare` outputs.

Figures: roofline, BLOCK_M x BLOCK_N heatmaps, per-mode rates, thread scaling,
tuned vs default, commit comparison, trend over commits, peers. A figure whose
data is not in the inputs is listed as not drawn, with the reason.

Exit status: 0 report written; 2 no usable input; 3 gnuplot failed on a figure
(the report is still written, the failure listed in it).
"""
import argparse
import os
import re
import subprocess
import sys

from xattnperf.results import default_results_dir, utc_stamp

from . import dataset, figures, gnuplot, report_html


def parse_args(argv):
    p = argparse.ArgumentParser(prog="xattn plot", description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="*", metavar="RESULTS",
                   help="results files or folders (default: $XATTN_RESULTS_DIR or <repo>/results)")
    p.add_argument("-o", "--out", metavar="DIR", help="output folder (default plots/out/<UTC timestamp>/)")
    p.add_argument("--machine", help="machine whose results to draw (default: the one with most rows)")
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


def measure_bandwidth():
    """GB/s of likwid-bench's copy kernel over 256 MB on all cores, or None."""
    try:
        n = os.cpu_count() or 1
        out = subprocess.run(["likwid-bench", "-t", "copy_avx", "-w", "S0:256MB:%d" % n],
                             capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"MByte/s:\s+([0-9.]+)", out)
    return float(m.group(1)) / 1e3 if m else None


def _pick_machine(ds, wanted, notes):
    counts = {}
    for p in ds.points:
        counts[p.file.machine] = counts.get(p.file.machine, 0) + 1
    if not counts:
        return None
    if wanted:
        match = [m for m in counts if m == wanted] or [m for m in counts if m.startswith(wanted)]
        if not match:
            return None
        machine = match[0]
    else:
        machine = max(counts, key=lambda m: (counts[m], m))
    others = sorted(m for m in counts if m != machine)
    if others:
        notes.append("results of other machines left out (plots never mix machines): %s" % ", ".join(others))
    return machine


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
    if not ds.points and not ds.compares:
        print("xattn plot: no results files or compare outputs in %s" % ", ".join(inputs), file=sys.stderr)
        return 2
    meta = []
    machine = _pick_machine(ds, a.machine, meta)
    if a.machine and not machine:
        print("xattn plot: no results of machine %r (have: %s)" % (a.machine, ", ".join(ds.machines())), file=sys.stderr)
        return 2
    one = dataset.Dataset()
    for f in ds.files:
        if f.machine == machine:
            one.add_file(f)
    one.compares = ds.compares
    top = _repo_top()
    out = a.out or os.path.join(top or os.getcwd(), "plots", "out", utc_stamp())
    os.makedirs(out, exist_ok=True)

    mem_bw = a.mem_bw
    if a.measure_bw and not mem_bw:
        mem_bw = measure_bandwidth()
        meta.append("memory bandwidth measured now with likwid-bench copy_avx: %s"
                    % ("%.1f GB/s" % mem_bw if mem_bw else "failed"))
    meta.insert(0, "machine: %s; %d results file(s), %d benchmark rows, %d compare output(s)"
                % (machine or "-", len(one.files), len(one.points), len(one.compares)))
    builders = [
        lambda: figures.roofline(one, mem_bw),
        lambda: figures.heatmaps(one),
        lambda: figures.modes(one),
        lambda: figures.scaling(one),
        lambda: figures.tuned_vs_default(one),
        lambda: figures.commit_comparison(one),
        lambda: figures.trend(one, top),
        lambda: figures.peers(one),
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
    for fig, files in drawn:
        print("drew %-12s %s" % (fig.id, ", ".join(os.path.join(out, f) for f in files)))
    for s in skipped:
        print("not drawn: %s: %s" % (s.title, s.reason))
    print("report: %s" % index)
    return 3 if failed else 0
