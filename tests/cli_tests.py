#!/usr/bin/python3
"""Tests of the `xattn` command.

    cli_tests.py --bin BUILD/bin malformed   every malformed case is refused with exit 1 and
                                             exactly one stderr line naming the file/field
    cli_tests.py --bin BUILD/bin oracle      `xattn run` agrees with the numpy oracle
                                             (python/xattn/cases/oracle.py) and so does the fp64 reference
    cli_tests.py --bin BUILD/bin commands    info, usage errors, git-style external commands
    cli_tests.py --bin BUILD/bin paths       -o onto a FIFO, symlink or the case's own inputs, and
                                             FIFOs as inputs, are refused (not replaced, no hang)

Any sanitizer report on stderr fails the test. Prints one line per check and a count.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

FAILS = []
COUNT = [0]


def check(cond, what):
    COUNT[0] += 1
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(cmd, env=None):
    # errors="strict": a tool that copies raw non-UTF-8 bytes to stderr fails the test
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, errors="strict")
    sanitizer = "Sanitizer" in p.stderr or "runtime error:" in p.stderr
    if sanitizer:
        print(p.stderr)
    return p.returncode, p.stdout, p.stderr, sanitizer


# ---- malformed cases ---------------------------------------------------------
def npy_bytes(arr, version=(1, 0)):
    import io
    from numpy.lib import format as fmt
    b = io.BytesIO()
    fmt.write_array(b, np.asarray(arr), version=version)
    return b.getvalue()


def raw_npy(header, data=b"", version=(1, 0), pad=True):
    """A .npy file with a hand-written header dict."""
    h = header
    if pad:
        h += " " * ((64 - (10 + len(h) + 1) % 64) % 64)
    h += "\n"
    hb = h.encode("latin1")
    return b"\x93NUMPY" + bytes(version) + len(hb).to_bytes(2, "little") + hb + data


def set_strides(d, name, value):
    with open(os.path.join(d, "case.json")) as f:
        strides = json.load(f)["strides"]
    strides[name] = value
    edit_json(d, strides=strides)


def edit_json(d, **changes):
    p = os.path.join(d, "case.json")
    with open(p) as f:
        c = json.load(f)
    for k, v in changes.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    with open(p, "w") as f:
        json.dump(c, f)


def append(d, name, data):
    with open(os.path.join(d, name), "ab") as f:
        f.write(data)


def duplicate_key(d, key, value):
    """case.json with `key` a second time (json.dump cannot write that)."""
    p = os.path.join(d, "case.json")
    with open(p) as f:
        text = f.read().rstrip()
    with open(p, "w") as f:
        f.write(text[:-1] + ', "%s": "%s"}' % (key, value))


def raw_key(d, key_bytes):
    p = os.path.join(d, "case.json")
    with open(p, "rb") as f:
        text = f.read().rstrip()
    with open(p, "wb") as f:
        f.write(text[:-1] + b', "' + key_bytes + b'": 1}')


def write(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def load(d, name):
    return np.load(os.path.join(d, name))


def malformed(bindir, tmp):
    from xattn.cases import make_case
    xattn = os.path.join(bindir, "xattn")
    base = {
        "causal": make_case.make_case(os.path.join(tmp, "base_causal"), "f32", "causal",
                                      prefix=[4, 0], extend=[3, 5], sinks=True),
        "tree": make_case.make_case(os.path.join(tmp, "base_tree"), "bf16", "tree",
                                    prefix=[2, 6], extend=[4, 3]),
        "cross": make_case.make_case(os.path.join(tmp, "base_cross"), "f16", "cross",
                                     prefix=[0, 3], extend=[2, 2], encoder=[5, 3],
                                     index_type="int64"),
        "paged": make_case.make_case(os.path.join(tmp, "base_paged"), "f32", "causal", prefix=[9, 5],
                                     extend=[2, 3], page_size=4, cache_layout="head_major", start_cols=True),
        "strided": make_case.make_case(os.path.join(tmp, "base_strided"), "f32", "causal", prefix=[3, 2],
                                       extend=[2, 3], page_size=2, strided=True),
    }

    def slot_table(d):
        return load(d, "req_to_token.npy"), load(d, "req_index.npy")

    def bad_slot(d):
        t, r = slot_table(d)
        t[r[0], 1] = 10 ** 6  # request 0 has P = 4: entry 1 is read
        np.save(os.path.join(d, "req_to_token.npy"), t)

    def bad_req_index(d):
        t, r = slot_table(d)
        r[0] = t.shape[0]
        np.save(os.path.join(d, "req_index.npy"), r)

    def tree_value_2(d):
        b = bytearray(open(os.path.join(d, "tree_mask.npy"), "rb").read())
        b[-1] = 2
        write(d, "tree_mask.npy", bytes(b))

    q_f32 = lambda d: load(d, "q.npy")  # noqa: E731
    # (name, base, mutation, substring the one line must contain)
    cases = [
        ("missing q.npy", "causal", lambda d: os.remove(os.path.join(d, "q.npy")), "q.npy"),
        ("missing case.json", "causal", lambda d: os.remove(os.path.join(d, "case.json")), "case.json"),
        ("missing v_cache.npy", "cross", lambda d: os.remove(os.path.join(d, "v_cache.npy")), "v_cache.npy"),
        ("case folder missing", "causal", lambda d: shutil.rmtree(d), "case.json"),
        ("bad JSON", "causal", lambda d: write(d, "case.json", b'{"dtype": "f32", "heads_q": '), "case.json"),
        ("JSON not an object", "causal", lambda d: write(d, "case.json", b"[1, 2]"), "case.json"),
        ("empty case.json", "causal", lambda d: write(d, "case.json", b""), "case.json"),
        ("unknown key", "causal", lambda d: edit_json(d, windw=[1, 2]), "windw"),
        ("missing heads_q", "causal", lambda d: edit_json(d, heads_q=None), "heads_q"),
        ("heads_q a string", "causal", lambda d: edit_json(d, heads_q="4"), "heads_q"),
        ("heads_q 4.5", "causal", lambda d: edit_json(d, heads_q=4.5), "heads_q"),
        ("heads_kv 0", "causal", lambda d: edit_json(d, heads_kv=0), "heads_kv"),
        ("head_dim -16", "causal", lambda d: edit_json(d, head_dim=-16), "head_dim"),
        ("unknown dtype", "causal", lambda d: edit_json(d, dtype="f8"), "dtype"),
        ("unknown mode", "causal", lambda d: edit_json(d, mode="sliding"), "mode"),
        ("unknown align", "causal", lambda d: edit_json(d, align="middle"), "align"),
        ("window of one value", "causal", lambda d: edit_json(d, window=[1]), "window"),
        ("window -3", "causal", lambda d: edit_json(d, window=[-3, -1]), "window_left"),
        ("negative extend length", "causal", lambda d: edit_json(d, extend_lens=[3, -5]), "extend_lens[1]"),
        ("negative prefix length", "causal", lambda d: edit_json(d, prefix_lens=[-4, 0]), "prefix_lens[0]"),
        ("extend_lens too short", "causal", lambda d: edit_json(d, extend_lens=[3]), "extend_lens"),
        ("P + E > max_ctx", "causal", lambda d: edit_json(d, prefix_lens=[40, 0]), "prefix_lens[0]"),
        ("has_sinks not a bool", "causal", lambda d: edit_json(d, has_sinks="yes"), "has_sinks"),
        ("encoder_lens outside cross", "causal", lambda d: edit_json(d, encoder_lens=[1, 1]), "encoder_lens"),
        ("cross without encoder_lens", "cross", lambda d: edit_json(d, encoder_lens=None), "encoder_lens"),
        ("negative encoder length", "cross", lambda d: edit_json(d, encoder_lens=[5, -3]), "encoder_lens[1]"),
        ("q float64", "causal", lambda d: np.save(os.path.join(d, "q.npy"), q_f32(d).astype(np.float64)), "q.npy"),
        ("bf16 case with f32 q", "tree", lambda d: np.save(os.path.join(d, "q.npy"),
                                                           load(d, "q.npy").astype(np.float32)), "q.npy"),
        ("f16 case with bf16 bits", "cross", lambda d: np.save(os.path.join(d, "k_ext.npy"),
                                                               load(d, "k_ext.npy").view(np.uint16)), "k_ext.npy"),
        ("k_ext wrong head_dim", "causal", lambda d: np.save(os.path.join(d, "k_ext.npy"),
                                                             load(d, "k_ext.npy")[:, :, :-1]), "k_ext.npy"),
        ("q wrong T", "causal", lambda d: np.save(os.path.join(d, "q.npy"), q_f32(d)[:-1]), "q.npy"),
        ("q 2-D", "causal", lambda d: np.save(os.path.join(d, "q.npy"), q_f32(d).reshape(q_f32(d).shape[0], -1)), "q.npy"),
        ("v_cache slots differ from k_cache", "causal", lambda d: np.save(os.path.join(d, "v_cache.npy"),
                                                                          load(d, "v_cache.npy")[:-1]), "v_cache.npy"),
        ("v_ext wrong heads", "cross", lambda d: np.save(os.path.join(d, "v_ext.npy"),
                                                         np.concatenate([load(d, "v_ext.npy")] * 2, axis=1)), "v_ext.npy"),
        ("req_to_token 1-D", "causal", lambda d: np.save(os.path.join(d, "req_to_token.npy"),
                                                         load(d, "req_to_token.npy").ravel()), "req_to_token.npy"),
        ("req_to_token float", "causal", lambda d: np.save(os.path.join(d, "req_to_token.npy"),
                                                           load(d, "req_to_token.npy").astype(np.float32)), "req_to_token.npy"),
        ("req_index wrong length", "causal", lambda d: np.save(os.path.join(d, "req_index.npy"),
                                                               load(d, "req_index.npy")[:1]), "req_index.npy"),
        ("req_index out of range", "causal", bad_req_index, "req_index[0]"),
        ("slot out of range", "causal", bad_slot, "req_to_token"),
        ("sinks missing", "causal", lambda d: os.remove(os.path.join(d, "sinks.npy")), "sinks.npy"),
        ("sinks wrong length", "causal", lambda d: np.save(os.path.join(d, "sinks.npy"),
                                                           load(d, "sinks.npy")[:-1]), "sinks.npy"),
        ("sinks float64", "causal", lambda d: np.save(os.path.join(d, "sinks.npy"),
                                                      load(d, "sinks.npy").astype(np.float64)), "sinks.npy"),
        ("tree_mask missing", "tree", lambda d: os.remove(os.path.join(d, "tree_mask.npy")), "tree_mask.npy"),
        ("tree_mask uint8", "tree", lambda d: np.save(os.path.join(d, "tree_mask.npy"),
                                                      load(d, "tree_mask.npy").astype(np.uint8)), "tree_mask.npy"),
        ("tree_mask smaller than max E", "tree", lambda d: np.save(os.path.join(d, "tree_mask.npy"),
                                                                   load(d, "tree_mask.npy")[:, :-1, :-1]), "tree_mask.npy"),
        ("tree_mask not square", "tree", lambda d: np.save(os.path.join(d, "tree_mask.npy"),
                                                           load(d, "tree_mask.npy")[:, :, :-1]), "tree_mask.npy"),
        ("tree_mask byte 2", "tree", tree_value_2, "tree_mask.npy"),
        ("H_Q % H_KV != 0", None, lambda d: make_case.make_case(d, heads_q=3, heads_kv=2), "heads_q"),
        # .npy format
        ("truncated q.npy", "causal", lambda d: write(d, "q.npy", npy_bytes(q_f32(d))[:-10]), "q.npy"),
        ("trailing bytes in q.npy", "causal", lambda d: write(d, "q.npy", npy_bytes(q_f32(d)) + b"\0" * 4), "q.npy"),
        ("empty q.npy", "causal", lambda d: write(d, "q.npy", b""), "q.npy"),
        ("q.npy header cut", "causal", lambda d: write(d, "q.npy", npy_bytes(q_f32(d))[:40]), "q.npy"),
        ("q.npy bad magic", "causal", lambda d: write(d, "q.npy", b"\x93NUMPZ" + npy_bytes(q_f32(d))[6:]), "q.npy"),
        ("q.npy version 4.0", "causal", lambda d: write(d, "q.npy", npy_bytes(q_f32(d))[:6] + b"\x04\x00" +
                                                        npy_bytes(q_f32(d))[8:]), "q.npy"),
        ("q.npy fortran order", "causal", lambda d: write(d, "q.npy", npy_bytes(np.asfortranarray(q_f32(d)))), "q.npy"),
        ("q.npy big-endian", "causal", lambda d: write(d, "q.npy", npy_bytes(q_f32(d).astype(">f4"))), "q.npy"),
        ("q.npy negative dim", "causal", lambda d: write(d, "q.npy", raw_npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (8, -4, 16), }")), "q.npy"),
        ("q.npy shape not a tuple", "causal", lambda d: write(d, "q.npy", raw_npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': 8, }")), "q.npy"),
        ("q.npy huge shape", "causal", lambda d: write(d, "q.npy", raw_npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4, 16), }")), "q.npy"),
        ("q.npy header without shape", "causal", lambda d: write(d, "q.npy", raw_npy(
            "{'descr': '<f4', 'fortran_order': False, }")), "q.npy"),
        ("q.npy duplicate key", "causal", lambda d: write(d, "q.npy", raw_npy(
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (8, 4, 16), }")), "q.npy"),
        ("q.npy header length past the file", "causal", lambda d: write(d, "q.npy", b"\x93NUMPY\x01\x00\xff\xff{"), "q.npy"),
        ("q.npy object dtype", "causal", lambda d: write(d, "q.npy", raw_npy(
            "{'descr': '|O', 'fortran_order': False, 'shape': (8, 4, 16), }")), "q.npy"),
        ("q.npy unknown header key", "causal", lambda d: write(d, "q.npy", raw_npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 4, 16), 'align': 64, }")), "q.npy"),
        ("req_index float", "causal", lambda d: np.save(os.path.join(d, "req_index.npy"),
                                                        load(d, "req_index.npy").astype(np.float64)), "req_index.npy"),
        ("q.npy is a directory", "causal", lambda d: (os.remove(os.path.join(d, "q.npy")),
                                                      os.mkdir(os.path.join(d, "q.npy"))), "q.npy"),
        # KV-cache storage keys
        ("cache_layout unknown", "paged", lambda d: edit_json(d, cache_layout="diagonal"), "cache_layout"),
        ("page_size 0", "paged", lambda d: edit_json(d, page_size=0), "page_size"),
        ("paged cache with the wrong page", "paged", lambda d: edit_json(d, page_size=8), "k_cache.npy"),
        ("req_start_col negative", "paged", lambda d: edit_json(d, req_start_col=[0, -1]), "req_start_col[1]"),
        ("req_start_col wrong length", "paged", lambda d: edit_json(d, req_start_col=[0]), "req_start_col"),
        ("req_start_col past the table", "paged", lambda d: edit_json(d, req_start_col=[0, 10 ** 6]), "prefix_lens[1]"),
        ("strides unknown tensor", "strided", lambda d: set_strides(d, "o", [1, 1]), "strides"),
        ("strides too few", "strided", lambda d: set_strides(d, "q", [64]), "strides.q"),
        ("strided file too short", "strided", lambda d: np.save(os.path.join(d, "q.npy"), load(d, "q.npy")[:100]),
         "q.npy"),
        ("strided heads overlap", "strided", lambda d: set_strides(d, "q", [100, 3]), "q: strides"),
        ("strided cache without cache_slots", "strided", lambda d: edit_json(d, cache_slots=None), "cache_slots"),
        ("k_ext missing outside cross mode", "causal", lambda d: os.remove(os.path.join(d, "k_ext.npy")), "k_ext.npy"),
        # issue 12 item 8: lenient parsing
        ("case.json trailing garbage", "causal", lambda d: append(d, "case.json", b" }x"), "trailing data"),
        ("case.json duplicate key", "causal", lambda d: duplicate_key(d, "dtype", "f16"), "duplicate key 'dtype'"),
        ("logit_cap below the float range", "causal", lambda d: edit_json(d, logit_cap=1e-46), "logit_cap"),
        ("scale above the float range", "causal", lambda d: edit_json(d, scale=1e39), "scale"),
        ("non-UTF-8 key", "causal", lambda d: raw_key(d, b"\xff\xfe\x1b[31m"), "\\xff\\xfe\\x1b"),
    ]
    for i, (name, b, mutate, want) in enumerate(cases):
        d = os.path.join(tmp, f"bad{i}")
        if b is not None:
            shutil.copytree(base[b], d)
        mutate(d)
        rc, out, err, san = run([xattn, "run", d])
        lines = err.splitlines()
        ok = rc == 1 and len(lines) == 1 and want in lines[0] and not san and \
            not os.path.exists(os.path.join(d, "o.npy"))
        check(ok, f"malformed: {name}: exit {rc}, stderr {err.strip()!r}" + ("" if ok else f" (want '{want}')"))

    # the strictness must not refuse valid files: .npy versions 2.0 and 3.0, int32 req_index
    for ver in ((2, 0), (3, 0)):
        d = os.path.join(tmp, f"good_v{ver[0]}")
        shutil.copytree(base["causal"], d)
        for name in ("q", "k_ext", "req_to_token"):
            write(d, name + ".npy", npy_bytes(load(d, name + ".npy"), version=ver))
        np.save(os.path.join(d, "req_index.npy"), load(d, "req_index.npy").astype(np.int32))
        rc, out, err, san = run([xattn, "run", d])
        check(rc == 0 and not san and os.path.exists(os.path.join(d, "o.npy")),
              f"valid: .npy version {ver[0]}.0 and int32 req_index accepted (exit {rc} {err.strip()!r})")


# ---- numpy oracle ---------------------------------------------------------------
def oracle(bindir, tmp):
    from xattn.cases import make_case
    xattn = os.path.join(bindir, "xattn")
    info = json.loads(run([xattn, "info", "--json"])[1])
    problems = [
        dict(dtype="f32", mode="causal", prefix=[0, 5, 9], extend=[7, 3, 0], sinks=True),
        dict(dtype="bf16", mode="causal", align="top_left", prefix=[4, 0], extend=[6, 2], window=(2, 0)),
        dict(dtype="f16", mode="bidirectional", prefix=[3, 0], extend=[5, 9], cap=2.0, scale=1.5),
        dict(dtype="f32", mode="cross", prefix=[0, 2, 1], extend=[3, 4, 2], encoder=[6, 0, 3],
             index_type="int64", window=(1, 1)),
        dict(dtype="bf16", mode="tree", prefix=[8, 0], extend=[5, 7], sinks=True, tree_density=0.4),
        dict(dtype="f32", mode="causal", heads_q=4, heads_kv=1, head_dim=40, head_dim_v=24,
             prefix=[33, 0], extend=[1, 17], window=(5, -1)),
        dict(dtype="f16", mode="tree", heads_q=2, heads_kv=2, head_dim=8, prefix=[0], extend=[6],
             window=(1, 1), tree_density=0.8),
        # KV-cache storages: paged blocks in both layouts, table start columns, strides, no k_ext in cross
        dict(dtype="bf16", mode="causal", prefix=[37, 0, 5], extend=[3, 6, 1], page_size=16,
             start_cols=True),
        dict(dtype="f32", mode="tree", prefix=[9, 20], extend=[4, 2], page_size=4, cache_layout="head_major",
             start_cols=True, strided=True),
        dict(dtype="f16", mode="causal", prefix=[6, 1], extend=[2, 5], strided=True, window=(3, -1)),
        dict(dtype="f32", mode="cross", prefix=[0, 0], extend=[3, 2], encoder=[7, 4], start_cols=True,
             no_ext=True),
        # fp8 caches: tensor scales, per-token-per-head scales, paged
        dict(dtype="bf16", mode="causal", prefix=[21, 3], extend=[2, 4], cache_dtype="e4m3fn", kv_scales=True),
        dict(dtype="f32", mode="bidirectional", prefix=[17, 0], extend=[3, 5], cache_dtype="e5m2", page_size=8,
             cache_layout="head_major", kv_scales=True, window=(6, 2)),
    ]
    runs = [[]] + [["--isa", i] for i in info["isas"]] + \
        [["--variant", v, "--layout", info["layouts"][k % len(info["layouts"])], "--threads", str(1 + k % 3)]
         for k, v in enumerate(info["variants"])]
    from xattn.cases import oracle as case_oracle
    oracle_cmd = os.path.join(bindir, "xattn-oracle")
    for k, pr in enumerate(problems):
        d = make_case.make_case(os.path.join(tmp, f"case{k}"), seed=100 + k, **pr)
        desc = f"case{k} {pr['mode']} {pr['dtype']}"
        case, arrays = make_case.load_case(d)
        want = case_oracle.oracle(case, arrays)
        atol, rtol = make_case.TOLERANCES[pr["dtype"]]
        # the library's fp64 reference against the numpy oracle, through the installed command
        rc, out, err, san = run([xattn, "run", d, "--reference-f64", "-o", os.path.join(d, "ref.npy")])
        check(rc == 0 and not san, f"oracle: {desc}: reference ran ({err.strip()})")
        rc, out, err, san = run([oracle_cmd, d, "--check", os.path.join(d, "ref.npy"), "--tight"])
        check(rc == 0, f"oracle: {desc}: xattn_reference == numpy oracle to 1e-9: {(out + err).strip()}")
        # the kernels under every ISA, every variant (layouts and threads rotating)
        worst, failed = 0.0, []
        for opts in runs[:: 1 if k < 2 else 5]:
            o = os.path.join(d, "o.npy")
            if os.path.exists(o):
                os.remove(o)
            rc, out, err, san = run([xattn, "run", d] + opts)
            if rc != 0 or san:
                failed.append(f"{' '.join(opts)}: run failed: {err.strip()}")
                continue
            got = np.load(o)
            q = np.load(os.path.join(d, "q.npy"))
            if got.dtype != q.dtype or got.shape != want.shape:
                failed.append(f"{' '.join(opts)}: o.npy {got.dtype} {got.shape}, want {q.dtype} {want.shape}")
                continue
            ratio = np.abs(make_case.to_f64(got, pr["dtype"]) - want) / (atol + rtol * np.abs(want))
            r = float(np.nan_to_num(ratio, nan=np.inf).max(initial=0.0))
            worst = max(worst, r)
            if not r <= 1.0:
                failed.append(f"{' '.join(opts)}: |err|/tol {r:.3g}")
        check(not failed, f"oracle: {desc}: xattn run == numpy oracle under "
              f"{len(runs[:: 1 if k < 2 else 5])} option sets (worst |err|/tol {worst:.3g}) {failed[:3]}")
        if k == 0:  # the checking command itself, on a kernel output
            rc, out, err, san = run([oracle_cmd, d, "--check", os.path.join(d, "o.npy")])
            check(rc == 0, f"oracle: xattn-oracle --check accepts a kernel output: {(out + err).strip()}")
        # --reference writes the q dtype, in the same file format
        rc, out, err, san = run([xattn, "run", d, "--reference", "-o", os.path.join(d, "ref_q.npy")])
        r = np.load(os.path.join(d, "ref_q.npy")) if rc == 0 else None
        check(rc == 0 and r.dtype == np.load(os.path.join(d, "q.npy")).dtype,
              f"oracle: {desc}: --reference writes q's dtype")


# ---- info, usage, external commands ------------------------------------------------
def commands(bindir, tmp):
    xattn = os.path.join(bindir, "xattn")
    rc, out, err, san = run([xattn, "info", "--json"])
    try:
        info = json.loads(out)
    except ValueError:
        info = {}
    check(rc == 0 and not san, "info --json exits 0")
    for key in ("isas", "variants", "layouts", "dtypes"):
        check(isinstance(info.get(key), list) and len(info[key]) > 0 and
              all(isinstance(x, str) and x for x in info[key]), f"info --json: '{key}' is a non-empty list")
    for key in ("config_header", "provenance", "commit"):
        check(isinstance(info.get(key), str) and info[key], f"info --json: '{key}' is a non-empty string")
    check(set(info.get("isas", [])) <= set(info.get("isas_built", [])), "info --json: runnable ISAs are built ones")
    check(sorted(info.get("dtypes", [])) == ["bf16", "f16", "f32"], "info --json: dtypes f32 bf16 f16")
    rc, out, err, san = run([xattn, "info"])
    check(rc == 0 and "config header" in out and not san, "info prints text")
    rc, out, err, san = run([xattn, "help"])
    check(rc == 0 and "run CASE_DIR" in out, "help prints usage")
    # the commit is taken at build time, not configure time: a build after a
    # commit without a re-configure must still name HEAD (it named the commit
    # of the last configure before)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        rc, out, err, san = run([xattn, "--version"])
        check(rc == 0 and f"(commit {head.stdout.strip()[:12]}" in out,
              f"--version names HEAD {head.stdout.strip()[:12]} (got {out.strip()!r})")
        check(info.get("commit", "").startswith(head.stdout.strip()[:12]), "info --json: commit is HEAD")
    else:
        print("note: the source tree is not a git work tree; the commit check is skipped")

    usage = [
        ([], "no command"), (["run"], "run without CASE_DIR"), (["run", "x", "--bogus"], "unknown option"),
        (["run", "x", "--threads", "0"], "--threads 0"), (["run", "x", "--threads", "2x"], "--threads 2x"),
        (["run", "x", "--threads"], "option without value"), (["run", "x", "y"], "two case folders"),
        (["run", "x", "--schedule", "fast"], "unknown schedule"), (["run", "x", "--reference", "--reference-f64"],
                                                                    "two reference flags"),
        (["info", "--yaml"], "info with an unknown flag"), (["no-such-command"], "unknown command"),
        (["../bin/sh"], "command name with a path"),
    ]
    for args, what in usage:
        rc, out, err, san = run([xattn] + args)
        check(rc == 2 and len(err.splitlines()) == 1 and not san,
              f"usage error: {what}: exit {rc}, stderr {err.strip()!r}")

    # bad options reach the library: one line naming the option
    from xattn.cases import make_case
    d = make_case.make_case(os.path.join(tmp, "opt_case"))
    for opt, val in (("--variant", "7x9"), ("--layout", "diagonal"), ("--isa", "z80")):
        rc, out, err, san = run([xattn, "run", d, opt, val])
        check(rc == 1 and len(err.splitlines()) == 1 and opt[2:] in err and not san,
              f"run {opt} {val}: refused naming it: {err.strip()!r}")

    # XATTN_ISA picks the ISA when --isa is not given; a bad one is refused by name
    rc, out, err, san = run([xattn, "run", d], dict(os.environ, XATTN_ISA="scalar"))
    check(rc == 0 and "isa scalar" in out and not san, f"XATTN_ISA=scalar runs scalar: {out.strip()!r}")
    rc, out, err, san = run([xattn, "run", d], dict(os.environ, XATTN_ISA="z80"))
    check(rc == 1 and len(err.splitlines()) == 1 and "XATTN_ISA" in err and not san,
          f"XATTN_ISA=z80 refused naming it: {err.strip()!r}")

    # git-style external commands: next to the binary, $XATTN_LIBEXEC, PATH
    ext = os.path.join(tmp, "libexec")
    os.makedirs(ext)
    with open(os.path.join(ext, "xattn-hello"), "w") as f:
        f.write('#!/bin/sh\necho "hello $* from $(basename "$XATTN")"\nexit 3\n')
    os.chmod(os.path.join(ext, "xattn-hello"), 0o755)
    env = dict(os.environ, XATTN_LIBEXEC="/nonexistent:" + ext)
    rc, out, err, san = run([xattn, "hello", "a", "b c"], env)
    check(rc == 3 and out.strip() == "hello a b c from xattn", f"external via XATTN_LIBEXEC: exit {rc}, {out.strip()!r}")
    env = dict(os.environ, PATH=ext + ":" + os.environ.get("PATH", ""))
    env.pop("XATTN_LIBEXEC", None)
    rc, out, err, san = run([xattn, "hello"], env)
    check(rc == 3 and out.startswith("hello"), f"external via PATH: exit {rc}")
    rc, out, err, san = run([xattn, "make-case", os.path.join(tmp, "via_dispatch"), "--mode", "tree"])
    check(rc == 0 and os.path.exists(os.path.join(tmp, "via_dispatch", "tree_mask.npy")),
          f"external next to the binary: xattn make-case: exit {rc} {err.strip()!r}")


# ---- paths that are not regular files ------------------------------------------
def paths(bindir, tmp):
    """`xattn run -o` replaced whatever was at the path (temp file + rename): a
    FIFO, a symlink, the case's own q.npy; a FIFO given as an input hung the
    loader forever. Each is refused with one line and left as it was."""
    from xattn.cases import make_case
    xattn = os.path.join(bindir, "xattn")
    case = make_case.make_case(os.path.join(tmp, "case"), "f32", "causal", prefix=[2], extend=[3])
    q = os.path.join(case, "q.npy")
    q_bytes = open(q, "rb").read()
    fifo = os.path.join(tmp, "out.fifo")
    os.mkfifo(fifo)
    target = os.path.join(tmp, "target.npy")
    with open(target, "wb") as f:
        f.write(b"keep")
    link = os.path.join(tmp, "link.npy")
    os.symlink(target, link)
    hard = os.path.join(tmp, "hard_q.npy")
    os.link(q, hard)
    for name, out, want in (("a FIFO", fifo, "FIFO"), ("a symlink", link, "symlink"),
                            ("the case's q.npy", q, "input of the case"),
                            ("a hard link to q.npy", hard, "input of the case"),
                            ("the case's case.json", os.path.join(case, "case.json"), "input of the case")):
        rc, out_, err, san = run([xattn, "run", case, "-o", out])
        lines = err.splitlines()
        kept = (os.path.islink(link) and open(target, "rb").read() == b"keep" and
                open(q, "rb").read() == q_bytes and os.path.exists(fifo) and not os.path.isfile(fifo))
        ok = rc == 1 and len(lines) == 1 and want in lines[0] and kept and not san
        check(ok, f"run -o {name}: refused and left alone (exit {rc}, stderr {err.strip()!r})")
    rc, out_, err, san = run([xattn, "run", case, "-o", os.path.join(tmp, "new.npy")])
    check(rc == 0 and os.path.isfile(os.path.join(tmp, "new.npy")), f"run -o a new file works (exit {rc} {err.strip()!r})")
    # FIFOs where the loader reads: refused at once instead of blocking in open()
    for victim in ("case.json", "q.npy"):
        d = os.path.join(tmp, "fifo_" + victim.replace(".", "_"))
        shutil.copytree(case, d)
        os.remove(os.path.join(d, victim))
        os.mkfifo(os.path.join(d, victim))
        try:
            p = subprocess.run([xattn, "run", d], capture_output=True, text=True, timeout=20)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        lines = err.splitlines()
        check(rc == 1 and len(lines) == 1 and victim in lines[0] and "FIFO" in lines[0],
              f"run: {victim} is a FIFO: refused without blocking (exit {rc}, stderr {err.strip()!r})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="folder holding xattn and xattn-oracle (PYTHONPATH holds the xattn package)")
    ap.add_argument("what", choices=["malformed", "oracle", "commands", "paths"])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="xattn-cli-")
    try:
        {"malformed": malformed, "oracle": oracle, "commands": commands, "paths": paths}[a.what](a.bin, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"cli {a.what}: {COUNT[0]} checks, {len(FAILS)} failures")
    return 1 if FAILS or COUNT[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
