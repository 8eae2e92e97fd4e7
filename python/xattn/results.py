"""Loading, validating and storing xattn results files.

A results file is Google Benchmark JSON ({"context": {...}, "benchmarks": [...]})
with the xattn context keys and row names of docs/formats.md §3. Files live at
results/<machine>/<commit>/<UTC yyyymmddTHHMMSSZ>_<label>.json and are never
overwritten. Every problem is reported as a ResultsError whose message is one
line naming the file and the reason, so that callers can print it and exit 2.
"""
import datetime
import json
import math
import os
import re
import tempfile

# Order of the key:value segments of a benchmark name (docs/formats.md §3).
# the last four only on xattn rows run with xattn-bench --schedules / --kv-splits / --prefetch / --prefetch-level
NAME_KEYS = ("suite", "wl", "dtype", "impl", "variant", "layout", "isa", "threads", "place", "sched", "splits", "pf",
             "pfl")

# Counters that are rates (higher is better) and worth comparing between runs.
RATE_COUNTERS = ("gflops", "tokens_per_s", "pct_peak", "speedup_vs_blas")

# Google Benchmark's row keys that are not user counters.
_GB_ROW_KEYS = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type",
    "repetitions", "repetition_index", "threads", "iterations", "real_time",
    "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "label",
    "error_occurred", "error_message", "big_o", "rms", "complexity",
}

_TIME_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

COMPARE_SCHEMA = "xattn-compare-1"


class ResultsError(Exception):
    """A results file that cannot be used; str() is one line for the user."""


def parse_name(name):
    """Split 'suite:x/wl:y/...' into an ordered dict of key -> value.

    Segments without a colon (e.g. Google Benchmark's '/real_time' suffix) are
    kept under the key '_extra' so that nothing is silently dropped."""
    fields = {}
    extra = []
    for seg in name.split("/"):
        if ":" in seg:
            key, value = seg.split(":", 1)
            fields[key] = value
        elif seg:
            extra.append(seg)
    if extra:
        fields["_extra"] = "/".join(extra)
    return fields


def format_name(fields):
    """Inverse of parse_name for the keys of NAME_KEYS (docs/formats.md), in that order."""
    return "/".join("%s:%s" % (k, fields[k]) for k in NAME_KEYS if k in fields)


def row_seconds(row):
    """real_time of a row in seconds."""
    unit = row.get("time_unit", "ns")
    if unit not in _TIME_UNIT_SECONDS:
        raise ResultsError("benchmark %r: unknown time_unit %r" % (row.get("name"), unit))
    return float(row["real_time"]) * _TIME_UNIT_SECONDS[unit]


def row_counters(row):
    """User counters of a row: every numeric key that Google Benchmark does not own."""
    return {k: float(v) for k, v in row.items()
            if k not in _GB_ROW_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool)}


def is_iteration(row):
    return row.get("run_type", "iteration") == "iteration"


class ResultFile:
    """One validated results file."""

    def __init__(self, path, data):
        self.path = path
        self.context = data.get("context", {})
        self.rows = [r for r in data["benchmarks"] if not r.get("error_occurred")]
        self.errors = [r for r in data["benchmarks"] if r.get("error_occurred")]
        base = os.path.basename(path)
        m = re.match(r"^(\d{8}T\d{6}Z)_(.*)\.json$", base)
        self.timestamp = m.group(1) if m else None
        self.label = m.group(2) if m else os.path.splitext(base)[0]
        self._index()

    def _index(self):
        """One pass over the rows: the iteration rows of each name and the median
        aggregates of each run_name, so that names() and samples() never rescan
        the file (once per name, they took minutes on 100k rows)."""
        self._order = {}        # benchmark names in file order (a dict keeps insertion order)
        self._iterations = {}   # name -> its iteration rows
        self._medians = {}      # run_name -> its median aggregate rows
        for r in self.rows:
            if is_iteration(r):
                self._iterations.setdefault(r["name"], []).append(r)
                self._order.setdefault(r["name"])
            else:
                self._order.setdefault(r.get("run_name", r["name"]))
            if r.get("aggregate_name") == "median":
                self._medians.setdefault(r.get("run_name", r["name"]), []).append(r)

    @property
    def machine(self):
        return machine_of(self.context)

    @property
    def commit(self):
        return commit_of(self.context)

    def names(self):
        """Benchmark names in file order, each once. Aggregate rows (name_mean,
        name_median, ...) are not benchmarks of their own: they stand for their
        run_name, which only counts when the file has no iterations of it."""
        return [n for n in self._order if self.samples(n)]

    def samples(self, name):
        """Iteration rows of one benchmark; the aggregates when no iterations exist
        (a run with --benchmark_report_aggregates_only keeps only those: its
        median is the best single value left)."""
        return list(self._iterations.get(name) or self._medians.get(name, []))


