"""Command-line options shared by the tools that build and run revisions
(`xattn compare`, `xattn history run`, `xattn bisect`), so that each means the
same everywhere."""


def add_run_options(p, reps=5, round_reps=3):
    """How xattn-bench is run: suite, rounds, repetitions, cores, filter."""
    p.add_argument("--suite", default="smoke", help="xattn-bench suite to run (default: smoke)")
    p.add_argument("--reps", type=int, default=reps, metavar="N",
                   help="rounds of runs (interleaved A B, B A, ... when two sides; default %d)" % reps)
    p.add_argument("--round-reps", type=int, default=round_reps, metavar="R",
                   help="repetitions of each round (xattn-bench --repetitions; default %d): "
                        "N*R samples a side" % round_reps)
    p.add_argument("--min-time", type=float, default=0.05, metavar="S",
                   help="--benchmark_min_time of each repetition in seconds (default 0.05; 0: bench default)")
    p.add_argument("--with-baselines", action="store_true",
                   help="also run the OpenBLAS, reference and peak rows (skipped by default: kernels only)")
    p.add_argument("--cores", metavar="LIST", help="pin the runs to these cores, e.g. 0,1")
    p.add_argument("--taskset", action="store_true",
                   help="pin with taskset -c instead of xattn-bench --placement cores=LIST")
    p.add_argument("--filter", metavar="REGEX", help="--benchmark_filter for the runs")
    p.add_argument("--bench-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for xattn-bench (repeatable)")


def add_build_options(p):
    """How revisions are built: CMake arguments, parallelism, the work folder."""
    p.add_argument("--cmake-arg", action="append", default=[], metavar="ARG",
                   help="extra CMake argument for building revisions, e.g. "
                        "--cmake-arg=-DXATTN_VARIANTS='64x64;16x256' (repeatable)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="build parallelism (default 2)")
    p.add_argument("--work-dir", help="worktrees and builds of revisions (default <repo>/build-compare; "
                                      "shared by compare, history run and bisect)")


def add_test_options(p):
    """The statistics of a comparison: threshold and significance level."""
    p.add_argument("--threshold", type=float, default=5.0, metavar="PCT",
                   help="slower by more than PCT %% (and significant) is a regression (default 5)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the U test (default 0.05)")


def check_run_options(p, a):
    if a.reps < 1 or a.round_reps < 1:
        p.error("--reps and --round-reps must be at least 1")


def check_test_options(p, a):
    if a.threshold < 0 or not 0 < a.alpha < 1:
        p.error("--threshold must be >= 0 and --alpha in (0, 1)")


def run_settings(a):
    """The runner keyword arguments of parsed run options."""
    return {"suite": a.suite, "rounds": a.reps, "reps": a.round_reps, "cores": a.cores, "taskset": a.taskset,
            "filter": a.filter, "bench_args": a.bench_arg, "min_time": a.min_time, "baselines": a.with_baselines,
            "cmake_args": a.cmake_arg, "jobs": a.jobs}
