#!/usr/bin/python3
"""ctest `peers.alignment`: which causal alignment each peer applies when the
extend is shorter than the sequence, with and without a cache, judged against
xattn's fp64 reference (`xattn run CASE --reference-f64`) for bottom-right and
top-left; and the cross-check: given the right mask, both peers agree with the
reference within docs/contract.md §3 tolerances, batch with mixed prefixes, GQA,
causal / windowed / bidirectional, f32 and bf16 (torch; ORT has no CPU bf16).

  check_peers_alignment.py --xattn PATH/TO/xattn [--keep DIR]   (PYTHONPATH=python)

Exit 77 (ctest SKIP_RETURN_CODE) when the venv of scripts/make-venv.sh is absent.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from xattn.peers import peers_env  # standard library only: imports before the venv check

# The finding this test asserts (README.md), per (peer, how it is called):
EXPECTED = {
    ("torch", "is_causal"): "top_left",      # is_causal=True, q_len < kv_len
    ("torch", "lower_right"): "bottom_right",  # attn_mask=causal_lower_right(E, S)
    ("torch", "explicit"): "bottom_right",   # boolean mask of docs/contract.md §2
    ("ort", "no_past"): "top_left",          # is_causal=1, full K/V, no cache
    ("ort", "past"): "bottom_right",         # is_causal=1, prefix as past_key/past_value
    ("ort", "explicit"): "bottom_right",     # boolean attn_mask, is_causal=0
}


class Case:
    """A case folder written by make_case.py, its reference, and the peers' view of it."""

    def __init__(self, mc, xattn, root, tag, **kw):
        import numpy as np
        self.np = np
        self.dir = mc.make_case(os.path.join(root, tag), **kw)
        ref_path = os.path.join(self.dir, "ref.npy")
        proc = subprocess.run([xattn, "run", self.dir, "--reference-f64", "-o", ref_path],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            sys.exit(f"FAIL: xattn run {self.dir} --reference-f64: {proc.stdout.strip()}")
        self.ref = np.load(ref_path)
        self.case, self.a = mc.load_case(self.dir)
        c = self.case
        self.dtype = c["dtype"]
        self.tolerances = mc.TOLERANCES[self.dtype]
        self.w = {"name": tag, "requests": [[p, e, 0] for p, e in zip(c["prefix_lens"], c["extend_lens"])],
                  "heads_q": c["heads_q"], "heads_kv": c["heads_kv"], "head_dim": c["head_dim"],
                  "head_dim_v": c["head_dim_v"], "mode": c["mode"], "align": c["align"],
                  "window": c["window"], "logit_cap": c["logit_cap"], "sinks": c["has_sinks"],
                  "scale": c["scale"]}
        self.starts = np.concatenate([[0], np.cumsum(c["extend_lens"])]).astype(int)

    def arrays(self, b):
        """Request b's (q, k, v) in the peers' layout, gathered from the case."""
        np, a = self.np, self.a
        p, e, _ = self.w["requests"][b]
        s0 = self.starts[b]
        slots = a["req_to_token"][a["req_index"][b], :p]
        k = np.concatenate([a["k_cache"][slots], a["k_ext"][s0:s0 + e]])
        v = np.concatenate([a["v_cache"][slots], a["v_ext"][s0:s0 + e]])
        q = a["q"][s0:s0 + e]
        return tuple(np.ascontiguousarray(x.transpose(1, 0, 2)[None]).astype(np.float32) for x in (q, k, v))

    def packed(self, outs):
        """Per-request peer outputs [1, H_Q, E, DV] -> [T, H_Q, DV] float64."""
        np = self.np
        return np.concatenate([np.asarray(o, dtype=np.float64)[0].transpose(1, 0, 2) for o in outs])

    def within(self, o, ref):
        atol, rtol = self.tolerances
        return bool((self.np.abs(o - ref) <= atol + rtol * self.np.abs(ref)).all())


def peer_output(mods, impl, case, dtype, how):
    import torch
    out = mods[impl].prepare(case.w, dtype, 1, case.arrays, how=how)()
    return case.packed([o.float().numpy() if isinstance(o, torch.Tensor) else o.astype("float32") for o in out])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xattn", required=True)
    ap.add_argument("--keep", help="write the cases here and keep them")
    args = ap.parse_args(argv)
    peers_env.ensure("peers.alignment")
    import numpy as np
    from xattn.peers import peer_ort, peer_torch
    mods = {"torch": peer_torch, "ort": peer_ort}
    from xattn.cases import make_case as mc  # numpy: after the venv check
    failures = []
    with tempfile.TemporaryDirectory(prefix="xattn-peers-align-") as tmp:
        root = args.keep or tmp
        # 1. Alignment: one request, E = 4 < S = 10; the same data read bottom-right and top-left.
        shape = dict(heads_q=4, heads_kv=2, head_dim=16, prefix=[6], extend=[4], seed=11)
        br = Case(mc, args.xattn, root, "align-br", align="bottom_right", **shape)
        tl = Case(mc, args.xattn, root, "align-tl", align="top_left", **shape)
        if not np.array_equal(br.a["q"], tl.a["q"]) or not np.array_equal(br.a["k_cache"], tl.a["k_cache"]):
            sys.exit("FAIL: make_case gave the two alignments different data")
        if br.within(tl.ref, br.ref):
            sys.exit("FAIL: bottom-right and top-left references agree: this case cannot tell them apart")
        print("peer   call          alignment (E=4 < S=10)")
        for (impl, how), want in EXPECTED.items():
            o = peer_output(mods, impl, br, "f32", how)
            got = ("bottom_right" if br.within(o, br.ref) else
                   "top_left" if br.within(o, tl.ref) else "neither")
            print(f"{impl:6} {how:13} {got}{'' if got == want else f'   (expected {want})'}")
            if got != want:
                failures.append(f"{impl} {how}: {got}, expected {want}")
        # 2. Cross-check: what run_peers times ('auto' mask) equals the reference.
        mix = dict(heads_q=8, heads_kv=2, head_dim=32, prefix=[0, 5, 9, 3], extend=[7, 3, 2, 6], seed=5)
        checks = [("f32", "causal", [-1, -1]), ("f32", "causal", [3, 0]), ("f32", "bidirectional", [-1, -1]),
                  ("bf16", "causal", [-1, -1])]
        print("cross-check (batch P=0,5,9,3 E=7,3,2,6, H_Q=8 H_KV=2 D=32):")
        for dtype, mode, window in checks:
            case = Case(mc, args.xattn, root, f"mix-{dtype}-{mode}-{window[0]}", dtype=dtype, mode=mode,
                        window=tuple(window), **mix)
            for impl in ("torch", "ort"):
                try:
                    o = peer_output(mods, impl, case, dtype, "auto")
                except mods[impl].Unsupported as exc:
                    print(f"  {impl:6} {dtype:5} {mode:13} window={window}: unsupported ({str(exc)[:60]}...)")
                    if not (impl == "ort" and dtype == "bf16"):
                        failures.append(f"{impl} {dtype} {mode}: unsupported: {exc}")
                    continue
                err = float(np.max(np.abs(o - case.ref)))
                ok = case.within(o, case.ref)
                print(f"  {impl:6} {dtype:5} {mode:13} window={window}: max |o-ref| {err:.2e} {'ok' if ok else 'FAIL'}")
                if not ok:
                    failures.append(f"{impl} {dtype} {mode} window={window}: max |o-ref| {err:.2e}")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    print("peers.alignment: all findings hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