def machine_of(context):
    return str(context.get("xattn_machine") or "unknown-machine")


def commit_of(context):
    commit = context.get("xattn_commit")
    if not commit:
        return "nogit"
    commit = str(commit)
    dirty = context.get("xattn_dirty")
    if dirty in (True, 1, "1", "true", "yes") and not commit.endswith("-dirty"):
        commit += "-dirty"
    return commit


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# Context keys the tools compute with, and what each must be (Google Benchmark
# and xattn-bench write them so); any other type is refused by name, never
# crashes a tool later. Keys not listed are only displayed, as text.
CONTEXT_TYPES = {
    "num_cpus": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "load_avg": ("a list of numbers", lambda v: isinstance(v, list) and all(_is_number(x) for x in v)),
    "xattn_machine": ("a string", lambda v: isinstance(v, str)),
    "xattn_commit": ("a string", lambda v: isinstance(v, str)),
    "xattn_dirty": ("a boolean, 0/1 or a string", lambda v: isinstance(v, (bool, str)) or v in (0, 1)),
    "xattn_config_provenance": ("a string", lambda v: isinstance(v, str)),
    "xattn_label": ("a string", lambda v: isinstance(v, str)),
    "xattn_killed_run": ("a string", lambda v: isinstance(v, str)),
    "xattn_resume_key": ("a string", lambda v: isinstance(v, str)),
}


def validate_context(path, context):
    """Raise ResultsError (one line) unless context is an object whose keys of
    CONTEXT_TYPES have their types."""
    if not isinstance(context, dict):
        raise ResultsError("%s: not benchmark JSON ('context' is not an object)" % path)
    for key, (what, ok) in CONTEXT_TYPES.items():
        if key in context and not ok(context[key]):
            raise ResultsError("%s: context.%s is %s, expected %s"
                               % (path, key, json.dumps(context[key])[:60], what))


