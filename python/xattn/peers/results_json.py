"""Google-Benchmark-format results for peer rows (docs/formats.md §3), so
compare.py, the comparison tool and the plots read peers like any other row.
Standard library only."""
import datetime
import json
import os
import platform
import socket
import statistics
import sys

from ..results import format_name


def bench_name(suite, workload, dtype, impl, threads, place, variant="-", layout="-"):
    return format_name({"suite": suite, "wl": workload, "dtype": dtype, "impl": impl, "variant": variant,
                        "layout": layout, "isa": "-", "threads": threads, "place": place})


def counters(seconds, pairs, flop_count, tokens, peak_gflops):
    c = {"gflops": flop_count / seconds / 1e9 if seconds > 0 else 0.0,
         "tokens_per_s": tokens / seconds if seconds > 0 else 0.0,
         "flops": float(flop_count), "visible_pairs": float(pairs)}
    if peak_gflops:
        c["pct_peak"] = 100.0 * c["gflops"] / peak_gflops
    return c


def rows_for(name, family, times, cpu_times, iterations, pairs, flop_count, tokens, peak):
    """Per-repetition rows and mean/median/stddev/cv aggregates, as Google
    Benchmark writes them with --benchmark_repetitions. times in seconds per call."""
    reps = len(times)
    base = {"family_index": family, "per_family_instance_index": 0, "run_name": name,
            "repetitions": reps, "threads": 1, "time_unit": "ms"}
    rows = []
    for i, (t, c, n) in enumerate(zip(times, cpu_times, iterations)):
        r = dict(base, name=name, run_type="iteration", repetition_index=i, iterations=n,
                 real_time=t * 1e3, cpu_time=c * 1e3)
        r.update(counters(t, pairs, flop_count, tokens, peak))
        rows.append(r)
    per_rep = [counters(t, pairs, flop_count, tokens, peak) for t in times]

    def agg(kind, real, cpu, ctr, unit="time"):
        r = dict(base, name=f"{name}_{kind}", run_type="aggregate", aggregate_name=kind,
                 aggregate_unit=unit, iterations=reps, real_time=real, cpu_time=cpu)
        r.update(ctr)
        rows.append(r)

    ms = [t * 1e3 for t in times]
    cms = [c * 1e3 for c in cpu_times]
    agg("mean", statistics.fmean(ms), statistics.fmean(cms), counters(statistics.fmean(times), pairs, flop_count, tokens, peak))
    agg("median", statistics.median(ms), statistics.median(cms), counters(statistics.median(times), pairs, flop_count, tokens, peak))
    sd = statistics.stdev(ms) if reps > 1 else 0.0
    csd = statistics.stdev(cms) if reps > 1 else 0.0
    keys = per_rep[0].keys()
    sd_ctr = {k: (statistics.stdev([p[k] for p in per_rep]) if reps > 1 else 0.0) for k in keys}
    agg("stddev", sd, csd, sd_ctr)
    mean, cmean = statistics.fmean(ms), statistics.fmean(cms)
    cv_ctr = {k: (sd_ctr[k] / statistics.fmean([p[k] for p in per_rep]) if statistics.fmean([p[k] for p in per_rep]) else 0.0)
              for k in keys}
    agg("cv", sd / mean if mean else 0.0, csd / cmean if cmean else 0.0, cv_ctr, unit="percentage")
    return rows


def base_context(extra):
    """Google Benchmark's own context keys plus the xattn_* ones in extra."""
    mhz = 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    mhz = int(float(line.split(":")[1]))
                    break
    except OSError:
        pass
    ctx = {"date": datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds"),
           "host_name": socket.gethostname(), "executable": os.path.abspath(sys.argv[0]),
           "num_cpus": os.cpu_count(), "mhz_per_cpu": mhz, "cpu_scaling_enabled": False,
           "caches": [], "load_avg": list(os.getloadavg()), "library_build_type": "release",
           "library_version": f"python {platform.python_version()}"}
    ctx.update(extra)
    return ctx


def utc_stamp():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def sanitize(label):
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in label)


def publish(doc, results_dir, machine, commit_dir, label):
    """Writes doc to results/<machine>/<commit>/<stamp>_<label>.json through a
    temp file and link(): never overwrites (adds _2, _3, ...). Returns the path."""
    d = os.path.join(results_dir, machine, commit_dir)
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".tmp-{os.getpid()}-{sanitize(label)}.json")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    stamp, n = utc_stamp(), 1
    while True:
        path = os.path.join(d, f"{stamp}_{sanitize(label)}{'' if n == 1 else f'_{n}'}.json")
        try:
            os.link(tmp, path)
            break
        except FileExistsError:
            n += 1
    os.unlink(tmp)
    return path


def write_atomic(doc, path):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
