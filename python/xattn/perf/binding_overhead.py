"""What the Python binding adds to a call: `python3 -m xattn binding-overhead`.

Times, interleaved in one run (medians over --reps rounds, each round one
call of each kind), on a decode-sized call (B = 1, P = --prefix, E = 1, the
reference shape H_Q 32 / H_KV 8 / D 128, f32, NumPy arrays):
  python  xattn.extend_attention(...) as a user calls it (argument checks,
          filling the C struct from the arrays, the call);
  c       xattn_extend_attention on a struct filled once (the C call plus one
          dispatch of the binding's C module: _xattn_call.run_prepared);
  noop    one ctypes dispatch of a trivial library function (xattn_isa_count).
The binding's overhead over the C call is python - c; the C call alone is
about c - noop. --clock cpu times this thread's CPU time instead of wall time
(use it on a shared machine: being descheduled does not count). --tensors torch
passes the same arrays as torch CPU tensors (torch.from_numpy: same memory) to
the python figure. Prints one line per figure and the overhead.
"""
import argparse
import statistics
import sys
import time


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", type=int, default=4096)
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
    print(f"binding overhead over the C call: {med['python'] - med['c']:.2f} us "
          f"(decode B=1 P={P} E=1, H_Q {hq} H_KV {hkv} D {d}, f32 {a.tensors}, {a.threads} thread(s), {a.clock} clock)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