def _load_json(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            return json.load(f)
    except RecursionError:
        raise ResultsError("%s: JSON nested too deeply to read" % path)
    except FileNotFoundError:
        raise ResultsError("%s: no such file" % path)
    except IsADirectoryError:
        raise ResultsError("%s: is a directory, not a results file" % path)
    except UnicodeDecodeError:
        raise ResultsError("%s: not JSON (binary data)" % path)
    except json.JSONDecodeError as e:
        raise ResultsError("%s: not JSON (%s at line %d column %d)" % (path, e.msg, e.lineno, e.colno))
    except OSError as e:
        raise ResultsError("%s: cannot read (%s)" % (path, e.strerror))


def validate_benchmark_json(path, data):
    """Raise ResultsError unless data looks like Google Benchmark output."""
    if not isinstance(data, dict):
        raise ResultsError("%s: not benchmark JSON (top level is %s, expected an object)"
                           % (path, type(data).__name__))
    if data.get("schema") == COMPARE_SCHEMA:
        raise ResultsError("%s: is an xattn compare output, not a benchmark results file" % path)
    if "benchmarks" not in data or not isinstance(data["benchmarks"], list):
        raise ResultsError("%s: not benchmark JSON (no 'benchmarks' list)" % path)
    if "context" in data:
        validate_context(path, data["context"])
    for i, row in enumerate(data["benchmarks"]):
        if not isinstance(row, dict):
            raise ResultsError("%s: benchmarks[%d] is not an object" % (path, i))
        if not isinstance(row.get("name"), str):
            raise ResultsError("%s: benchmarks[%d] has no 'name' string" % (path, i))
        for key in ("run_name", "run_type", "aggregate_name"):  # names rows are grouped by
            if key in row and not isinstance(row[key], str):
                raise ResultsError("%s: benchmarks[%d] (%s): %s is not a string" % (path, i, row["name"], key))
        if row.get("error_occurred"):
            continue
        for key in ("real_time", "time_unit"):
            if key not in row:
                raise ResultsError("%s: benchmarks[%d] (%s) has no '%s'" % (path, i, row["name"], key))
        if not isinstance(row["real_time"], (int, float)) or isinstance(row["real_time"], bool):
            raise ResultsError("%s: benchmarks[%d] (%s): real_time is not a number" % (path, i, row["name"]))
        # a NaN time compares as neither slower nor faster and a time <= 0 as a
        # huge improvement: such a row is a broken measurement, never compared
        if not math.isfinite(row["real_time"]) or row["real_time"] <= 0:
            raise ResultsError("%s: benchmarks[%d] (%s): real_time %r is not a positive finite time"
                               % (path, i, row["name"], row["real_time"]))
        if not isinstance(row["time_unit"], str) or row["time_unit"] not in _TIME_UNIT_SECONDS:
            raise ResultsError("%s: benchmarks[%d] (%s): unknown time_unit %r"
                               % (path, i, row["name"], row["time_unit"]))


def load_results(path):
    """Load and validate one results file."""
    data = _load_json(path)
    validate_benchmark_json(path, data)
    rf = ResultFile(path, data)
    if not rf.rows:
        raise ResultsError("%s: no benchmark rows without errors" % path)
    return rf


def load_compare(path):
    """Load an xattn compare output (written by `xattn compare`)."""
    data = _load_json(path)
    if not isinstance(data, dict) or data.get("schema") != COMPARE_SCHEMA:
        raise ResultsError("%s: not an xattn compare output (schema %r)" % (path, COMPARE_SCHEMA))
    return data


def is_tune_report(data):
    """xattn-tune compare --json output (tune/src/tune_compare.c): the tuned header
    timed against a baseline header, per workload class."""
    return isinstance(data, dict) and isinstance(data.get("classes"), list) and "tuned_header" in data


def load_tune_report(path):
    data = _load_json(path)
    if not is_tune_report(data):
        raise ResultsError("%s: not an xattn-tune compare report (no 'classes' and 'tuned_header')" % path)
    return data


def classify_file(path):
    """'results', 'compare', 'tune-report', 'info' or None (not ours) for a JSON
    file, without raising."""
    try:
        data = _load_json(path)
    except ResultsError:
        return None
    if isinstance(data, dict) and data.get("schema") == COMPARE_SCHEMA:
        return "compare"
    if is_tune_report(data):
        return "tune-report"
    if isinstance(data, dict) and "config_header" in data and "isas" in data:
        return "info"  # `xattn info --json` (tune/release.sh stores one next to its results)
    try:
        validate_benchmark_json(path, data)
    except ResultsError:
        return None
    return "results"


def why_not_results(path):
    """Why load_results refuses path, in one line without the path (for the
    tools that skip such files and say why)."""
    try:
        load_results(path)
    except ResultsError as e:
        msg = str(e)
        return msg[len(path) + 2:] if msg.startswith(path + ": ") else msg
    return "not a benchmark results file"


def iter_json_files(paths):
    """Expand files and directories (recursively) into sorted JSON file paths.

    In a directory, hidden files are passed over: they are writers' temp files
    (`.tmp-STAMP-PID.json` of a running or killed xattn-bench run, whose
    complete benchmarks the next run publishes as `STAMP_<label>-killed.json`),
    never results; a file named on its own is read whatever its name."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                out.extend(os.path.join(root, f) for f in sorted(files)
                           if f.endswith(".json") and not f.startswith("."))
        else:
            out.append(p)
    return out


# ---- storing ----------------------------------------------------------------

def utc_stamp(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y%m%dT%H%M%SZ")


def _slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-") or "x"


def store_json(results_dir, machine, commit, label, data, stamp=None):
    """Write data to results/<machine>/<commit>/<stamp>_<label>.json atomically.

    The file is written to a temporary name in the same folder and then
    hard-linked to its final name, which fails instead of overwriting: an
    existing name gets a numeric suffix. A kill at any point leaves either no
    file or a complete one (plus possibly a stray temporary)."""
    folder = os.path.join(results_dir, _slug(machine), _slug(commit))
    os.makedirs(folder, exist_ok=True)
    stamp = stamp or utc_stamp()
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        for n in range(1000):
            suffix = "" if n == 0 else "-%d" % n
            final = os.path.join(folder, "%s_%s%s.json" % (stamp, _slug(label), suffix))
            try:
                os.link(tmp, final)
                return final
            except FileExistsError:
                continue
        raise ResultsError("%s: too many files named %s_%s" % (folder, stamp, label))
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def default_results_dir(cwd=None):
    """$XATTN_RESULTS_DIR, else results/ at the top of the git tree of cwd, else ./results."""
    env = os.environ.get("XATTN_RESULTS_DIR")
    if env:
        return env
    import subprocess
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, check=True,
                             capture_output=True, text=True).stdout.strip()
        if top:
            return os.path.join(top, "results")
    except (OSError, subprocess.CalledProcessError):
        pass
    return os.path.join(cwd or os.getcwd(), "results")
