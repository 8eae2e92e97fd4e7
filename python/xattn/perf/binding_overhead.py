"""What the Python binding adds to a call: `python3 -m xattn binding-overhead`.

Times, interleaved in one run (medians over --reps rounds, each round one
call of each kind), on a decode-sized call (B = 1, P = --prefix, E = 1, the
reference shape H_Q 32 / H_KV 8 / D 128, f32, NumPy arrays):
  python  xattn.extend_attention(...) as a user calls it (argument checks,
          filling the C struct from the arrays, the call);
  c       xattn_extend_attention on a struct filled once (the C call plus one
          dispatch of the binding's C module: _xattn_call.run_prepared);
  noop    one ctypes dispatch of a trivial library function (xattn_isa_count).
The binding's overhead over the C call is python - c, taken per round (the
two calls of a round run back to back, so a slow moment of a shared machine
slows both) and reported as the median of those differences with their
interquartile range; the C call alone is about c - noop. The default prefix
is 64 keys: with thousands the kernel's own time (milliseconds) varies by
more than the binding costs, and the difference reads noise (P 4096 on a
2-core VM: 45-88 us, where P 64 reads 3 us). --clock cpu times this
thread's CPU time instead of wall time (use it on a shared machine: being
descheduled does not count). --tensors torch
passes the same arrays as torch CPU tensors (torch.from_numpy: same memory) to
the python figure. Prints one line per figure and the overhead.
"""
import argparse
import statistics
import sys
import time


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", type=int, default=64)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: this thread's CPU time (time.thread_time_ns), which a loaded machine's "
                         "preemptions do not inflate; with --threads 1 the kernel runs on this thread")
    ap.add_argument("--tensors", choices=["numpy", "torch"], default="numpy",
                    help="what the python figure passes (torch: the peers' venv, scripts/make-venv.sh)")
    a = ap.parse_args(argv)
    clock = time.perf_counter_ns if a.clock == "wall" else time.thread_time_ns
    import numpy as np

    from xattn import api
    rng = np.random.default_rng(0)
    hq, hkv, d, P = 32, 8, 128, a.prefix
    q = rng.standard_normal((1, hq, d), dtype=np.float32)
    k = rng.standard_normal((1, hkv, d), dtype=np.float32)
    v = rng.standard_normal((1, hkv, d), dtype=np.float32)
    kc = rng.standard_normal((P, hkv, d), dtype=np.float32)
    vc = rng.standard_normal((P, hkv, d), dtype=np.float32)
    table = rng.permutation(P).astype(np.int32).reshape(1, P)
    table = np.concatenate([table, np.zeros((1, 1), np.int32)], axis=1)
    out = np.zeros((1, hq, d), np.float32)
    args = (q, k, v, kc, vc, table, np.zeros(1, np.int64), np.array([P], np.int32), np.ones(1, np.int32))
    kw = dict(out=out, threads=a.threads)
    call_args, call_kw = args, kw
    if a.tensors == "torch":
        import torch
        call_args = tuple(torch.from_numpy(x) for x in args)
        call_kw = dict(kw, out=torch.from_numpy(out))

    run, problem = api._prepare(*args, **kw)
    noop = api._load().xattn_isa_count

    def t_python():
        t = clock()
        api.extend_attention(*call_args, **call_kw)
        return clock() - t

    def t_c():
        t = clock()
        run(problem)
        return clock() - t

    def t_noop():
        t = clock()
        noop()
        return clock() - t

    for f in (t_python, t_c, t_noop):  # warm up
        for _ in range(50):
            f()
    res = {"python": [], "c": [], "noop": []}
    for _ in range(a.reps):
        res["python"].append(t_python())
        res["c"].append(t_c())
        res["noop"].append(t_noop())
    med = {k: statistics.median(v) / 1e3 for k, v in res.items()}
    for k in ("python", "c", "noop"):
        print(f"{k:7s} median {med[k]:9.2f} us over {a.reps} calls")
    diff = sorted(p - c for p, c in zip(res["python"], res["c"]))
    q1, q2, q3 = (diff[int(f * (len(diff) - 1))] / 1e3 for f in (0.25, 0.5, 0.75))
    print(f"binding overhead over the C call: {q2:.2f} us [interquartile {q1:.2f} to {q3:.2f}] "
          f"(decode B=1 P={P} E=1, H_Q {hq} H_KV {hkv} D {d}, f32 {a.tensors}, {a.threads} thread(s), {a.clock} clock)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
